// PCIe links and GPU/NIC placement.
#include <vector>

#include "controller/checks/check_context.h"
#include "controller/checks/pcie_checks.h"
#include "controller/checks/topology_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::ElementsAre;
using testing::Get;
using ::testing::HasSubstr;
using testing::NonPassing;
using ::testing::Not;
using ::testing::Optional;

std::vector<v1::Finding> PlacementFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendPcieChecks(context, findings);
  AppendTopologyChecks(context, findings);
  return findings;
}

TEST(PcieChecksTest, VirtualDeviceIsSkippedWithTheReason) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"rxe0"};
  plan.nodes[0].gpus = 0;
  v1::Inventory inventory;
  inventory.add_rdma_devices()->set_name("rxe0");
  std::vector<v1::Finding> findings = PlacementFindings(plan, inventory);
  const v1::Finding& pcie = Get(findings, "pcie.nic", "rxe0");
  EXPECT_EQ(pcie.status(), v1::Finding::skipped);
  EXPECT_THAT(pcie.message(), HasSubstr("rxe0 is a virtual device with no PCIe link"));
}

TEST(PcieChecksTest, NoExpectationSkipsBoth) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.pcie = {};
  std::vector<v1::Finding> findings = PlacementFindings(plan, testing::HealthyRoceInventory());
  EXPECT_EQ(Get(findings, "pcie.nic").status(), v1::Finding::skipped);
  EXPECT_EQ(Get(findings, "pcie.gpu").status(), v1::Finding::skipped);
}

TEST(PcieChecksTest, Gen3NicFails) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Pci(inventory, "mlx5_1").set_current_gen(3);
  testing::Pci(inventory, "mlx5_1").set_max_gen(3);
  std::vector<v1::Finding> findings = PlacementFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("pcie.nic mlx5_1"));
  const v1::Finding& pcie = Get(findings, "pcie.nic", "mlx5_1");
  EXPECT_EQ(pcie.observed(), "Gen3 x16 (max Gen3 x16)");
  EXPECT_EQ(pcie.message(),
            "node1 mlx5_1 at 0000:c1:00.0 runs PCIe Gen3 x16, plan expects at least Gen4 x16.");
  EXPECT_THAT(pcie.remedy(), Not(HasSubstr("the card itself reports")));
}

TEST(PcieChecksTest, IdleGpuAtGen1IsAWarningNotAnError) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Pci(inventory, "gpu1").set_current_gen(1);
  std::vector<v1::Finding> findings = PlacementFindings(testing::RocePlan(), inventory);
  const v1::Finding& pcie = Get(findings, "pcie.gpu", "gpu1");
  EXPECT_EQ(pcie.status(), v1::Finding::fail);
  EXPECT_EQ(pcie.severity(), v1::Finding::warning);
  EXPECT_THAT(pcie.remedy(), HasSubstr("when idle"));
}

TEST(PcieChecksTest, GpuAtX8IsAnError) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Pci(inventory, "gpu2").set_current_width(8);
  const v1::Finding pcie =
      Get(PlacementFindings(testing::RocePlan(), inventory), "pcie.gpu", "gpu2");
  EXPECT_EQ(pcie.severity(), v1::Finding::error);
  EXPECT_THAT(pcie.remedy(), HasSubstr("full x16 slot"));
}

TEST(PcieChecksTest, UnreadableLinkSpeedIsUnknown) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::PciFunction& nic = testing::Pci(inventory, "mlx5_0");
  nic.clear_current_gen();
  v1::Unknown* unknown = nic.add_unknowns();
  unknown->set_field("current_link_speed");
  unknown->set_path("/sys/bus/pci/devices/0000:41:00.0/current_link_speed");
  unknown->set_reason("unparsable: 'Unknown'");
  const v1::Finding pcie =
      Get(PlacementFindings(testing::RocePlan(), inventory), "pcie.nic", "mlx5_0");
  EXPECT_EQ(pcie.status(), v1::Finding::unknown);
  EXPECT_EQ(
      pcie.observed(),
      "unknown: unparsable: 'Unknown' (/sys/bus/pci/devices/0000:41:00.0/current_link_speed)");
}

TEST(TopologyChecksTest, RelationOrder) {
  EXPECT_THAT(RelationRank("PIX"), Optional(0));
  EXPECT_THAT(RelationRank("PHB"), Optional(2));
  EXPECT_THAT(RelationRank("SYS"), Optional(4));
  EXPECT_EQ(RelationRank("NV12"), std::nullopt);
}

TEST(TopologyChecksTest, GpuWhoseNearestNicIsAcrossTheSocketFails) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  for (v1::GpuNicPath& path : *inventory.mutable_gpu_nic_paths()) {
    if (path.gpu() == "gpu0") path.set_relation("SYS");
  }
  std::vector<v1::Finding> findings = PlacementFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("topology.gpu_nic gpu0"));
  const v1::Finding& topology = Get(findings, "topology.gpu_nic", "gpu0");
  EXPECT_EQ(topology.observed(), "SYS to mlx5_0");
  EXPECT_EQ(topology.expected(), "PHB or closer, same NUMA node");
  EXPECT_THAT(topology.remedy(), HasSubstr("same PCIe switch"));
  EXPECT_THAT(topology.remedy(), HasSubstr("NCCL_NET_GDR_LEVEL"));
  EXPECT_THAT(topology.remedy(), HasSubstr("5x slower"));
}

TEST(TopologyChecksTest, PlanAllowingSysStillFailsOnSameNuma) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.max_gpu_nic_relation = "SYS";
  v1::Inventory inventory = testing::HealthyRoceInventory();
  for (v1::GpuNicPath& path : *inventory.mutable_gpu_nic_paths()) {
    if (path.gpu() == "gpu3") path.set_relation("SYS");
  }
  EXPECT_EQ(Get(PlacementFindings(plan, inventory), "topology.gpu_nic", "gpu3").status(),
            v1::Finding::fail);
  plan.expect.gpu_nic_same_numa = false;
  EXPECT_EQ(Get(PlacementFindings(plan, inventory), "topology.gpu_nic", "gpu3").status(),
            v1::Finding::pass);
}

TEST(TopologyChecksTest, NoPathsIsUnknown) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.clear_gpu_nic_paths();
  v1::Unknown* unknown = inventory.add_unknowns();
  unknown->set_field("gpu_nic_paths");
  unknown->set_path("/sys/bus/pci/devices");
  unknown->set_reason("Permission denied");
  const v1::Finding topology =
      Get(PlacementFindings(testing::RocePlan(), inventory), "topology.gpu_nic", "gpu0");
  EXPECT_EQ(topology.status(), v1::Finding::unknown);
  EXPECT_EQ(topology.observed(), "unknown: Permission denied (/sys/bus/pci/devices)");
}

}  // namespace
}  // namespace clustercert::controller::checks
