#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

#include "absl/time/time.h"
#include "controller/phases/run_stop.h"

namespace clustercert::controller {

// Turns SIGINT and SIGTERM into a RunStop request with no logic in a signal
// handler: the constructor blocks both signals in the calling thread before
// the run starts any thread (gRPC's included, which inherit the mask), and
// one thread of ours takes them with sigtimedwait. The first signal asks the
// run to stop (it then releases the agents' leases and writes the partial
// certificate); a second one exits at once with 128 + its number, for a user
// who will not wait for that.
class InterruptWatcher {
 public:
  InterruptWatcher(RunStop& stop, std::function<absl::Time()> now);
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // The exit status a stopped run ends with (130 for SIGINT, 143 for
  // SIGTERM, as a shell reports them), or 0 while no signal came.
  int exit_code() const;

 private:
  void Watch();

  RunStop& stop_;
  std::function<absl::Time()> now_;
  sigset_t signals_;
  sigset_t previous_mask_;
  std::atomic<bool> quit_{false};
  std::atomic<int> signal_{0};
  std::thread thread_;
};

}  // namespace clustercert::controller
