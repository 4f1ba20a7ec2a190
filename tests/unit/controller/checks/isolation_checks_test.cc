// Other fabrics kept apart from the training data plane: routes and probes.
#include "controller/checks/isolation_checks.h"

#include <vector>

#include "controller/checks/check_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using testing::Get;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

plan::Plan PlanWithInference(bool probe = true) {
  plan::Plan plan = testing::RocePlan();
  plan::OtherFabric inference;
  inference.name = "inference";
  inference.subnets = {"10.30.0.0/16"};
  if (probe) inference.probe = {"10.30.0.10:8000"};
  plan.other_fabrics.push_back(inference);
  return plan;
}

// What a healthy agent answers: the routes into 10.30/16 go out the
// management side, every probe from the rails times out.
v1::Inventory IsolatedInventory() {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::FabricIsolation* isolation = inventory.mutable_isolation();
  isolation->add_data_netdevs("enp65s0np0");
  isolation->add_data_netdevs("enp193s0np0");
  isolation->set_routes_seen(12);
  v1::Route* route = isolation->add_routes();
  route->set_destination("0.0.0.0/0");
  route->set_netdev("eno1");
  route->set_gateway("192.168.100.1");
  route->set_table(254);
  route->set_fabric("inference");
  route->set_fabric_subnet("10.30.0.0/16");
  for (const char* netdev : {"enp65s0np0", "enp193s0np0"}) {
    v1::ReachProbe* probe = isolation->add_probes();
    probe->set_netdev(netdev);
    probe->set_target("10.30.0.10:8000");
    probe->set_fabric("inference");
    probe->set_outcome("timeout");
  }
  return inventory;
}

std::vector<v1::Finding> Findings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendIsolationChecks(context, findings);
  return findings;
}

TEST(IsolationChecksTest, NoOtherFabricsMakesNoFinding) {
  EXPECT_THAT(Findings(testing::RocePlan(), IsolatedInventory()), IsEmpty());
}

TEST(IsolationChecksTest, RoutesThroughManagementAndUnansweredProbesPass) {
  const auto findings = Findings(PlanWithInference(), IsolatedInventory());
  const v1::Finding& routes = Get(findings, "isolation.routes");
  EXPECT_EQ(routes.status(), v1::Finding::pass);
  EXPECT_THAT(routes.message(), HasSubstr("of the 12 routes in its tables, none leads"));
  const v1::Finding& probe = Get(findings, "isolation.probe");
  EXPECT_EQ(probe.status(), v1::Finding::pass);
  EXPECT_EQ(probe.observed(), "2 probes, none answered (timeout)");
}

TEST(IsolationChecksTest, DefaultRouteThroughARailFailsNamingIt) {
  v1::Inventory inventory = IsolatedInventory();
  inventory.mutable_isolation()->mutable_routes(0)->set_netdev("enp193s0np0");
  const v1::Finding routes = Get(Findings(PlanWithInference(), inventory), "isolation.routes");
  EXPECT_EQ(routes.status(), v1::Finding::fail);
  EXPECT_EQ(routes.severity(), v1::Finding::error);
  EXPECT_THAT(routes.observed(),
              HasSubstr("route 0.0.0.0/0 dev enp193s0np0 via 192.168.100.1 (table 254) reaches "
                        "inference's 10.30.0.0/16"));
  EXPECT_THAT(routes.remedy(), HasSubstr("ip route del"));
}

TEST(IsolationChecksTest, DataNetdevAddressInsideTheOtherFabricFails) {
  v1::Inventory inventory = IsolatedInventory();
  testing::Netdev(inventory, "enp65s0np0").add_cidrs("10.30.1.1/24");
  const v1::Finding routes = Get(Findings(PlanWithInference(), inventory), "isolation.routes");
  EXPECT_EQ(routes.status(), v1::Finding::fail);
  EXPECT_THAT(routes.observed(), HasSubstr("enp65s0np0 holds 10.30.1.1/24, inside inference's"));
}

TEST(IsolationChecksTest, AnsweredProbeFailsEvenWhenRefused) {
  v1::Inventory inventory = IsolatedInventory();
  v1::ReachProbe* probe = inventory.mutable_isolation()->mutable_probes(1);
  probe->set_outcome("refused");
  probe->set_reached(true);
  probe->set_micros(400);
  const v1::Finding finding = Get(Findings(PlanWithInference(), inventory), "isolation.probe");
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.observed(),
            "enp193s0np0 reached 10.30.0.10:8000 (inference): refused in 0.4 ms");
}

TEST(IsolationChecksTest, ProbeThatCouldNotBeSentIsUnknownNotPass) {
  v1::Inventory inventory = IsolatedInventory();
  v1::ReachProbe* probe = inventory.mutable_isolation()->mutable_probes(0);
  probe->set_outcome("error");
  probe->set_detail("cannot bind to enp65s0np0: Operation not permitted");
  const v1::Finding finding = Get(Findings(PlanWithInference(), inventory), "isolation.probe");
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_THAT(finding.observed(), HasSubstr("cannot bind to enp65s0np0"));
  EXPECT_THAT(finding.remedy(), HasSubstr("CAP_NET_RAW"));
}

TEST(IsolationChecksTest, WithoutProbeTargetsOnlyRoutesAreJudged) {
  const auto findings = Findings(PlanWithInference(/*probe=*/false), IsolatedInventory());
  EXPECT_EQ(Get(findings, "isolation.routes").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "isolation.probe").status(), v1::Finding::skipped);
}

TEST(IsolationChecksTest, AgentThatDidNotAnswerIsUnknownNeverPass) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  const auto findings = Findings(PlanWithInference(), inventory);
  EXPECT_EQ(Get(findings, "isolation.routes").status(), v1::Finding::unknown);
  EXPECT_EQ(Get(findings, "isolation.probe").status(), v1::Finding::unknown);
}

TEST(IsolationChecksTest, UnreadableRoutingTableIsUnknownWithTheReason) {
  v1::Inventory inventory = IsolatedInventory();
  v1::Unknown* unknown = inventory.mutable_isolation()->add_unknowns();
  unknown->set_field("routes");
  unknown->set_path("rtnetlink RTM_GETROUTE");
  unknown->set_reason("Operation not permitted");
  const v1::Finding routes = Get(Findings(PlanWithInference(), inventory), "isolation.routes");
  EXPECT_EQ(routes.status(), v1::Finding::unknown);
  EXPECT_THAT(routes.observed(), HasSubstr("Operation not permitted"));
}

}  // namespace
}  // namespace clustercert::controller::checks
