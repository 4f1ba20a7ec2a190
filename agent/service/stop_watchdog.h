#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace clustercert::agent {

// Ends the process when a stop takes longer than its deadline.
//
// After SIGTERM the agent shuts gRPC down (calls get a deadline), then its
// parts' destructors join their threads. A worker stuck in a read that never
// returns (a FIFO where a sysfs file should be, a hung mount) can neither be
// joined nor cancelled, and gRPC's shutdown waits for that worker's call:
// systemd would wait its whole TimeoutStopSec and then kill it. Armed when
// the stop begins, this runs `expire` (by default a log line and _exit(1))
// once the deadline passed, from a thread of its own. Destroying it, as a
// clean exit does, disarms it.
class StopWatchdog {
 public:
  // `expire` runs at most once, on the watchdog's thread.
  explicit StopWatchdog(std::function<void()> expire);
  ~StopWatchdog();
  StopWatchdog(const StopWatchdog&) = delete;
  StopWatchdog& operator=(const StopWatchdog&) = delete;

  // Starts the countdown; a second call does nothing.
  void Arm(absl::Duration deadline);

  // The default `expire`: logs that the stop overran `deadline` and exits
  // with status 1 without running destructors (which would join the stuck
  // thread).
  static std::function<void()> ExitProcess(absl::Duration deadline);

 private:
  std::function<void()> expire_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::thread thread_;
};

}  // namespace clustercert::agent
