// gpudirect.peermem on inventories that carry Stack.gpudirect_mechanism, and
// on older ones that do not (judged with the old text so their certificates
// still verify).
#include <string>
#include <vector>

#include "controller/checks/check_context.h"
#include "controller/checks/host_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using testing::Get;
using ::testing::HasSubstr;

v1::Finding Gpudirect(const v1::Inventory& inventory) {
  const plan::Plan plan = testing::RocePlan();
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendGpuChecks(context, findings);
  return Get(findings, "gpudirect.peermem");
}

v1::Inventory WithMechanism(const std::string& mechanism, const std::string& source) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::Stack* stack = inventory.mutable_stack();
  stack->set_peermem_loaded(mechanism == "nvidia_peermem");
  stack->set_gpudirect_mechanism(mechanism);
  stack->set_gpudirect_source(source);
  return inventory;
}

TEST(GpudirectCheckTest, DmaBufPasses) {
  const v1::Finding finding = Gpudirect(WithMechanism(
      "dma-buf",
      "kernel 6.8.0-45-generic >= 5.12 and NVIDIA open kernel module 550.54.15: DMA-BUF"));
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.observed(), "dma-buf");
  EXPECT_EQ(finding.expected(), "nvidia_peermem or dma-buf");
  EXPECT_EQ(finding.message(),
            "node1 reaches GPU memory through dma-buf (kernel 6.8.0-45-generic >= 5.12 and NVIDIA "
            "open kernel module 550.54.15: DMA-BUF), as the plan's GPUDirect RDMA expects.");
}

TEST(GpudirectCheckTest, PeermemPasses) {
  const v1::Finding finding = Gpudirect(WithMechanism(
      "nvidia_peermem", "nvidia_peermem loaded (/sys/module/nvidia_peermem/version)"));
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.observed(), "nvidia_peermem");
}

TEST(GpudirectCheckTest, NoneFailsWithBothFixes) {
  const v1::Finding finding = Gpudirect(WithMechanism(
      "none", "nvidia_peermem not loaded and no DMA-BUF: kernel 5.10.0-28-amd64 < 5.12"));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_EQ(finding.observed(), "none");
  EXPECT_EQ(finding.expected(), "nvidia_peermem or dma-buf");
  EXPECT_THAT(finding.message(), HasSubstr("kernel 5.10.0-28-amd64 < 5.12"));
  EXPECT_THAT(finding.remedy(), HasSubstr("load nvidia_peermem (sudo modprobe nvidia_peermem"));
  EXPECT_THAT(finding.remedy(),
              HasSubstr("use the open GPU kernel modules on a kernel >= 5.12 for DMA-BUF"));
}

TEST(GpudirectCheckTest, UndecidedMechanismIsUnknown) {
  v1::Inventory inventory = WithMechanism(
      "none", "nvidia_peermem not loaded and DMA-BUF undecided: kernel release unknown");
  v1::Unknown* unknown = inventory.mutable_stack()->add_unknowns();
  unknown->set_field("gpudirect_mechanism");
  unknown->set_path("/proc/sys/kernel/osrelease");
  unknown->set_reason("DMA-BUF undecided: kernel release unknown");
  const v1::Finding finding = Gpudirect(inventory);
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_THAT(finding.remedy(), HasSubstr("/proc/sys/kernel/osrelease"));
}

TEST(GpudirectCheckTest, PlanWithoutGpudirectSkipsEvenOnNone) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.nvidia_peermem = false;
  const v1::Inventory inventory = WithMechanism("none", "no NVIDIA kernel driver is loaded");
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendGpuChecks(context, findings);
  EXPECT_EQ(Get(findings, "gpudirect.peermem").status(), v1::Finding::skipped);
}

// Inventories from agents before gpudirect_mechanism: the same text as ever.
TEST(GpudirectCheckTest, OldInventoryTextUnchanged) {
  v1::Inventory loaded = testing::HealthyRoceInventory();
  ASSERT_TRUE(loaded.stack().gpudirect_mechanism().empty());
  v1::Finding pass = Gpudirect(loaded);
  EXPECT_EQ(pass.status(), v1::Finding::pass);
  EXPECT_EQ(pass.observed(), "loaded (/sys/module/nvidia_peermem/version)");
  EXPECT_EQ(pass.expected(), "loaded");
  EXPECT_EQ(pass.message(), "node1 has nvidia_peermem loaded, as the plan expects.");

  v1::Inventory absent = testing::HealthyRoceInventory();
  absent.mutable_stack()->set_peermem_loaded(false);
  absent.mutable_stack()->set_peermem_source("no nvidia_peermem");
  v1::Finding fail = Gpudirect(absent);
  EXPECT_EQ(fail.status(), v1::Finding::fail);
  EXPECT_EQ(fail.observed(), "not loaded (no nvidia_peermem)");
  EXPECT_EQ(fail.expected(), "loaded");
  EXPECT_EQ(fail.message(),
            "node1 does not have nvidia_peermem loaded, plan expects it loaded for GPUDirect "
            "RDMA.");
  EXPECT_THAT(fail.remedy(), HasSubstr("sudo modprobe nvidia-peermem"));
}

}  // namespace
}  // namespace clustercert::controller::checks
