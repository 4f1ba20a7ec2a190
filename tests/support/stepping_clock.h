#pragma once

// A Clock for tests of code that waits in poll() on real sockets or pipes:
// every look at the time finds `step` more of it gone, as if the peer had
// stayed silent that long between two looks. A loop that judges a deadline
// or a no-progress limit in whole steps then reaches it after a known number
// of looks, without the kernel's timers having to run it out. Sleeps move
// time as SimulatedClock's do. Thread-safe.

#include <mutex>

#include "absl/time/time.h"
#include "common/clock.h"

namespace clustercert::testing {

class SteppingClock : public Clock {
 public:
  explicit SteppingClock(absl::Duration step,
                         absl::Time start = absl::FromUnixSeconds(1'790'000'000))
      : step_(step), now_(start) {}

  // The time now; the next look finds `step` later.
  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mutex_);
    const absl::Time now = now_;
    now_ += step_;
    return now;
  }
  void SleepFor(absl::Duration duration) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (duration > absl::ZeroDuration()) now_ += duration;
  }
  // The time the next look will return, without looking.
  absl::Time Peek() {
    std::lock_guard<std::mutex> lock(mutex_);
    return now_;
  }

 private:
  std::mutex mutex_;
  const absl::Duration step_;
  absl::Time now_;
};

}  // namespace clustercert::testing
