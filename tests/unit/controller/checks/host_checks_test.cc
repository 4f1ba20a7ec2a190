#include "controller/checks/host_checks.h"

#include <vector>

#include "controller/checks/check_context.h"
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

std::vector<v1::Finding> HostFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendStackChecks(context, findings);
  AppendGpuChecks(context, findings);
  return findings;
}

TEST(HostChecksTest, MissingIbUverbsFailsModules) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  for (v1::KernelModule& module : *inventory.mutable_stack()->mutable_modules()) {
    if (module.name() == "ib_uverbs") module.set_loaded(false);
  }
  std::vector<v1::Finding> findings = HostFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("stack.modules"));
  const v1::Finding& modules = Get(findings, "stack.modules");
  EXPECT_EQ(modules.observed(), "ib_uverbs not loaded");
  EXPECT_THAT(modules.remedy(), HasSubstr("sudo modprobe ib_uverbs"));
  EXPECT_THAT(modules.remedy(), HasSubstr("userspace verbs"));
}

TEST(HostChecksTest, UnreportedModuleIsUnknownNotPass) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_stack()->clear_modules();
  v1::Unknown* unknown = inventory.mutable_stack()->add_unknowns();
  unknown->set_field("modules");
  unknown->set_path("/proc/modules");
  unknown->set_reason("Permission denied");
  const v1::Finding modules = Get(HostFindings(testing::RocePlan(), inventory), "stack.modules");
  EXPECT_EQ(modules.status(), v1::Finding::unknown);
  EXPECT_EQ(modules.observed(), "unknown: Permission denied (/proc/modules)");
}

TEST(HostChecksTest, UpstreamStackIsAWarningThatDoesNotBlock) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_stack()->clear_ofed_version();
  inventory.mutable_stack()->set_rdma_core_version("44.0");
  std::vector<v1::Finding> findings = HostFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("stack.ofed"));
  const v1::Finding& ofed = Get(findings, "stack.ofed");
  EXPECT_EQ(ofed.status(), v1::Finding::fail);
  EXPECT_EQ(ofed.severity(), v1::Finding::warning);
  EXPECT_FALSE(BlocksCertification(ofed));
  EXPECT_EQ(ofed.observed(), "upstream rdma-core 44.0");
  EXPECT_THAT(ofed.remedy(), HasSubstr("--add-kernel-support"));
  EXPECT_THAT(ofed.remedy(), HasSubstr("mlxconfig"));
  EXPECT_THAT(ofed.remedy(), HasSubstr("perftest"));
  EXPECT_THAT(ofed.remedy(), HasSubstr("nvidia-peermem"));
}

TEST(HostChecksTest, OfedNotExpectedIsSkipped) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.ofed = false;
  const v1::Finding ofed = Get(HostFindings(plan, testing::HealthyRoceInventory()), "stack.ofed");
  EXPECT_EQ(ofed.status(), v1::Finding::skipped);
  EXPECT_THAT(ofed.message(), HasSubstr("plan sets expect.ofed: false"));
}

TEST(HostChecksTest, FewerGpusIsAnErrorMoreIsAWarning) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_pci()->RemoveLast();
  const v1::Finding fewer = Get(HostFindings(testing::RocePlan(), inventory), "gpu.count");
  EXPECT_EQ(fewer.status(), v1::Finding::fail);
  EXPECT_EQ(fewer.severity(), v1::Finding::error);
  EXPECT_EQ(fewer.observed(), "3 GPUs on PCIe");
  EXPECT_EQ(fewer.message(), "node1 has 3 GPUs on PCIe, plan expects 4.");

  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].gpus = 2;
  const v1::Finding more = Get(HostFindings(plan, testing::HealthyRoceInventory()), "gpu.count");
  EXPECT_EQ(more.status(), v1::Finding::fail);
  EXPECT_EQ(more.severity(), v1::Finding::warning);
  EXPECT_FALSE(BlocksCertification(more));
}

TEST(HostChecksTest, NodeWithoutGpusSkipsPeermemAndCount) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].gpus = 0;
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_stack()->set_peermem_loaded(false);
  std::vector<v1::Finding> findings = HostFindings(plan, inventory);
  EXPECT_EQ(Get(findings, "gpudirect.peermem").status(), v1::Finding::skipped);
  EXPECT_EQ(Get(findings, "gpu.count").status(), v1::Finding::skipped);
}

TEST(HostChecksTest, PeermemNotExpectedIsSkipped) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.nvidia_peermem = false;
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_stack()->set_peermem_loaded(false);
  const v1::Finding peermem = Get(HostFindings(plan, inventory), "gpudirect.peermem");
  EXPECT_EQ(peermem.status(), v1::Finding::skipped);
  EXPECT_THAT(peermem.message(), HasSubstr("expect.nvidia_peermem: false"));
}

}  // namespace
}  // namespace clustercert::controller::checks
