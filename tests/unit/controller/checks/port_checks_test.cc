#include "controller/checks/port_checks.h"

#include <string>
#include <vector>

#include "controller/checks/check_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::ElementsAre;
using testing::Get;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::NonPassing;

std::vector<v1::Finding> PortFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendPortChecks(context, findings);
  AppendSubnetManagerChecks(context, findings);
  return findings;
}

TEST(PortChecksTest, HealthyRoceRailsPassInPlanOrder) {
  std::vector<v1::Finding> findings =
      PortFindings(testing::RocePlan(), testing::HealthyRoceInventory());
  EXPECT_THAT(NonPassing(findings), IsEmpty());
  std::vector<std::string> ids;
  for (const v1::Finding& finding : findings) ids.push_back(finding.id() + " " + finding.device());
  EXPECT_THAT(ids, ElementsAre("rail.present mlx5_0", "port.state mlx5_0", "port.phys_state mlx5_0",
                               "port.rate mlx5_0", "port.link_layer mlx5_0", "rail.present mlx5_1",
                               "port.state mlx5_1", "port.phys_state mlx5_1", "port.rate mlx5_1",
                               "port.link_layer mlx5_1"));
  EXPECT_EQ(Get(findings, "rail.present", "mlx5_0").observed(), "present (fw 20.31.1014)");
}

TEST(PortChecksTest, PollingMeansNoCableOrPeer) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::RdmaPort& port = testing::Port(inventory, "mlx5_0");
  port.set_state_code(1);
  port.set_state("DOWN");
  port.set_phys_state_code(2);
  port.set_phys_state("Polling");
  std::vector<v1::Finding> findings = PortFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("port.state mlx5_0 1", "port.phys_state mlx5_0 1"));
  const v1::Finding& phys = Get(findings, "port.phys_state", "mlx5_0", 1);
  EXPECT_EQ(phys.observed(), "2: Polling");
  EXPECT_EQ(phys.expected(), "5: LinkUp");
  EXPECT_THAT(phys.remedy(), HasSubstr("no cable or no link partner"));
  EXPECT_THAT(Get(findings, "port.state", "mlx5_0", 1).message(),
              HasSubstr("because its physical link is 2: Polling"));
}

TEST(PortChecksTest, DisabledPointsAtTheSwitchPort) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Port(inventory, "mlx5_1").set_phys_state_code(3);
  testing::Port(inventory, "mlx5_1").set_phys_state("Disabled");
  std::vector<v1::Finding> findings = PortFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(Get(findings, "port.phys_state", "mlx5_1", 1).remedy(),
              HasSubstr("disabled, usually on the switch side"));
}

TEST(PortChecksTest, RoceDownWithLinkUpSaysBringTheNetdevUp) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Port(inventory, "mlx5_0").set_state_code(1);
  testing::Port(inventory, "mlx5_0").set_state("DOWN");
  std::vector<v1::Finding> findings = PortFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(Get(findings, "port.state", "mlx5_0", 1).remedy(),
              HasSubstr("sudo ip link set dev enp65s0np0 up"));
}

TEST(PortChecksTest, EthernetPortOnInfinibandPlanGivesMlxconfigLinkType) {
  plan::Plan plan = testing::InfinibandPlan();
  v1::Inventory inventory = testing::HealthyInfinibandInventory();
  testing::Port(inventory, "mlx5_0").set_link_layer("Ethernet");
  std::vector<v1::Finding> findings = PortFindings(plan, inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("port.link_layer mlx5_0 1"));
  const v1::Finding& layer = Get(findings, "port.link_layer", "mlx5_0", 1);
  EXPECT_EQ(layer.observed(), "Ethernet");
  EXPECT_EQ(layer.expected(), "InfiniBand");
  EXPECT_THAT(layer.remedy(), HasSubstr("mlxconfig -d 0000:41:00.0 set LINK_TYPE_P1=1"));
  EXPECT_THAT(layer.remedy(), HasSubstr("reboot"));
}

TEST(PortChecksTest, InfinibandPortOnRocePlanAsksForLinkType2) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Port(inventory, "mlx5_1").set_link_layer("InfiniBand");
  std::vector<v1::Finding> findings = PortFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(Get(findings, "port.link_layer", "mlx5_1", 1).remedy(), HasSubstr("LINK_TYPE_P1=2"));
}

TEST(PortChecksTest, SoftRoceRateFaultNamesItsNetdev) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"rxe0"};
  v1::Inventory inventory;
  v1::RdmaDevice* rxe = inventory.add_rdma_devices();
  rxe->set_name("rxe0");
  rxe->set_parent_netdev("enp0s3");
  v1::RdmaPort* port = rxe->add_ports();
  port->set_port(1);
  port->set_state_code(4);
  port->set_phys_state_code(5);
  port->set_rate_gbps(2.5);
  port->set_width(1);
  port->set_speed_name("SDR");
  port->set_link_layer("Ethernet");
  std::vector<v1::Finding> findings = PortFindings(plan, inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("port.rate rxe0 1"));
  const v1::Finding& rate = Get(findings, "port.rate", "rxe0", 1);
  EXPECT_EQ(rate.observed(), "2.5 Gb/s (1X SDR)");
  EXPECT_THAT(rate.remedy(), HasSubstr("link speed of enp0s3"));
}

TEST(PortChecksTest, NoRateInPlanSkipsRate) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.link_rate_gbps = 0;
  std::vector<v1::Finding> findings = PortFindings(plan, testing::HealthyRoceInventory());
  const v1::Finding& rate = Get(findings, "port.rate", "mlx5_0", 1);
  EXPECT_EQ(rate.status(), v1::Finding::skipped);
  EXPECT_THAT(rate.message(), HasSubstr("plan sets no fabric.link_rate_gbps"));
}

TEST(PortChecksTest, UnreadableDeviceListMakesRailsUnknown) {
  v1::Inventory inventory;
  v1::Unknown* unknown = inventory.add_unknowns();
  unknown->set_field("rdma_devices");
  unknown->set_path("/sys/class/infiniband");
  unknown->set_reason("Permission denied");
  std::vector<v1::Finding> findings = PortFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("rail.present mlx5_0", "rail.present mlx5_1"));
  EXPECT_EQ(Get(findings, "rail.present", "mlx5_0").status(), v1::Finding::unknown);
  EXPECT_EQ(Get(findings, "rail.present", "mlx5_0").observed(),
            "unknown: Permission denied (/sys/class/infiniband)");
}

TEST(PortChecksTest, NoDevicesAtAllFailsEachRail) {
  std::vector<v1::Finding> findings = PortFindings(testing::RocePlan(), v1::Inventory());
  EXPECT_EQ(Get(findings, "rail.present", "mlx5_1").status(), v1::Finding::fail);
  EXPECT_EQ(Get(findings, "rail.present", "mlx5_1").observed(), "absent; no RDMA devices");
}

TEST(PortChecksTest, UnknownStateUsesThePortsUnknownEntry) {
  v1::Inventory inventory = testing::HealthyInfinibandInventory();
  v1::RdmaPort& port = testing::Port(inventory, "mlx5_0");
  port.clear_state_code();
  v1::Unknown* unknown = port.add_unknowns();
  unknown->set_field("state_code");
  unknown->set_path("/sys/class/infiniband/mlx5_0/ports/1/state");
  unknown->set_reason("unparsable: 'weird'");
  std::vector<v1::Finding> findings = PortFindings(testing::InfinibandPlan(), inventory);
  EXPECT_THAT(NonPassing(findings),
              ElementsAre("port.state mlx5_0 1", "ib.subnet_manager mlx5_0 1"));
  EXPECT_EQ(Get(findings, "ib.subnet_manager", "mlx5_0", 1).observed(),
            "unknown: unparsable: 'weird' (/sys/class/infiniband/mlx5_0/ports/1/state)");
}

TEST(PortChecksTest, ArmedPortWithSmLidBlamesTheSmLogNotAMissingSm) {
  v1::Inventory inventory = testing::HealthyInfinibandInventory();
  testing::Port(inventory, "mlx5_0").set_state_code(3);
  testing::Port(inventory, "mlx5_0").set_state("ARMED");
  std::vector<v1::Finding> findings = PortFindings(testing::InfinibandPlan(), inventory);
  const v1::Finding& sm = Get(findings, "ib.subnet_manager", "mlx5_0", 1);
  EXPECT_EQ(sm.status(), v1::Finding::fail);
  EXPECT_THAT(sm.remedy(), HasSubstr("check its log"));
}

}  // namespace
}  // namespace clustercert::controller::checks
