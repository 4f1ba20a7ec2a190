#include "common/clock.h"

#include "absl/time/clock.h"

namespace clustercert {
namespace {

class WallClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepFor(absl::Duration duration) override {
    if (duration > absl::ZeroDuration()) absl::SleepFor(duration);
  }
};

}  // namespace

Clock& RealClock() {
  static auto* const clock = new WallClock();
  return *clock;
}

}  // namespace clustercert
