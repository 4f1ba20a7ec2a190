#pragma once

#include <utility>

#include "absl/status/statusor.h"
#include "common/completion.h"
#include "controller/client/agent_client.h"

namespace clustercert::controller {

// Waits for one asynchronous agent call. For the pairwise phase, whose steps
// for one pair are strictly sequential (prepare, connect, run, close) while
// the pairs of a round proceed side by side on their own threads.
template <typename Response, typename Start>
absl::StatusOr<Response> CallAndWait(Start start) {
  Completion done;
  absl::StatusOr<Response> result = absl::UnknownError("no answer");
  start([&](absl::StatusOr<Response> answer, CallTiming) {
    result = std::move(answer);
    done.Notify();
  });
  done.Wait();
  return result;
}

}  // namespace clustercert::controller
