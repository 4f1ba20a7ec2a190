// fabric.routing: whether the bgp.* checks judge the nodes (bgp), follow the
// agents (auto, the default) or never run (l2).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kMtuLine[] = "  min_netdev_mtu: 9000\n";

absl::StatusOr<Plan> WithRouting(const std::string& line) {
  return ParsePlan(Replace(BasePlan(), kMtuLine, std::string(kMtuLine) + line), kFile);
}

TEST(FabricRoutingTest, DefaultIsAuto) {
  auto plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fabric.routing, FabricRouting::kAuto);
  EXPECT_STREQ(FabricRoutingName(plan->fabric.routing), "auto");
}

TEST(FabricRoutingTest, EachValueParses) {
  for (const auto& [text, routing] :
       {std::pair{"bgp", FabricRouting::kBgp}, std::pair{"l2", FabricRouting::kL2},
        std::pair{"auto", FabricRouting::kAuto}}) {
    auto plan = WithRouting(std::string("  routing: ") + text + "\n");
    ASSERT_TRUE(plan.ok()) << text << ": " << plan.status();
    EXPECT_EQ(plan->fabric.routing, routing) << text;
    EXPECT_EQ(FabricRoutingName(routing), std::string(text));
  }
}

TEST(FabricRoutingTest, AnotherValueIsAnErrorAtItsLine) {
  auto plan = WithRouting("  routing: ospf\n");
  ASSERT_FALSE(plan.ok());
  // The line after min_netdev_mtu (line 6), the value's column.
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("plans/t.yaml:7:12: fabric.routing"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("bgp"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("l2"));
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
