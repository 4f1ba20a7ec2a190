// The class a verbs test sends in (fabric.roce.dscp/ecn -> the RoCE traffic
// class, fabric.infiniband.service_level) and pairwise.incast: defaults,
// accepted values, and rejections that name the key, the value and the rule.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_parser.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

constexpr char kLatencyLine[] = "max_latency_us: 5";
constexpr char kRoceLine[] =
    "  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}";

// The seed's recipe: DSCP 26 with ECN-capable transport is traffic class 106
// (TOS 0x6a); without ECN the two low bits stay 0.
TEST(TrafficClassTest, DscpAndEcnMakeTheGrhTrafficClass) {
  RoceSettings roce;
  EXPECT_EQ(RoceTrafficClass(roce), 106);
  roce.ecn = false;
  EXPECT_EQ(RoceTrafficClass(roce), 104);
  roce.dscp = 0;
  EXPECT_EQ(RoceTrafficClass(roce), 0);
  roce.dscp = 63;
  roce.ecn = true;
  EXPECT_EQ(RoceTrafficClass(roce), 254);
}

TEST(TrafficClassTest, InfinibandServiceLevelIsReadAndDefaultsToZero) {
  EXPECT_EQ(InfinibandSettings{}.service_level, 0);
  const std::string ib = Replace(Replace(BasePlan(), kRoceLine, "  infiniband: {service_level: 5}"),
                                 "type: roce", "type: infiniband");
  absl::StatusOr<Plan> plan = ParsePlan(ib, kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fabric.infiniband.service_level, 5);
}

TEST(IncastKeysTest, OffUnlessTheSectionIsThereAndDefaultsWhenItIs) {
  absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->pairwise.incast.enabled);

  plan = ParsePlan(Replace(BasePlan(), kLatencyLine, std::string(kLatencyLine) + "\n  incast: {}"),
                   kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->pairwise.incast.enabled);
  EXPECT_EQ(plan->pairwise.incast.senders, 3);
  EXPECT_EQ(plan->pairwise.incast.max_rounds, 64);
  EXPECT_DOUBLE_EQ(plan->pairwise.incast.min_fraction_of_line_rate, 0.90);
  EXPECT_DOUBLE_EQ(plan->pairwise.incast.min_fairness, 0.50);

  plan = ParsePlan(
      Replace(BasePlan(), kLatencyLine,
              std::string(kLatencyLine) + "\n  incast: {senders: 7, max_rounds: 2, "
                                          "min_fraction_of_line_rate: 0.75, min_fairness: 0.8}"),
      kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->pairwise.incast.senders, 7);
  EXPECT_EQ(plan->pairwise.incast.max_rounds, 2);
  EXPECT_DOUBLE_EQ(plan->pairwise.incast.min_fraction_of_line_rate, 0.75);
  EXPECT_DOUBLE_EQ(plan->pairwise.incast.min_fairness, 0.8);
}

const std::vector<RejectCase> kCases = {
    {"ServiceLevelAbove15",
     {{kRoceLine, "  infiniband: {service_level: 16}"}, {"type: roce", "type: infiniband"}},
     "level: |16}",
     "fabric.infiniband.service_level is 16; it must be an integer from 0 to 15 (the IB service "
     "level the verbs tests send on; the subnet manager's SL-to-VL table maps it to a virtual "
     "lane)"},
    {"InfinibandOnRoce",
     {{kRoceLine, std::string(kRoceLine) + "\n  infiniband: {service_level: 1}"}},
     "infiniband: |{",
     "fabric.infiniband is set but fabric.type is roce; InfiniBand settings apply only to type "
     "infiniband (remove fabric.infiniband)."},
    {"IncastOneSender",
     {{kLatencyLine, std::string(kLatencyLine) + "\n  incast: {senders: 1}"}},
     "1}",
     "pairwise.incast.senders is 1; it must be an integer from 2 to 64 (k: how many nodes write "
     "to one receiver at once; a smaller cluster uses all its other nodes)"},
    {"IncastNoRounds",
     {{kLatencyLine, std::string(kLatencyLine) + "\n  incast: {max_rounds: 0}"}},
     "rounds: |0}",
     "pairwise.incast.max_rounds is 0; it must be an integer from 1 to 4096"},
    {"IncastFractionAboveOne",
     {{kLatencyLine, std::string(kLatencyLine) + "\n  incast: {min_fraction_of_line_rate: 1.5}"}},
     "1.5}",
     "pairwise.incast.min_fraction_of_line_rate is 1.5; it must be a number above 0 and at most 1"},
    {"IncastUnknownKey",
     {{kLatencyLine, std::string(kLatencyLine) + "\n  incast: {sender: 3}"}},
     "|sender: 3",
     "pairwise.incast.sender is not a known key; did you mean senders?"},
};

class TrafficClassAndIncastRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(TrafficClassAndIncastRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Plan, TrafficClassAndIncastRejectionTest, ::testing::ValuesIn(kCases),
                         CaseName);

}  // namespace
}  // namespace clustercert::controller::plan::testing
