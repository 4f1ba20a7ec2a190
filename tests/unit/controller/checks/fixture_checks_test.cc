// The whole inventory path on the fixture hosts: InventoryCollector over a
// fixture tree (captured port attributes and DCB, fake clock and addresses),
// then the node checks. Healthy hosts yield no finding; the broken host
// yields exactly its planted faults.
#include <set>
#include <string>

#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/dcb_capture_source.h"
#include "agent/inventory/inventory_collector.h"
#include "controller/checks/node_checks.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/fixture_collection.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using agent::inventory::InventoryProbes;

v1::Inventory CollectFixture(const std::string& name) { return testing::CollectFixtureHost(name); }

std::multiset<std::string> FindingIds(const std::vector<v1::Finding>& checks) {
  std::multiset<std::string> ids;
  for (const auto& f : checks) {
    if (f.status() == v1::Finding::fail || f.status() == v1::Finding::unknown) ids.insert(f.id());
  }
  return ids;
}

std::string Describe(const std::vector<v1::Finding>& checks) {
  std::string out;
  for (const auto& f : checks) {
    if (f.status() == v1::Finding::fail || f.status() == v1::Finding::unknown)
      out += FindingSentence(f) + "\n";
  }
  return out;
}

TEST(FixtureChecksTest, RoceHealthyHasNoFinding) {
  const plan::Plan plan = testing::RocePlan();
  auto checks = EvaluateNode(plan, plan.nodes[0], CollectFixture("roce-healthy"));
  EXPECT_TRUE(FindingIds(checks).empty()) << Describe(checks);
  EXPECT_GE(checks.size(), 30u);
}

TEST(FixtureChecksTest, IbHdrHealthyHasNoFinding) {
  plan::Plan plan = testing::InfinibandPlan();
  plan.nodes[0].rails = {"mlx5_0"};
  auto checks = EvaluateNode(plan, plan.nodes[0], CollectFixture("ib-hdr-healthy"));
  EXPECT_TRUE(FindingIds(checks).empty()) << Describe(checks);
}

TEST(FixtureChecksTest, RoceBrokenYieldsExactlyItsPlantedFaults) {
  const plan::Plan plan = testing::RocePlan();
  auto checks = EvaluateNode(plan, plan.nodes[0], CollectFixture("roce-broken"));
  EXPECT_EQ(FindingIds(checks),
            (std::multiset<std::string>{"port.rate", "mtu.netdev", "mtu.active", "qos.pfc",
                                        "gpudirect.peermem", "pcie.nic", "pcie.nic"}))
      << Describe(checks);
  for (const auto& f : checks) {
    if (f.status() != v1::Finding::fail) continue;
    EXPECT_FALSE(f.remedy().empty()) << f.id();
    if (f.id() == "port.rate") {
      EXPECT_EQ(f.device(), "mlx5_0");
      EXPECT_NE(f.observed().find("100 Gb/s"), std::string::npos);
      EXPECT_NE(f.remedy().find("cable"), std::string::npos);
    }
    if (f.id() == "mtu.netdev") EXPECT_NE(f.observed().find("1500"), std::string::npos);
    if (f.id() == "mtu.active") EXPECT_NE(f.observed().find("1024"), std::string::npos);
    if (f.id() == "qos.pfc") EXPECT_NE(f.observed().find("4"), std::string::npos);
    if (f.id() == "pcie.nic") EXPECT_NE(f.observed().find("x8"), std::string::npos);
  }
}

TEST(FixtureChecksTest, NoRdmaHostOnAnEthernetPlanHasNoFinding) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.type = plan::FabricType::kEthernet;
  plan.fabric.link_rate_gbps = 0;
  plan.nodes[0].rails.clear();
  plan.nodes[0].gpus = 0;
  plan.nodes[0].data_ip.clear();  // fixture netdevs carry no addresses
  auto checks = EvaluateNode(plan, plan.nodes[0], CollectFixture("no-rdma"));
  EXPECT_TRUE(FindingIds(checks).empty()) << Describe(checks);
}

TEST(FixtureChecksTest, NoRdmaHostOnARocePlanNamesTheMissingRails) {
  const plan::Plan plan = testing::RocePlan();
  auto checks = EvaluateNode(plan, plan.nodes[0], CollectFixture("no-rdma"));
  auto ids = FindingIds(checks);
  EXPECT_EQ(ids.count("rail.present"), 2u) << Describe(checks);
  EXPECT_EQ(ids.count("gpu.count"), 1u);
}

TEST(FixtureChecksTest, RxeVmAsARoceNodeShowsTheLabsRealLimits) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"rxe0"};
  plan.nodes[0].gpus = 0;
  plan.fabric.roce.gid_index = 1;  // rxe puts the IPv4 RoCE v2 GID at index 1
  plan.fabric.link_rate_gbps = 100;
  auto checks = EvaluateNode(plan, plan.nodes[0], CollectFixture("rxe-vm"));
  auto ids = FindingIds(checks);
  EXPECT_EQ(ids.count("port.rate"), 1u) << Describe(checks);  // 2.5 Gb/s (1X SDR)
  EXPECT_EQ(ids.count("mtu.netdev"), 1u);                     // eth0 at 1500
  EXPECT_EQ(ids.count("roce.gid"), 0u);
  EXPECT_EQ(ids.count("pcie.nic"), 0u);  // virtual: skipped
}

}  // namespace
}  // namespace clustercert::controller::checks

namespace clustercert::controller::checks {
namespace {

plan::Plan EthernetPlanWithDataIp(const std::string& data_ip) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.type = plan::FabricType::kEthernet;
  plan.nodes[0].data_ip = data_ip;
  plan.nodes[0].rails.clear();
  return plan;
}

v1::Finding DataMtu(const std::vector<v1::Finding>& checks) {
  for (const auto& f : checks) {
    if (f.id() == "mtu.netdev") return f;
  }
  ADD_FAILURE() << "no mtu.netdev check";
  return v1::Finding();
}

TEST(DataNetdevTest, DataIpOnNoInterfaceFailsWhenAddressesWereReported) {
  const plan::Plan plan = EthernetPlanWithDataIp("10.10.9.9");
  const v1::Finding f = DataMtu(EvaluateNode(plan, plan.nodes[0], testing::HealthyRoceInventory()));
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_NE(f.remedy().find("ip addr add 10.10.9.9"), std::string::npos);
}

TEST(DataNetdevTest, DataIpUnknownWhenTheAgentReportedNoAddresses) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  for (auto& netdev : *inventory.mutable_netdevs()) netdev.clear_ipv4();
  const plan::Plan plan = EthernetPlanWithDataIp("10.10.1.1");
  const v1::Finding f = DataMtu(EvaluateNode(plan, plan.nodes[0], inventory));
  EXPECT_EQ(f.status(), v1::Finding::unknown);
  EXPECT_NE(f.remedy().find("--sysfs-root /"), std::string::npos);
}

TEST(DataNetdevTest, DataIpFoundChecksThatNetdevsMtu) {
  const plan::Plan plan = EthernetPlanWithDataIp("10.10.1.1");
  const v1::Finding f = DataMtu(EvaluateNode(plan, plan.nodes[0], testing::HealthyRoceInventory()));
  EXPECT_EQ(f.status(), v1::Finding::pass);
  EXPECT_EQ(f.device(), "enp65s0np0");
}

}  // namespace
}  // namespace clustercert::controller::checks
