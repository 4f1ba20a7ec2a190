// One fault at a time on a healthy node: each flips exactly its own checks,
// so a report can point at the cause. Remedy wording is tested per check file.
#include <string>
#include <vector>

#include "controller/checks/node_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::ElementsAre;
using testing::Get;
using ::testing::HasSubstr;
using testing::NonPassing;
using ::testing::UnorderedElementsAre;

class RoceFaultTest : public ::testing::Test {
 protected:
  std::vector<v1::Finding> Evaluate() { return EvaluateNode(plan_, plan_.nodes[0], inventory_); }
  plan::Plan plan_ = testing::RocePlan();
  v1::Inventory inventory_ = testing::HealthyRoceInventory();
};

TEST_F(RoceFaultTest, RateAt100OfPlanned200FlipsPortRate) {
  v1::RdmaPort& port = testing::Port(inventory_, "mlx5_0");
  port.set_rate_gbps(100);
  port.set_width(2);
  port.set_rate_text("100 Gb/sec (2X HDR)");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("port.rate mlx5_0 1"));
  const v1::Finding& rate = Get(findings, "port.rate", "mlx5_0", 1);
  EXPECT_EQ(rate.status(), v1::Finding::fail);
  EXPECT_EQ(rate.severity(), v1::Finding::error);
  EXPECT_EQ(rate.observed(), "100 Gb/s (2X HDR)");
  EXPECT_EQ(rate.expected(), "200 Gb/s");
  EXPECT_EQ(rate.message(), "node1 mlx5_0 port 1 is at 100 Gb/s (2X HDR), plan expects 200 Gb/s.");
  EXPECT_THAT(rate.remedy(), HasSubstr("Check the cable/DAC length and the switch port speed"));
  EXPECT_THAT(rate.remedy(), HasSubstr("most common silent failure"));
}

TEST_F(RoceFaultTest, Mtu1500FlipsNetdevAndActiveMtu) {
  testing::Netdev(inventory_, "enp65s0np0").set_mtu(1500);
  testing::Port(inventory_, "mlx5_0").set_active_mtu(1024);
  testing::Port(inventory_, "mlx5_0").set_active_mtu_source("derived from netdev MTU 1500");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("mtu.netdev mlx5_0 1", "mtu.active mlx5_0 1"));
  const v1::Finding& netdev = Get(findings, "mtu.netdev", "mlx5_0", 1);
  EXPECT_EQ(netdev.observed(), "1500");
  EXPECT_EQ(netdev.expected(), "9000");
  EXPECT_THAT(netdev.message(), HasSubstr("node1 mlx5_0 port 1 netdev enp65s0np0 has MTU 1500"));
  EXPECT_THAT(netdev.remedy(), HasSubstr("sudo ip link set dev enp65s0np0 mtu 9000"));
  EXPECT_THAT(netdev.remedy(), HasSubstr("every switch port"));
  EXPECT_THAT(netdev.remedy(), HasSubstr("end to end"));
  const v1::Finding& active = Get(findings, "mtu.active", "mlx5_0", 1);
  EXPECT_EQ(active.observed(), "1024 (derived from netdev MTU 1500)");
  EXPECT_EQ(active.expected(), "4096");
  EXPECT_THAT(active.remedy(), HasSubstr("largest IB MTU that fits the Ethernet MTU"));
}

TEST_F(RoceFaultTest, PeermemAbsentFlipsGpudirect) {
  inventory_.mutable_stack()->set_peermem_loaded(false);
  inventory_.mutable_stack()->set_peermem_source("/sys/module/nvidia_peermem: absent");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("gpudirect.peermem"));
  const v1::Finding& peermem = Get(findings, "gpudirect.peermem");
  EXPECT_EQ(peermem.status(), v1::Finding::fail);
  EXPECT_THAT(peermem.observed(), HasSubstr("not loaded"));
  EXPECT_THAT(peermem.remedy(), HasSubstr("sudo modprobe nvidia-peermem"));
  EXPECT_THAT(peermem.remedy(), HasSubstr("/etc/modules-load.d"));
  EXPECT_THAT(peermem.remedy(),
              HasSubstr("MLNX_OFED, then the NVIDIA driver, then nvidia-peermem"));
}

TEST_F(RoceFaultTest, PfcOnPriority4FlipsQosPfc) {
  testing::Qos(inventory_, "enp193s0np0").set_pfc_enabled_mask(0x10);
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("qos.pfc mlx5_1 1"));
  const v1::Finding& pfc = Get(findings, "qos.pfc", "mlx5_1", 1);
  EXPECT_EQ(pfc.observed(), "priorities 4");
  EXPECT_EQ(pfc.expected(), "priority 3 only");
  EXPECT_THAT(pfc.message(), HasSubstr("node1 mlx5_1 port 1 netdev enp193s0np0"));
  EXPECT_THAT(pfc.remedy(), HasSubstr("sudo mlnx_qos -i enp193s0np0 --pfc 0,0,0,1,0,0,0,0"));
  EXPECT_THAT(pfc.remedy(), HasSubstr("dcb pfc set dev enp193s0np0 prio-pfc all:off 3:on"));
  EXPECT_THAT(pfc.remedy(), HasSubstr("every switch hop"));
}

TEST_F(RoceFaultTest, PcieX8FlipsPcieNic) {
  testing::Pci(inventory_, "mlx5_0").set_current_width(8);
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("pcie.nic mlx5_0"));
  const v1::Finding& pcie = Get(findings, "pcie.nic", "mlx5_0");
  EXPECT_EQ(pcie.observed(), "Gen4 x8 (max Gen4 x16)");
  EXPECT_EQ(pcie.expected(), "Gen4 x16");
  EXPECT_THAT(pcie.remedy(), HasSubstr("full x16 slot wired to the CPU"));
  EXPECT_THAT(pcie.remedy(), HasSubstr("riser"));
  EXPECT_THAT(pcie.remedy(), HasSubstr("bifurcation"));
  EXPECT_THAT(pcie.remedy(), HasSubstr("the card itself reports Gen4 x16"));
}

TEST_F(RoceFaultTest, MissingRailFlipsRailPresentAndItsGpusPlacement) {
  inventory_.mutable_rdma_devices()->RemoveLast();  // mlx5_1
  std::vector<v1::Finding> findings = Evaluate();
  // gpu2/gpu3 sat next to mlx5_1; their nearest rail is now across the socket.
  EXPECT_THAT(NonPassing(findings),
              ElementsAre("rail.present mlx5_1", "topology.gpu_nic gpu2", "topology.gpu_nic gpu3"));
  const v1::Finding& rail = Get(findings, "rail.present", "mlx5_1");
  EXPECT_EQ(rail.observed(), "absent; devices present: mlx5_0");
  EXPECT_THAT(rail.remedy(), HasSubstr("seated"));
  EXPECT_THAT(rail.remedy(), HasSubstr("mlx5_core mlx5_ib"));
  EXPECT_THAT(rail.remedy(), HasSubstr("fix the plan's rails"));
  for (const v1::Finding& finding : findings) {
    if (finding.id() != "rail.present") {
      EXPECT_NE(finding.device(), "mlx5_1") << finding.id();
    }
  }
}

TEST_F(RoceFaultTest, GidIndexOnRoceV1FlipsRoceGid) {
  plan_.fabric.roce.gid_index = 2;
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("roce.gid mlx5_0 1", "roce.gid mlx5_1 1"));
  const v1::Finding& gid = Get(findings, "roce.gid", "mlx5_0", 1);
  EXPECT_EQ(gid.observed(), "index 2: IB/RoCE v1 10.10.1.1");
  EXPECT_EQ(gid.expected(), "index 2: RoCE v2, IPv4-mapped");
  EXPECT_THAT(gid.remedy(), HasSubstr("NCCL_IB_GID_INDEX"));
  EXPECT_THAT(gid.remedy(), HasSubstr("show_gids"));
  EXPECT_THAT(gid.remedy(), HasSubstr("that is index 3"));
}

TEST_F(RoceFaultTest, ManagementOnRdmaNetdevFlipsMgmtSeparate) {
  inventory_.set_management_netdev("enp65s0np0");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("mgmt.separate enp65s0np0"));
  const v1::Finding& mgmt = Get(findings, "mgmt.separate", "enp65s0np0");
  EXPECT_EQ(mgmt.observed(), "enp65s0np0 (RDMA netdev of mlx5_0 port 1)");
  EXPECT_THAT(mgmt.remedy(), HasSubstr("separate management plane (1 GbE"));
  EXPECT_THAT(mgmt.remedy(), HasSubstr("you need SSH exactly when the RDMA fabric is broken"));
}

TEST_F(RoceFaultTest, UnsyncedClockFlipsClockNtp) {
  inventory_.mutable_clock()->set_synchronized(false);
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("clock.ntp"));
  const v1::Finding& clock = Get(findings, "clock.ntp");
  EXPECT_EQ(clock.status(), v1::Finding::fail);
  EXPECT_THAT(clock.remedy(), HasSubstr("chrony or systemd-timesyncd"));
  EXPECT_THAT(clock.remedy(), HasSubstr("wrong gradients"));
}

TEST_F(RoceFaultTest, UnknownRateIsUnknownWithTheAgentsReason) {
  v1::RdmaPort& port = testing::Port(inventory_, "mlx5_0");
  port.clear_rate_gbps();
  port.clear_rate_text();
  v1::Unknown* unknown = port.add_unknowns();
  unknown->set_field("rate");
  unknown->set_path("/sys/class/infiniband/mlx5_0/ports/1/rate");
  unknown->set_reason("No such file or directory");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NonPassing(findings), ElementsAre("port.rate mlx5_0 1"));
  const v1::Finding& rate = Get(findings, "port.rate", "mlx5_0", 1);
  EXPECT_EQ(rate.status(), v1::Finding::unknown);
  EXPECT_EQ(rate.severity(), v1::Finding::error);
  EXPECT_TRUE(BlocksCertification(rate));
  EXPECT_EQ(rate.observed(),
            "unknown: No such file or directory (/sys/class/infiniband/mlx5_0/ports/1/rate)");
  EXPECT_THAT(rate.message(), HasSubstr("node1 mlx5_0 port 1 rate is unknown"));
  EXPECT_THAT(rate.remedy(), HasSubstr("/sys/class/infiniband/mlx5_0/ports/1/rate"));
}

TEST(InfinibandFaultTest, InitWithoutSubnetManagerFlipsStateAndSubnetManager) {
  plan::Plan plan = testing::InfinibandPlan();
  v1::Inventory inventory = testing::HealthyInfinibandInventory();
  v1::RdmaPort& port = testing::Port(inventory, "mlx5_0");
  port.set_state_code(2);
  port.set_state("INIT");
  port.set_lid(0);
  port.set_sm_lid(0);
  std::vector<v1::Finding> findings = EvaluateNode(plan, plan.nodes[0], inventory);
  EXPECT_THAT(NonPassing(findings),
              UnorderedElementsAre("port.state mlx5_0 1", "ib.subnet_manager mlx5_0 1"));
  const v1::Finding& state = Get(findings, "port.state", "mlx5_0", 1);
  EXPECT_EQ(state.observed(), "2: INIT");
  EXPECT_THAT(state.message(), HasSubstr("trained link"));
  for (const v1::Finding* finding : {&state, &Get(findings, "ib.subnet_manager", "mlx5_0", 1)}) {
    EXPECT_THAT(finding->remedy(), HasSubstr("No subnet manager is running"));
    EXPECT_THAT(finding->remedy(), HasSubstr("opensm"));
    EXPECT_THAT(finding->remedy(), HasSubstr("switch's embedded SM"));
    EXPECT_THAT(finding->remedy(), HasSubstr("two competing"));
  }
}

TEST(InfinibandFaultTest, SmallActiveMtuPointsAtOpensmPartitions) {
  plan::Plan plan = testing::InfinibandPlan();
  v1::Inventory inventory = testing::HealthyInfinibandInventory();
  testing::Port(inventory, "mlx5_1").set_active_mtu(2048);
  std::vector<v1::Finding> findings = EvaluateNode(plan, plan.nodes[0], inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("mtu.active mlx5_1 1"));
  const v1::Finding& mtu = Get(findings, "mtu.active", "mlx5_1", 1);
  EXPECT_THAT(mtu.remedy(), HasSubstr("partitions.conf"));
  EXPECT_THAT(mtu.remedy(), HasSubstr("mtu=5"));
}

}  // namespace
}  // namespace clustercert::controller::checks
