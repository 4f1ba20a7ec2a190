// pairwise.max_raw_ber: the raw (pre-FEC) BER a receiving port may show over
// a bandwidth cell before the cell fails (pair_verdict.h WithCounterVerdict).
// Defaults to IEEE 802.3's PAM4 pre-FEC requirement, 2.4e-4; accepts
// exponents; rejects 0, negatives, more than 1 and what is not a number.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_parser.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

constexpr char kLatencyLine[] = "max_latency_us: 5";

absl::StatusOr<Plan> WithRawBer(const std::string& value) {
  return ParsePlan(
      Replace(BasePlan(), kLatencyLine, std::string(kLatencyLine) + "\n  max_raw_ber: " + value),
      kFile);
}

TEST(MaxRawBerTest, DefaultsToTheIeeePam4PreFecRequirement) {
  EXPECT_DOUBLE_EQ(Pairwise{}.max_raw_ber, 2.4e-4);
  absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(plan->pairwise.max_raw_ber, 2.4e-4);
}

TEST(MaxRawBerTest, AcceptsExponentsAndOne) {
  for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
           {"1e-6", 1e-6}, {"0.000001", 1e-6}, {"2.4e-4", 2.4e-4}, {"1", 1}}) {
    absl::StatusOr<Plan> plan = WithRawBer(text);
    ASSERT_TRUE(plan.ok()) << text << ": " << plan.status();
    EXPECT_DOUBLE_EQ(plan->pairwise.max_raw_ber, value) << text;
  }
}

TEST(MaxRawBerTest, RejectsZeroNegativeAboveOneAndText) {
  for (const char* text : {"0", "-1e-6", "2", "lots", ".inf", "[1]"}) {
    absl::StatusOr<Plan> plan = WithRawBer(text);
    ASSERT_FALSE(plan.ok()) << text;
    EXPECT_NE(plan.status().message().find("pairwise.max_raw_ber"), std::string::npos)
        << plan.status();
  }
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
