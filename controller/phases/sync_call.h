#pragma once

#include <utility>

#include "absl/status/statusor.h"
#include "common/completion.h"
#include "controller/client/agent_client.h"

namespace clustercert::controller {

// Waits for one asynchronous agent call, for code that makes one call at a
// time (the connect phase's time exchanges, the uplink flows). Code that
// drives many agents at once continues on a CallLoop instead.
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
