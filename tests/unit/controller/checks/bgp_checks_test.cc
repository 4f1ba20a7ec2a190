// The bgp.* checks on BGP states made by the agent's own collector from the
// vtysh JSON captured in the FRR lab (tests/fixtures/frr/): host1 peering
// its leaf unnumbered on fab0 with its data address on lo, healthy, with the
// leaf's session shut down, and with the leaf sending nothing.
#include "controller/checks/bgp_checks.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/inventory/frr_collector.h"
#include "controller/checks/check_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_command_runner.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using agent::inventory::FrrCollector;
using testing::Get;
using ::testing::HasSubstr;

std::string Fixture(const std::string& scenario, const std::string& file) {
  std::ifstream in(std::filesystem::path(CLUSTERCERT_FIXTURES) / "frr" / scenario / file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the agent reports for a captured scenario, through the real collector.
v1::BgpState CollectedState(const std::string& scenario) {
  clustercert::testing::FakeCommandRunner runner;
  for (absl::string_view command :
       {FrrCollector::kSummaryCommand, FrrCollector::kOriginatedIpv4Command,
        FrrCollector::kOriginatedIpv6Command}) {
    const std::string file = command == FrrCollector::kSummaryCommand ? "summary.json"
                             : command == FrrCollector::kOriginatedIpv4Command
                                 ? "originated-ipv4.json"
                                 : "originated-ipv6.json";
    runner.AnswerText(absl::StrCat("vtysh -c ", command), Fixture(scenario, file));
  }
  return FrrCollector(runner, {}).Collect();
}

plan::Plan HostPlan(plan::FabricRouting routing = plan::FabricRouting::kAuto) {
  plan::Plan plan;
  plan.fabric.type = plan::FabricType::kEthernet;
  plan.fabric.routing = routing;
  plan::Node node;
  node.name = "host1";
  node.agent = "127.0.0.1:7070";
  node.data_ip = "10.203.0.1";
  plan.nodes.push_back(node);
  return plan;
}

// host1 as the lab builds it: the data /32 on lo, fab0 the unnumbered link.
v1::Inventory HostInventory(const std::string& scenario) {
  v1::Inventory inventory;
  v1::Netdev* lo = inventory.add_netdevs();
  lo->set_name("lo");
  lo->set_operstate("unknown");
  lo->add_ipv4("127.0.0.1");
  lo->add_ipv4("10.203.0.1");
  v1::Netdev* fab0 = inventory.add_netdevs();
  fab0->set_name("fab0");
  fab0->set_operstate("up");
  if (!scenario.empty()) *inventory.mutable_bgp() = CollectedState(scenario);
  return inventory;
}

std::vector<v1::Finding> Findings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendBgpChecks(context, findings);
  return findings;
}

TEST(BgpChecksTest, HealthyUnnumberedHostPassesEveryCheck) {
  const auto findings = Findings(HostPlan(), HostInventory("healthy-host1"));
  EXPECT_THAT(testing::NonPassing(findings), ::testing::IsEmpty());
  const v1::Finding& neighbor = Get(findings, "bgp.neighbor", "fab0");
  EXPECT_THAT(neighbor.message(), HasSubstr("host1 fab0 has BGP neighbour leaf (AS 65001) "
                                            "Established"));
  EXPECT_EQ(Get(findings, "bgp.prefixes", "fab0").observed(), "2");
  EXPECT_EQ(Get(findings, "bgp.announced").observed(), "10.203.0.1/32");
}

TEST(BgpChecksTest, LeafShuttingTheSessionFailsTheNeighbourNamingTheInterface) {
  const auto findings = Findings(HostPlan(), HostInventory("shutdown-host1"));
  const v1::Finding& neighbor = Get(findings, "bgp.neighbor", "fab0");
  EXPECT_EQ(neighbor.status(), v1::Finding::fail);
  EXPECT_EQ(neighbor.observed(), "Active");
  EXPECT_THAT(neighbor.message(), HasSubstr("host1 fab0's BGP session with neighbour leaf"));
  EXPECT_THAT(neighbor.message(), HasSubstr("is Active, not Established"));
  EXPECT_THAT(neighbor.remedy(), HasSubstr("interface remote-as external"));
  EXPECT_THAT(neighbor.remedy(), HasSubstr("Idle (Admin)"));
  EXPECT_EQ(Get(findings, "bgp.prefixes", "fab0").status(), v1::Finding::skipped);
  EXPECT_EQ(Get(findings, "bgp.announced").status(), v1::Finding::pass)
      << "the node still originates its address";
}

TEST(BgpChecksTest, EstablishedButNothingReceivedFailsPrefixes) {
  const auto findings = Findings(HostPlan(), HostInventory("noprefixes-host1"));
  EXPECT_EQ(Get(findings, "bgp.neighbor", "fab0").status(), v1::Finding::pass);
  const v1::Finding& prefixes = Get(findings, "bgp.prefixes", "fab0");
  EXPECT_EQ(prefixes.status(), v1::Finding::fail);
  EXPECT_EQ(prefixes.observed(), "0");
  EXPECT_THAT(prefixes.remedy(), HasSubstr("advertised-routes"));
}

TEST(BgpChecksTest, DataIpNotOriginatedFailsAnnouncedWithTheNetworkLine) {
  plan::Plan plan = HostPlan();
  plan.nodes[0].data_ip = "10.203.0.9";
  const v1::Finding announced =
      Get(Findings(plan, HostInventory("healthy-host1")), "bgp.announced");
  EXPECT_EQ(announced.status(), v1::Finding::fail);
  EXPECT_EQ(announced.observed(), "originates 10.203.0.1/32");
  EXPECT_THAT(announced.remedy(), HasSubstr("`router bgp 65101`"));
  EXPECT_THAT(announced.remedy(), HasSubstr("network 10.203.0.9/32"));
}

TEST(BgpChecksTest, RailNetdevWithoutANeighbourFails) {
  plan::Plan plan = testing::RocePlan();
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::BgpState* bgp = inventory.mutable_bgp();
  *bgp = CollectedState("healthy-host1");
  bgp->mutable_neighbors(0)->set_peer("enp65s0np0");  // rail mlx5_0's netdev
  const auto findings = Findings(plan, inventory);
  EXPECT_EQ(Get(findings, "bgp.neighbor", "enp65s0np0").status(), v1::Finding::pass);
  const v1::Finding& missing = Get(findings, "bgp.neighbor", "enp193s0np0");
  EXPECT_EQ(missing.status(), v1::Finding::fail);
  EXPECT_THAT(missing.message(), HasSubstr("FRR has no BGP neighbour on enp193s0np0"));
  EXPECT_THAT(missing.remedy(),
              HasSubstr("`neighbor enp193s0np0 interface remote-as external` under `router bgp "
                        "65101`"));
}

// A numbered eBGP session (the leaf's address in the rail's subnet) counts
// for that rail: the fabric is routed, only not unnumbered.
TEST(BgpChecksTest, NumberedNeighbourInTheRailsSubnetCountsForIt) {
  plan::Plan plan = testing::RocePlan();
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::BgpState* bgp = inventory.mutable_bgp();
  *bgp = CollectedState("healthy-host1");
  bgp->mutable_neighbors(0)->set_peer("enp65s0np0");
  v1::BgpNeighbor* numbered = bgp->add_neighbors();
  *numbered = bgp->neighbors(0);
  numbered->set_peer("10.10.2.254");  // enp193s0np0 holds 10.10.2.1/24
  numbered->set_unnumbered(false);
  const auto findings = Findings(plan, inventory);
  EXPECT_EQ(Get(findings, "bgp.neighbor", "enp193s0np0").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "bgp.prefixes", "enp193s0np0").status(), v1::Finding::pass);
  numbered->set_peer("10.99.0.1");  // in no rail's subnet: still no neighbour there
  EXPECT_EQ(Get(Findings(plan, inventory), "bgp.neighbor", "enp193s0np0").status(),
            v1::Finding::fail);
}

TEST(BgpChecksTest, AutoWithoutFrrSkipsWithTheAgentsReason) {
  v1::Inventory inventory = HostInventory("");
  inventory.mutable_bgp()->set_reason("vtysh not found (...): FRR is not installed");
  const auto findings = Findings(HostPlan(), inventory);
  ASSERT_EQ(findings.size(), 3u);
  for (const auto& finding : findings) {
    EXPECT_EQ(finding.status(), v1::Finding::skipped) << finding.id();
    EXPECT_THAT(finding.message(), HasSubstr("FRR is not installed"));
  }
}

TEST(BgpChecksTest, L2PlanSkipsEvenWhereFrrRuns) {
  const auto findings =
      Findings(HostPlan(plan::FabricRouting::kL2), HostInventory("shutdown-host1"));
  for (const auto& finding : findings) {
    EXPECT_EQ(finding.status(), v1::Finding::skipped) << finding.id();
    EXPECT_THAT(finding.message(), HasSubstr("fabric.routing: l2"));
  }
}

TEST(BgpChecksTest, RoutedPlanFailsANodeWithoutBgpOnce) {
  v1::Inventory inventory = HostInventory("");
  inventory.mutable_bgp()->set_frr_present(true);
  inventory.mutable_bgp()->set_reason("FRR's bgpd runs but has no `router bgp`");
  const auto findings = Findings(HostPlan(plan::FabricRouting::kBgp), inventory);
  const v1::Finding& neighbor = Get(findings, "bgp.neighbor");
  EXPECT_EQ(neighbor.status(), v1::Finding::fail);
  EXPECT_THAT(neighbor.remedy(), HasSubstr("apt-get install frr"));
  EXPECT_EQ(Get(findings, "bgp.prefixes").status(), v1::Finding::skipped);
  EXPECT_EQ(Get(findings, "bgp.announced").status(), v1::Finding::skipped);
}

TEST(BgpChecksTest, RoutedPlanWithAnUnansweringVtyshIsUnknown) {
  v1::Inventory inventory = HostInventory("");
  v1::Unknown* unknown = inventory.mutable_bgp()->add_unknowns();
  unknown->set_field("neighbors");
  unknown->set_path("vtysh -c 'show bgp vrf default summary json'");
  unknown->set_reason("killed after 5s");
  const v1::Finding neighbor =
      Get(Findings(HostPlan(plan::FabricRouting::kBgp), inventory), "bgp.neighbor");
  EXPECT_EQ(neighbor.status(), v1::Finding::unknown);
  EXPECT_THAT(neighbor.observed(), HasSubstr("killed after 5s"));
}

// What a certificate recorded before the BGP state holds: no finding under
// auto (so it recomputes as it was), unknown where the plan requires BGP.
TEST(BgpChecksTest, OlderAgentWithoutBgpStateGivesNoFindingUnderAuto) {
  v1::Inventory inventory = HostInventory("");
  EXPECT_THAT(Findings(HostPlan(), inventory), ::testing::IsEmpty());
  const auto routed = Findings(HostPlan(plan::FabricRouting::kBgp), inventory);
  EXPECT_EQ(Get(routed, "bgp.neighbor").status(), v1::Finding::unknown);
  EXPECT_THAT(Get(routed, "bgp.neighbor").observed(), HasSubstr("reported no BGP state"));
}

std::vector<v1::Finding> RouterIdFindings(const plan::Plan& plan,
                                          const std::vector<v1::Inventory>& inventories) {
  std::vector<NodeEvidence> evidence;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    NodeEvidence node;
    node.node = &plan.nodes[i];
    node.reachable = true;
    node.inventory = &inventories[i];
    evidence.push_back(node);
  }
  return EvaluateBgpRouterIds(plan, evidence);
}

plan::Plan ThreeHostPlan() {
  plan::Plan plan = HostPlan();
  for (const char* name : {"host2", "host3"}) {
    plan::Node node = plan.nodes[0];
    node.name = name;
    plan.nodes.push_back(node);
  }
  return plan;
}

TEST(BgpRouterIdTest, ClonedRouterIdFailsNamingTheOtherNode) {
  std::vector<v1::Inventory> inventories(3, HostInventory("healthy-host1"));
  inventories[2].mutable_bgp()->set_router_id("10.203.0.3");
  const auto findings = RouterIdFindings(ThreeHostPlan(), inventories);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_EQ(findings[0].node(), "host1");
  EXPECT_THAT(findings[0].message(), HasSubstr("router-id 10.203.0.1, as does host2"));
  EXPECT_THAT(findings[0].remedy(), HasSubstr("bgp router-id"));
  EXPECT_EQ(findings[1].status(), v1::Finding::fail);
  EXPECT_THAT(findings[1].message(), HasSubstr("as does host1"));
  EXPECT_EQ(findings[2].status(), v1::Finding::pass);
}

TEST(BgpRouterIdTest, NodesWithoutBgpAreSkippedNotCompared) {
  std::vector<v1::Inventory> inventories = {HostInventory("healthy-host1"), HostInventory(""),
                                            HostInventory("")};
  inventories[1].mutable_bgp()->set_reason("vtysh not found");
  inventories[2].mutable_bgp()->set_reason("FRR's bgpd runs but has no `router bgp`");
  const auto findings = RouterIdFindings(ThreeHostPlan(), inventories);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].status(), v1::Finding::pass);
  EXPECT_EQ(findings[0].node(), "host1");
  EXPECT_THAT(findings[0].message(), HasSubstr("no other of the 1 routed node(s)"));
  EXPECT_EQ(findings[1].status(), v1::Finding::skipped);
  EXPECT_EQ(findings[2].status(), v1::Finding::skipped);
}

}  // namespace
}  // namespace clustercert::controller::checks
