#include "agent/service/stop_watchdog.h"

#include <chrono>
#include <future>

#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

// Issue 34: a worker stuck in open() on a FIFO made the agent ignore
// SIGTERM (its pool's destructor joined the stuck thread). Armed at the stop,
// the watchdog acts once the deadline passed, whatever the other threads do.
TEST(StopWatchdogTest, ExpiresOnceTheStopDeadlinePassed) {
  std::promise<std::chrono::steady_clock::time_point> expired;
  auto when = expired.get_future();
  StopWatchdog watchdog([&expired] { expired.set_value(std::chrono::steady_clock::now()); });
  const auto armed = std::chrono::steady_clock::now();
  watchdog.Arm(absl::Milliseconds(200));
  watchdog.Arm(absl::Hours(1));  // a second stop signal changes nothing
  ASSERT_EQ(when.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_GE(when.get() - armed, std::chrono::milliseconds(200));
}

TEST(StopWatchdogTest, AStopThatFinishesInTimeDisarmsIt) {
  bool expired = false;
  {
    StopWatchdog watchdog([&expired] { expired = true; });
    watchdog.Arm(absl::Seconds(30));
  }  // the clean exit: destroyed before the deadline, at once
  EXPECT_FALSE(expired);
  {
    StopWatchdog never_armed([&expired] { expired = true; });
  }
  EXPECT_FALSE(expired);
}

}  // namespace
}  // namespace clustercert::agent
