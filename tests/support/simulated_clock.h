#pragma once

// A Clock for tests: time stands still until a sleep (or Advance) moves it,
// so deadlines, retries and polling loops run at once and always the same
// way. Thread-safe; each SleepFor moves the shared time forward.

#include <mutex>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"

namespace clustercert::testing {

class SimulatedClock : public Clock {
 public:
  explicit SimulatedClock(absl::Time start = absl::FromUnixSeconds(1'790'000'000)) : now_(start) {}

  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return now_;
  }
  void SleepFor(absl::Duration duration) override {
    std::lock_guard<std::mutex> lock(mutex_);
    sleeps_.push_back(duration);
    if (duration > absl::ZeroDuration()) now_ += duration;
  }
  void Advance(absl::Duration duration) {
    std::lock_guard<std::mutex> lock(mutex_);
    now_ += duration;
  }
  // Every SleepFor so far, in order (the retry back-offs, the poll intervals).
  std::vector<absl::Duration> sleeps() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleeps_;
  }

 private:
  std::mutex mutex_;
  absl::Time now_;
  std::vector<absl::Duration> sleeps_;
};

}  // namespace clustercert::testing
