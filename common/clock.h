#pragma once

// The one clock: what time it is, and how to wait. Code that keeps time
// (deadlines, retries, polling, phase durations) takes a Clock& — the
// binaries pass RealClock() — so its tests run on a simulated clock
// (tests/support/simulated_clock.h) and wait for nothing.

#include <functional>

#include "absl/time/time.h"

namespace clustercert {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // Returns at once for a duration that is zero or negative.
  virtual void SleepFor(absl::Duration duration) = 0;
  void SleepUntil(absl::Time when) { SleepFor(when - Now()); }
  // For the interfaces that take a callable; valid while the clock lives.
  std::function<absl::Time()> NowFunction() {
    return [this] { return Now(); };
  }
};

// The wall clock (absl::Now, absl::SleepFor); one for the process.
Clock& RealClock();

}  // namespace clustercert
