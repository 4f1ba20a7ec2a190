#pragma once

#include <functional>
#include <vector>

#include "common/completion.h"

namespace clustercert::controller {

// Starts one asynchronous call per index and waits until every callback has
// run. `start(i, finished)` must call `finished()` exactly once, from any
// thread, after it has stored its result.
inline void FanOut(size_t count, const std::function<void(size_t, std::function<void()>)>& start) {
  if (count == 0) return;
  Completion pending(count);
  for (size_t i = 0; i < count; ++i) start(i, [&pending] { pending.Notify(); });
  pending.Wait();
}

}  // namespace clustercert::controller
