#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace clustercert::agent {

// The threads of the calls that last as long as their test (RunEndpoint,
// RunUplinkFlows): each gets a thread of its own, so it never holds a gRPC
// thread or a pool worker, and at most `max_running` run at once, so a
// caller looping on them cannot make the agent start thousands of threads.
// Finished threads are joined at the next Start and in the destructor.
class LongCalls {
 public:
  // Enough for every device of an 8-GPU/8-rail node in a test at once plus
  // uplink flows, far below what starves the host.
  static constexpr size_t kDefaultMaxRunning = 32;

  explicit LongCalls(size_t max_running = kDefaultMaxRunning);
  ~LongCalls();
  LongCalls(const LongCalls&) = delete;
  LongCalls& operator=(const LongCalls&) = delete;

  // Runs `run` on a new thread, or refuses (ResourceExhausted, naming the cap
  // and --max-long-calls) while `max_running` calls still run; then `run` is
  // not called and the caller answers the call with the status.
  absl::Status Start(std::function<void()> run);

  size_t running() const;
  size_t max_running() const { return max_running_; }

 private:
  struct Run {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void JoinFinishedLocked();

  const size_t max_running_;
  mutable std::mutex mutex_;
  std::vector<Run> runs_;
};

}  // namespace clustercert::agent
