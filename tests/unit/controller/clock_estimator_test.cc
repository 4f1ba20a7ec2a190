#include "controller/phases/clock_estimator.h"

#include <gtest/gtest.h>

#include <vector>

namespace clustercert::controller {
namespace {

// An exchange against an agent whose clock is `offset` ahead, with the
// request taking `out` and the answer `back` on the wire and the agent
// `processing` to answer.
TimeExchange Exchange(absl::Time t1, absl::Duration offset, absl::Duration out, absl::Duration back,
                      absl::Duration processing = absl::Microseconds(20)) {
  const absl::Time arrive = t1 + out;
  const absl::Time leave = arrive + processing;
  return TimeExchange{t1, arrive + offset, leave + offset, leave + back};
}

TEST(ClockEstimatorTest, SymmetricPathGivesTheInjectedOffsetExactly) {
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  for (absl::Duration offset :
       {absl::ZeroDuration(), absl::Milliseconds(250), absl::Milliseconds(-40)}) {
    auto estimate =
        EstimateClock({Exchange(t, offset, absl::Microseconds(100), absl::Microseconds(100))});
    ASSERT_TRUE(estimate.ok());
    EXPECT_EQ(estimate->offset, offset);
    EXPECT_EQ(estimate->delay, absl::Microseconds(200));
    EXPECT_EQ(estimate->uncertainty(), absl::Microseconds(100));
  }
}

TEST(ClockEstimatorTest, KeepsTheLowestDelayExchange) {
  // Queueing on the way out skews an exchange by half its extra delay; the
  // quiet exchange in the middle is the one to trust.
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  const absl::Duration offset = absl::Milliseconds(250);
  std::vector<TimeExchange> exchanges = {
      Exchange(t, offset, absl::Milliseconds(30), absl::Microseconds(100)),
      Exchange(t + absl::Milliseconds(50), offset, absl::Microseconds(100),
               absl::Microseconds(120)),
      Exchange(t + absl::Milliseconds(90), offset, absl::Microseconds(100), absl::Milliseconds(12)),
  };
  auto estimate = EstimateClock(exchanges);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(estimate->exchanges, 3);
  EXPECT_EQ(estimate->delay, absl::Microseconds(220));
  // Asymmetry of 20 us shifts the estimate by 10 us, within the uncertainty.
  EXPECT_LE(absl::AbsDuration(estimate->offset - offset), estimate->uncertainty());
  EXPECT_EQ(estimate->offset, offset - absl::Microseconds(10));
}

TEST(ClockEstimatorTest, ErrorIsBoundedByHalfTheDelayWhateverTheAsymmetry) {
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  const absl::Duration offset = absl::Milliseconds(-7);
  auto estimate = EstimateClock({Exchange(t, offset, absl::Milliseconds(3), absl::ZeroDuration())});
  ASSERT_TRUE(estimate.ok());
  EXPECT_LE(absl::AbsDuration(estimate->offset - offset), estimate->uncertainty());
}

TEST(ClockEstimatorTest, RejectsNoExchangesAndAControllerClockStep) {
  EXPECT_FALSE(EstimateClock({}).ok());
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  TimeExchange stepped{t, t, t, t - absl::Seconds(1)};
  auto estimate = EstimateClock({stepped});
  ASSERT_FALSE(estimate.ok());
  EXPECT_NE(estimate.status().message().find("stepped"), absl::string_view::npos);
}

TEST(ClockEstimatorTest, NegativeDelayCountsAsZero) {
  // The agent's clock stepped forward between t2 and t3.
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  TimeExchange x{t, t + absl::Microseconds(50), t + absl::Milliseconds(5),
                 t + absl::Microseconds(100)};
  auto estimate = EstimateClock({x});
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(estimate->delay, absl::ZeroDuration());
}

}  // namespace
}  // namespace clustercert::controller
