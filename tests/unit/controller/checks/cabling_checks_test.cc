#include "controller/checks/cabling_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "controller/checks/finding_builder.h"
#include "controller/checks/inventory_evaluation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A cluster of `count` healthy two-rail RoCE nodes whose inventories carry
// rail_ports; by default node<i>'s mlx5_<r> lands on leaf<r+1>/swp<i>, the
// rail-optimised layout. Tests move one cable at a time.
class CablingTest : public ::testing::Test {
 protected:
  void MakeCluster(int count, plan::FabricType type = plan::FabricType::kRoce) {
    plan_ = testing::RocePlan();
    plan_.fabric.type = type;
    const plan::Node base = plan_.nodes[0];
    plan_.nodes.clear();
    inventories_.clear();
    for (int i = 1; i <= count; ++i) {
      plan::Node node = base;
      node.name = absl::StrCat("node", i);
      if (type == plan::FabricType::kEthernet) node.rails.clear();
      plan_.nodes.push_back(node);
      v1::Inventory inventory = testing::HealthyRoceInventory();
      inventory.set_node_name(node.name);
      if (type == plan::FabricType::kEthernet) {
        AddPort(inventory, "eth0", 0, "leaf1", absl::StrCat("swp", i));
      } else {
        for (int r = 0; r < 2; ++r) {
          AddPort(inventory, absl::StrCat("mlx5_", r), 1, absl::StrCat("leaf", r + 1),
                  absl::StrCat("swp", i));
        }
      }
      inventories_.push_back(inventory);
    }
  }

  static void AddPort(v1::Inventory& inventory, const std::string& rail, uint32_t port,
                      const std::string& switch_name, const std::string& switch_port) {
    v1::RailPort* entry = inventory.add_rail_ports();
    entry->set_rail(rail);
    entry->set_port(port);
    entry->mutable_neighbor()->set_switch_name(switch_name);
    entry->mutable_neighbor()->set_port(switch_port);
    entry->mutable_neighbor()->set_source("lldpcli");
  }

  v1::LinkNeighbor& Neighbor(int node, const std::string& rail) {
    for (v1::RailPort& port : *inventories_[node - 1].mutable_rail_ports()) {
      if (port.rail() == rail) return *port.mutable_neighbor();
    }
    ADD_FAILURE() << "no rail port " << rail;
    static v1::LinkNeighbor none;
    return none;
  }

  // The cable plan that matches the default layout.
  void PlanEveryCable() {
    for (size_t i = 0; i < plan_.nodes.size(); ++i) {
      for (size_t r = 0; r < plan_.nodes[i].rails.size(); ++r) {
        plan_.cables[{plan_.nodes[i].name, plan_.nodes[i].rails[r]}] =
            plan::CableEnd{absl::StrCat("leaf", r + 1), absl::StrCat("swp", i + 1),
                           absl::StrCat("cables.csv:", 2 + 2 * i + r)};
      }
    }
  }

  std::vector<v1::Finding> Evaluate() const {
    std::vector<NodeEvidence> evidence;
    for (size_t i = 0; i < plan_.nodes.size(); ++i) {
      NodeEvidence e;
      e.node = &plan_.nodes[i];
      e.reachable = true;
      e.inventory = &inventories_[i];
      evidence.push_back(e);
    }
    return EvaluateCabling(plan_, evidence);
  }

  static std::vector<v1::Finding> WithId(const std::vector<v1::Finding>& findings,
                                         const std::string& id) {
    std::vector<v1::Finding> out;
    for (const auto& finding : findings) {
      if (finding.id() == id) out.push_back(finding);
    }
    return out;
  }

  // The one finding of `id` on `node`'s `device`.
  static v1::Finding Find(const std::vector<v1::Finding>& findings, const std::string& id,
                          const std::string& node, const std::string& device) {
    for (const auto& finding : findings) {
      if (finding.id() == id && finding.node() == node && finding.device() == device) {
        return finding;
      }
    }
    ADD_FAILURE() << "no finding " << id << " " << node << " " << device;
    return v1::Finding();
  }

  static std::vector<std::string> NotPassing(const std::vector<v1::Finding>& findings) {
    std::vector<std::string> out;
    for (const auto& finding : findings) {
      if (finding.status() == kPass || finding.status() == kSkipped) continue;
      out.push_back(absl::StrCat(finding.id(), " ", finding.node(), " ", finding.device()));
    }
    return out;
  }

  plan::Plan plan_;
  std::vector<v1::Inventory> inventories_;
};

TEST(SwitchNameMatchesTest, CaseAndFirstLabel) {
  EXPECT_TRUE(SwitchNameMatches("leaf1", "LEAF1"));
  EXPECT_TRUE(SwitchNameMatches("leaf1", "leaf1.pod2.example.com"));
  EXPECT_TRUE(SwitchNameMatches("Leaf1.pod2.example.com", "leaf1.POD2.example.com"));
  EXPECT_FALSE(SwitchNameMatches("leaf1.pod1", "leaf1.pod2"));
  EXPECT_FALSE(SwitchNameMatches("leaf1", "leaf10"));
  EXPECT_FALSE(SwitchNameMatches("leaf1.pod1", "leaf1"));
}

TEST_F(CablingTest, NotAskedSkipsBoth) {
  MakeCluster(2);
  const auto findings = Evaluate();
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].id(), "cabling.neighbor");
  EXPECT_EQ(findings[0].status(), kSkipped);
  EXPECT_EQ(findings[1].id(), "cabling.rail_alignment");
  EXPECT_EQ(findings[1].status(), kSkipped);
  EXPECT_THAT(findings[1].message(), HasSubstr("the plan does not ask for cabling"));
}

TEST_F(CablingTest, CablePlanMatchedPassesEveryPort) {
  MakeCluster(3);
  PlanEveryCable();
  Neighbor(2, "mlx5_1").set_switch_name("LEAF2.pod1.example.com");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), IsEmpty());
  const auto neighbor = WithId(findings, "cabling.neighbor");
  ASSERT_EQ(neighbor.size(), 6u);
  EXPECT_EQ(neighbor[0].observed(), "leaf1/swp1");
  EXPECT_EQ(neighbor[0].expected(), "leaf1/swp1 (cables.csv:2)");
  EXPECT_EQ(neighbor[0].port(), 1u);
  EXPECT_EQ(WithId(findings, "cabling.rail_alignment")[0].status(), kSkipped);
}

TEST_F(CablingTest, MiswiredPortNamesBothEnds) {
  MakeCluster(3);
  PlanEveryCable();
  Neighbor(3, "mlx5_1").set_switch_name("leaf4");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.neighbor node3 mlx5_1"));
  const v1::Finding fail = Find(findings, "cabling.neighbor", "node3", "mlx5_1");
  EXPECT_EQ(fail.status(), kFail);
  EXPECT_EQ(fail.message(),
            "mlx5_1 on node3 is on leaf4/swp3; the plan says leaf2/swp3 (cables.csv:7): move "
            "the cable, or fix the cable plan if it is wrong.");
  EXPECT_EQ(fail.observed(), "leaf4/swp3");
  EXPECT_EQ(fail.port(), 1u);
  EXPECT_THAT(fail.remedy(), HasSubstr("Move the cable of node3 mlx5_1 from leaf4/swp3 to "
                                       "leaf2/swp3"));
}

// Each cable where the other should be: one finding, with the swap.
TEST_F(CablingTest, CrossedCablesAreOneFindingWithTheSwap) {
  MakeCluster(3);
  PlanEveryCable();
  Neighbor(1, "mlx5_0").set_port("swp2");
  Neighbor(2, "mlx5_0").set_port("swp1");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.neighbor node1 mlx5_0"));
  std::vector<v1::Finding> fails;
  for (const auto& finding : WithId(findings, "cabling.neighbor")) {
    if (finding.status() == kFail) fails.push_back(finding);
  }
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_EQ(fails[0].message(),
            "the cables of node1 mlx5_0 and node2 mlx5_0 are crossed: node1 mlx5_0's is in "
            "leaf1/swp2 and node2 mlx5_0's in leaf1/swp1; swap them.");
  EXPECT_THAT(fails[0].remedy(), HasSubstr("Swap the two cables at leaf1/swp2 and leaf1/swp1"));
  // node2 mlx5_0 has no finding of its own: the pair's is the one.
  EXPECT_EQ(WithId(findings, "cabling.neighbor").size(), 5u);
}

TEST_F(CablingTest, CrossedRailsOnOneNode) {
  MakeCluster(2);
  PlanEveryCable();
  Neighbor(2, "mlx5_0").set_switch_name("leaf2");
  Neighbor(2, "mlx5_1").set_switch_name("leaf1");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.neighbor node2 mlx5_0"));
}

TEST_F(CablingTest, ThreeWayMoveIsThreeMiswiredPorts) {
  MakeCluster(3);
  PlanEveryCable();
  Neighbor(1, "mlx5_0").set_port("swp2");
  Neighbor(2, "mlx5_0").set_port("swp3");
  Neighbor(3, "mlx5_0").set_port("swp1");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings),
              ElementsAre("cabling.neighbor node1 mlx5_0", "cabling.neighbor node2 mlx5_0",
                          "cabling.neighbor node3 mlx5_0"));
  EXPECT_THAT(Find(findings, "cabling.neighbor", "node1", "mlx5_0").message(),
              HasSubstr("mlx5_0 on node1 is on leaf1/swp2; the plan says leaf1/swp1 "
                        "(cables.csv:2), and puts node2 mlx5_0 where it is"));
}

TEST_F(CablingTest, UnreadableNeighbourIsUnknownNeverPass) {
  MakeCluster(2);
  PlanEveryCable();
  v1::RailPort& port = *inventories_[0].mutable_rail_ports(1);
  port.clear_neighbor();
  v1::Unknown* unknown = port.add_unknowns();
  unknown->set_field("neighbor");
  unknown->set_reason("no LLDP frame within 31 s and lldpd is not running");
  inventories_[1].clear_rail_ports();
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings),
              ElementsAre("cabling.neighbor node1 mlx5_1", "cabling.neighbor node2 mlx5_0",
                          "cabling.neighbor node2 mlx5_1"));
  for (const auto& finding : findings) {
    if (finding.status() == kPass || finding.status() == kSkipped) continue;
    EXPECT_EQ(finding.status(), kUnknown);
  }
  EXPECT_THAT(Find(findings, "cabling.neighbor", "node1", "mlx5_1").observed(),
              HasSubstr("no LLDP frame within 31 s"));
}

TEST_F(CablingTest, RailWithoutPlannedEndIsSkipped) {
  MakeCluster(2);
  PlanEveryCable();
  plan_.cables.erase({"node2", "mlx5_1"});
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), IsEmpty());
  int skipped = 0;
  for (const auto& finding : WithId(findings, "cabling.neighbor")) {
    skipped += finding.status() == kSkipped;
  }
  EXPECT_EQ(skipped, 1);
}

TEST_F(CablingTest, EthernetDataPortsCrossed) {
  MakeCluster(2, plan::FabricType::kEthernet);
  plan_.cables[{"node1", "eth0"}] = plan::CableEnd{"leaf1", "swp1", "cables.csv:2"};
  plan_.cables[{"node2", ""}] = plan::CableEnd{"leaf1", "swp2", "nodes[1].cable"};
  Neighbor(1, "eth0").set_port("swp2");
  Neighbor(2, "eth0").set_port("swp1");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.neighbor node1 eth0"));
  EXPECT_THAT(Find(findings, "cabling.neighbor", "node1", "eth0").message(),
              HasSubstr("the cables of node1 eth0 and node2 eth0 are crossed"));
}

// An agent that reported no data port at all: unknown, under the cable
// plan's name for the port.
TEST_F(CablingTest, EthernetWithoutRailPortsIsUnknownUnderThePlannedName) {
  MakeCluster(2, plan::FabricType::kEthernet);
  plan_.cables[{"node1", "data0"}] = plan::CableEnd{"leaf1", "swp1", "cables.csv:2"};
  plan_.cables[{"node2", "data0"}] = plan::CableEnd{"leaf1", "swp2", "cables.csv:3"};
  inventories_[0].mutable_rail_ports(0)->set_rail("data0");
  inventories_[1].clear_rail_ports();
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.neighbor node2 data0"));
  EXPECT_EQ(Find(findings, "cabling.neighbor", "node2", "data0").status(), kUnknown);
  EXPECT_EQ(Find(findings, "cabling.neighbor", "node1", "data0").message(),
            "data0 on node1 is on leaf1/swp1, where the cable plan puts it.");
}

TEST_F(CablingTest, EthernetCablePlanNamingAnotherNetdev) {
  MakeCluster(1, plan::FabricType::kEthernet);
  plan_.cables[{"node1", "eth1"}] = plan::CableEnd{"leaf1", "swp1", "cables.csv:2"};
  const auto findings = Evaluate();
  EXPECT_THAT(Find(findings, "cabling.neighbor", "node1", "eth0").message(),
              HasSubstr("the cable plan names eth1 as node1's data port (cables.csv:2) but its "
                        "data_ip is on eth0"));
}

TEST_F(CablingTest, RailOptimizedAlignedPasses) {
  MakeCluster(4);
  plan_.fabric.topology = plan::FabricTopology::kRailOptimized;
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), IsEmpty());
  const auto alignment = WithId(findings, "cabling.rail_alignment");
  ASSERT_EQ(alignment.size(), 8u);
  EXPECT_EQ(alignment[0].severity(), v1::Finding::error);
}

TEST_F(CablingTest, RailOnAnotherSwitchFailsAsErrorWhenRailOptimized) {
  MakeCluster(4);
  plan_.fabric.topology = plan::FabricTopology::kRailOptimized;
  Neighbor(3, "mlx5_1").set_switch_name("leaf1");
  Neighbor(3, "mlx5_1").set_port("swp9");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.rail_alignment node3 mlx5_1"));
  const v1::Finding fail = Find(findings, "cabling.rail_alignment", "node3", "mlx5_1");
  EXPECT_EQ(fail.status(), kFail);
  EXPECT_EQ(fail.severity(), v1::Finding::error);
  EXPECT_EQ(fail.message(),
            "node3 mlx5_1 (rail 1) lands on leaf1/swp9, but rail 1 of the cluster lands on "
            "leaf2.");
  EXPECT_THAT(fail.remedy(), HasSubstr("move the cable to leaf2"));
}

TEST_F(CablingTest, UnspecifiedTopologyWarnsAndLeafGroupsAreSeparate) {
  MakeCluster(4);
  plan_.nodes[0].leaf = plan_.nodes[1].leaf = "groupA";
  plan_.nodes[2].leaf = plan_.nodes[3].leaf = "groupB";
  plan_.fabric.lldp_wait = absl::Seconds(31);
  plan_.locations["fabric.lldp_wait_s"] = plan::SourceLocation{5, 3};
  // Group B's rails land on their own switches: aligned within the group.
  for (int node : {3, 4}) {
    Neighbor(node, "mlx5_0").set_switch_name("leaf3");
    Neighbor(node, "mlx5_1").set_switch_name("leaf4");
  }
  // Two nodes of group A split rail 0: no majority, both named.
  Neighbor(2, "mlx5_0").set_switch_name("leaf9");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.rail_alignment node1 mlx5_0",
                                                "cabling.rail_alignment node2 mlx5_0"));
  for (const auto& finding : findings) {
    if (finding.status() != kFail) continue;
    EXPECT_EQ(finding.severity(), v1::Finding::warning);
    EXPECT_THAT(finding.message(), HasSubstr("rail 0 of leaf group groupA is split over switches "
                                             "with no majority: leaf1 (1), leaf9 (1)"));
  }
}

TEST_F(CablingTest, SharedSwitchPortFails) {
  MakeCluster(3);
  plan_.fabric.topology = plan::FabricTopology::kRailOptimized;
  Neighbor(3, "mlx5_0").set_port("swp1");
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.rail_alignment node1 mlx5_0",
                                                "cabling.rail_alignment node3 mlx5_0"));
  EXPECT_THAT(Find(findings, "cabling.rail_alignment", "node1", "mlx5_0").message(),
              HasSubstr("both report leaf1/swp1 as their switch port"));
}

// On a fabric that is not rail-optimised and whose leaf names are switches,
// a node's ports land on its leaf.
TEST_F(CablingTest, LeafThatNamesASwitchMustHoldTheNodesPorts) {
  MakeCluster(2, plan::FabricType::kEthernet);
  plan_.nodes[0].leaf = "leaf1";
  plan_.nodes[1].leaf = "leaf2";
  plan_.locations["fabric.lldp_wait_s"] = plan::SourceLocation{5, 3};
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.rail_alignment node2 eth0"));
  EXPECT_THAT(Find(findings, "cabling.rail_alignment", "node2", "eth0").message(),
              HasSubstr("node2 eth0 lands on leaf1/swp2, but nodes[].leaf puts node2 on leaf2"));
}

TEST_F(CablingTest, AlignmentUnknownWithoutRailPorts) {
  MakeCluster(2);
  plan_.fabric.topology = plan::FabricTopology::kRailOptimized;
  inventories_[0].clear_rail_ports();
  const auto findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ElementsAre("cabling.rail_alignment node1 mlx5_0",
                                                "cabling.rail_alignment node1 mlx5_1"));
  EXPECT_THAT(Find(findings, "cabling.rail_alignment", "node1", "mlx5_0").observed(),
              HasSubstr("reported no rail ports"));
}

// The inventory phase's list holds the cabling checks.
TEST_F(CablingTest, EvaluatedWithTheInventoryChecks) {
  MakeCluster(2);
  PlanEveryCable();
  std::vector<NodeEvidence> evidence;
  for (size_t i = 0; i < plan_.nodes.size(); ++i) {
    evidence.push_back(NodeEvidence{&plan_.nodes[i], true, "", &inventories_[i], std::nullopt});
  }
  const auto findings = EvaluateInventoryChecks(plan_, evidence);
  EXPECT_EQ(WithId(findings, "cabling.neighbor").size(), 4u);
}

}  // namespace
}  // namespace clustercert::controller::checks
