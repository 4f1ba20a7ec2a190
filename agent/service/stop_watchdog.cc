#include "agent/service/stop_watchdog.h"

#include <unistd.h>

#include <chrono>
#include <utility>

#include "spdlog/spdlog.h"

namespace clustercert::agent {

StopWatchdog::StopWatchdog(std::function<void()> expire) : expire_(std::move(expire)) {}

StopWatchdog::~StopWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    disarmed_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StopWatchdog::Arm(absl::Duration deadline) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable() || disarmed_) return;
  thread_ = std::thread([this, deadline] {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool disarmed =
        wake_.wait_for(lock, absl::ToChronoNanoseconds(deadline), [this] { return disarmed_; });
    if (!disarmed) expire_();
  });
}

std::function<void()> StopWatchdog::ExitProcess(absl::Duration deadline) {
  return [deadline] {
    spdlog::error(
        "node-agent did not stop within {} of the stop signal (a call's work is stuck, e.g. "
        "reading a file that never ends); exiting without waiting for it",
        absl::FormatDuration(deadline));
    spdlog::default_logger()->flush();
    ::_exit(1);
  };
}

}  // namespace clustercert::agent
