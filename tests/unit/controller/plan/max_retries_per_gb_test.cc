// pairwise.max_retries_per_gb: the retransmission counter rises per GB a cell
// may show before it warns (pair_verdict.h WithCounterVerdict). Defaults to
// 1, accepts 0 (any retry warns) and fractions, rejects what is not a
// number of at least 0.

#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_parser.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

constexpr char kLatencyLine[] = "max_latency_us: 5";

absl::StatusOr<Plan> WithRetries(const std::string& value) {
  return ParsePlan(Replace(BasePlan(), kLatencyLine,
                           std::string(kLatencyLine) + "\n  max_retries_per_gb: " + value),
                   kFile);
}

TEST(MaxRetriesPerGbTest, DefaultsToOnePerGb) {
  EXPECT_DOUBLE_EQ(Pairwise{}.max_retries_per_gb, 1.0);
  absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(plan->pairwise.max_retries_per_gb, 1.0);
}

TEST(MaxRetriesPerGbTest, AcceptsZeroFractionsAndLargeValues) {
  for (const auto& [text, value] :
       std::vector<std::pair<std::string, double>>{{"0", 0}, {"0.25", 0.25}, {"20", 20}}) {
    absl::StatusOr<Plan> plan = WithRetries(text);
    ASSERT_TRUE(plan.ok()) << text << ": " << plan.status();
    EXPECT_DOUBLE_EQ(plan->pairwise.max_retries_per_gb, value) << text;
  }
}

const std::vector<RejectCase> kRetryCases = {
    {"Negative",
     {{kLatencyLine, "max_latency_us: 5\n  max_retries_per_gb: -1"}},
     "-1",
     "pairwise.max_retries_per_gb is -1; it must be a number of at least 0 (retransmission or "
     "out-of-sequence counter rises per GB a pair moves before its cell warns; e.g. 1)"},
    {"NotANumber",
     {{kLatencyLine, "max_latency_us: 5\n  max_retries_per_gb: lots"}},
     "lots",
     "pairwise.max_retries_per_gb is \"lots\"; it must be a number of at least 0"},
    {"Infinite",
     {{kLatencyLine, "max_latency_us: 5\n  max_retries_per_gb: .inf"}},
     ".inf",
     "pairwise.max_retries_per_gb is \".inf\"; it must be a number of at least 0"},
    {"List",
     {{kLatencyLine, "max_latency_us: 5\n  max_retries_per_gb: [1]"}},
     "|[1]",
     "pairwise.max_retries_per_gb is a list; it must be a number of at least 0"},
};

class MaxRetriesRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(MaxRetriesRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Pairwise, MaxRetriesRejectionTest, ::testing::ValuesIn(kRetryCases),
                         CaseName);

}  // namespace
}  // namespace clustercert::controller::plan::testing
