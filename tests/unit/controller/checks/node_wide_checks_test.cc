// Management-plane separation and the clock.
#include <vector>

#include "controller/checks/check_context.h"
#include "controller/checks/clock_checks.h"
#include "controller/checks/management_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using testing::Get;
using ::testing::HasSubstr;

std::vector<v1::Finding> NodeWideFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendManagementChecks(context, findings);
  AppendClockChecks(context, findings);
  return findings;
}

TEST(ManagementChecksTest, SeparateManagementNetdevPasses) {
  const v1::Finding mgmt =
      Get(NodeWideFindings(testing::RocePlan(), testing::HealthyRoceInventory()), "mgmt.separate",
          "eno1");
  EXPECT_EQ(mgmt.status(), v1::Finding::pass);
  EXPECT_EQ(mgmt.observed(), "eno1");
  EXPECT_THAT(mgmt.message(),
              HasSubstr("node1 eno1 carries the management address 192.168.100.11"));
}

TEST(ManagementChecksTest, NonRailRdmaNetdevAlsoFails) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::RdmaDevice* spare = inventory.add_rdma_devices();
  spare->set_name("mlx5_2");
  v1::RdmaPort* port = spare->add_ports();
  port->set_port(1);
  port->set_netdev("eno1");
  const v1::Finding mgmt =
      Get(NodeWideFindings(testing::RocePlan(), inventory), "mgmt.separate", "eno1");
  EXPECT_EQ(mgmt.status(), v1::Finding::fail);
  EXPECT_EQ(mgmt.observed(), "eno1 (RDMA netdev of mlx5_2 port 1)");
}

TEST(ManagementChecksTest, UnnamedManagementNetdevIsUnknownWithTheReason) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.clear_management_netdev();
  v1::Unknown* unknown = inventory.add_unknowns();
  unknown->set_field("management_netdev");
  unknown->set_path("RTM_GETROUTE 192.168.100.11");
  unknown->set_reason("no route to the dialed host");
  const v1::Finding mgmt = Get(NodeWideFindings(testing::RocePlan(), inventory), "mgmt.separate");
  EXPECT_EQ(mgmt.status(), v1::Finding::unknown);
  EXPECT_EQ(mgmt.severity(), v1::Finding::error);
  EXPECT_EQ(mgmt.observed(), "unknown: no route to the dialed host (RTM_GETROUTE 192.168.100.11)");
}

TEST(ManagementChecksTest, SeparateManagementSubnetPasses) {
  const v1::Finding subnet =
      Get(NodeWideFindings(testing::RocePlan(), testing::HealthyRoceInventory()), "mgmt.subnet",
          "eno1");
  EXPECT_EQ(subnet.status(), v1::Finding::pass);
  EXPECT_EQ(subnet.observed(), "192.168.100.0/24");
  EXPECT_THAT(subnet.message(), HasSubstr("192.168.100.0/24 through eno1"));
}

TEST(ManagementChecksTest, ManagementSubnetHoldingAnRdmaNetdevFails) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  // mlx5_0's netdev numbered in the management /16: the planes share a subnet.
  testing::Netdev(inventory, "enp65s0np0").set_cidrs(0, "192.168.7.1/16");
  inventory.set_management_subnet("192.168.0.0/16");
  const v1::Finding subnet =
      Get(NodeWideFindings(testing::RocePlan(), inventory), "mgmt.subnet", "eno1");
  EXPECT_EQ(subnet.status(), v1::Finding::fail);
  EXPECT_EQ(subnet.severity(), v1::Finding::error);
  EXPECT_THAT(subnet.observed(),
              HasSubstr("192.168.0.0/16 holds enp65s0np0 192.168.7.1/16 (RDMA netdev of mlx5_0"));
  EXPECT_THAT(subnet.remedy(), HasSubstr("its own subnet"));
}

TEST(ManagementChecksTest, ManagementSubnetHoldingAPlanDataIpFails) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].data_ip = "192.168.100.200";
  const v1::Finding subnet =
      Get(NodeWideFindings(plan, testing::HealthyRoceInventory()), "mgmt.subnet", "eno1");
  EXPECT_EQ(subnet.status(), v1::Finding::fail);
  EXPECT_THAT(subnet.observed(), HasSubstr("node1's data_ip 192.168.100.200"));
}

TEST(ManagementChecksTest, UnknownManagementSubnetIsUnknown) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.clear_management_subnet();
  v1::Unknown* unknown = inventory.add_unknowns();
  unknown->set_field("management_subnet");
  unknown->set_path("getifaddrs");
  unknown->set_reason("no netmask reported for 192.168.100.11 on eno1");
  const v1::Finding subnet =
      Get(NodeWideFindings(testing::RocePlan(), inventory), "mgmt.subnet", "eno1");
  EXPECT_EQ(subnet.status(), v1::Finding::unknown);
  EXPECT_THAT(subnet.observed(), HasSubstr("no netmask reported"));
}

TEST(ManagementChecksTest, OneInterfaceBoxSkipsTheSubnetCheckToo) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.management_separate = false;
  const v1::Finding subnet =
      Get(NodeWideFindings(plan, testing::HealthyRoceInventory()), "mgmt.subnet", "eno1");
  EXPECT_EQ(subnet.status(), v1::Finding::skipped);
}

TEST(ClockChecksTest, UnreadableClockIsUnknownNotUnsynced) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_clock()->clear_synchronized();
  v1::Unknown* unknown = inventory.mutable_clock()->add_unknowns();
  unknown->set_field("synchronized");
  unknown->set_path("adjtimex");
  unknown->set_reason("Operation not permitted");
  const v1::Finding clock = Get(NodeWideFindings(testing::RocePlan(), inventory), "clock.ntp");
  EXPECT_EQ(clock.status(), v1::Finding::unknown);
  EXPECT_EQ(clock.observed(), "unknown: Operation not permitted (adjtimex)");
}

TEST(ClockChecksTest, PlanCanWaiveNtp) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.ntp_synced = false;
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_clock()->set_synchronized(false);
  const v1::Finding clock = Get(NodeWideFindings(plan, inventory), "clock.ntp");
  EXPECT_EQ(clock.status(), v1::Finding::skipped);
  EXPECT_THAT(clock.message(), HasSubstr("plan sets expect.ntp_synced: false"));
}

TEST(ClockChecksTest, SyncedClockShowsItsErrorEstimate) {
  const v1::Finding clock =
      Get(NodeWideFindings(testing::RocePlan(), testing::HealthyRoceInventory()), "clock.ntp");
  EXPECT_EQ(clock.status(), v1::Finding::pass);
  EXPECT_EQ(clock.observed(), "synchronized (est. error 120 us)");
}

}  // namespace
}  // namespace clustercert::controller::checks
