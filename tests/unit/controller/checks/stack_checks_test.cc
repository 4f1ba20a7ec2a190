// The kernel-module checks over fixture hosts shaped like real ones: a
// ConnectX-7 RoCE host with MLNX_OFED's DKMS modules (healthy, ib_uverbs not
// loaded, a rebuild installed but not loaded, mlx5_ib reloaded after
// nvidia_peermem) and the soft-RoCE lab's VM, each read by the real
// StackCollector and RdmaCollector (tests/fixtures/sysfs/make_stack_fixtures.py).
#include "controller/checks/stack_checks.h"

#include <string>
#include <vector>

#include "agent/inventory/rdma_collector.h"
#include "agent/inventory/stack_collector.h"
#include "controller/checks/check_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::HasSubstr;

class NoCommands : public process::CommandRunner {
 public:
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration) override {
    ADD_FAILURE() << "a captured host runs no command: " << argv[0];
    return absl::InternalError("not expected");
  }
};

v1::Inventory FixtureHost(const std::string& name) {
  SysfsView view(std::string(CLUSTERCERT_FIXTURES) + "/sysfs/" + name);
  NoCommands commands;
  v1::Inventory inventory;
  inventory.set_node_name("node1");
  *inventory.mutable_stack() = agent::inventory::StackCollector(view, commands).Collect();
  auto devices = agent::inventory::RdmaCollector(view, nullptr).Collect([](const std::string&) {
    return std::nullopt;
  });
  EXPECT_TRUE(devices.ok()) << devices.status();
  if (devices.ok()) {
    for (auto& device : *devices) *inventory.add_rdma_devices() = std::move(device);
  }
  return inventory;
}

std::vector<v1::Finding> ModuleFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendModuleChecks(context, findings);
  return findings;
}

plan::Plan Cx7Plan() {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"mlx5_0"};
  return plan;
}

TEST(StackChecksTest, AHealthyConnectX7HostPassesAllThree) {
  const auto findings = ModuleFindings(Cx7Plan(), FixtureHost("stack-cx7-healthy"));
  ASSERT_EQ(findings.size(), 3u);
  for (const auto& f : findings) EXPECT_EQ(f.status(), v1::Finding::pass) << f.DebugString();
  EXPECT_EQ(testing::Get(findings, "stack.modules").observed(),
            "ib_core, ib_uverbs, mlx5_core, mlx5_ib loaded");
  EXPECT_THAT(testing::Get(findings, "stack.srcversion").observed(),
              HasSubstr("mlx5_core 4F2B7A9C1E3D5B8A0C6E2F4"));
  EXPECT_EQ(testing::Get(findings, "stack.module_order").observed(),
            "mlx5_core, ib_core, ib_uverbs, mlx5_ib, nvidia, nvidia_peermem");
}

TEST(StackChecksTest, IbUverbsNotLoadedFailsModules) {
  const auto findings = ModuleFindings(Cx7Plan(), FixtureHost("stack-cx7-no-uverbs"));
  const v1::Finding& modules = testing::Get(findings, "stack.modules");
  EXPECT_EQ(modules.status(), v1::Finding::fail);
  EXPECT_EQ(modules.severity(), v1::Finding::error);
  EXPECT_EQ(modules.observed(), "ib_uverbs not loaded");
  EXPECT_THAT(modules.message(), HasSubstr("node1 has ib_uverbs (for userspace verbs) not loaded"));
  EXPECT_THAT(modules.remedy(), HasSubstr("sudo modprobe ib_uverbs"));
  // What is loaded is the installed build, in the seed's order.
  EXPECT_EQ(testing::Get(findings, "stack.srcversion").status(), v1::Finding::pass);
  EXPECT_EQ(testing::Get(findings, "stack.module_order").status(), v1::Finding::pass);
}

TEST(StackChecksTest, ARebuildInstalledButNotLoadedFailsSrcversion) {
  const auto findings = ModuleFindings(Cx7Plan(), FixtureHost("stack-cx7-srcversion-mismatch"));
  const v1::Finding& src = testing::Get(findings, "stack.srcversion");
  EXPECT_EQ(src.status(), v1::Finding::fail);
  EXPECT_EQ(src.severity(), v1::Finding::error);
  EXPECT_THAT(src.message(),
              HasSubstr("mlx5_core loaded srcversion 4F2B7A9C1E3D5B8A0C6E2F4 differs from "
                        "/lib/modules/6.8.0-45-generic/updates/dkms/mlx5_core.ko's "
                        "D03A6C8E2B4F7A1C9E5B3D6"));
  EXPECT_THAT(src.message(), HasSubstr("mlx5_ib loaded srcversion"));
  EXPECT_THAT(src.message(), HasSubstr("a DKMS or OFED rebuild was installed but not loaded"));
  EXPECT_THAT(src.remedy(), HasSubstr("Reboot"));
  EXPECT_THAT(src.remedy(), HasSubstr("modprobe -r"));
  EXPECT_EQ(testing::Get(findings, "stack.modules").status(), v1::Finding::pass);
}

TEST(StackChecksTest, Mlx5IbReloadedAfterPeermemIsNamed) {
  const auto findings = ModuleFindings(Cx7Plan(), FixtureHost("stack-cx7-out-of-order"));
  const v1::Finding& order = testing::Get(findings, "stack.module_order");
  EXPECT_EQ(order.status(), v1::Finding::fail);
  EXPECT_EQ(order.severity(), v1::Finding::warning);
  EXPECT_EQ(order.observed(), "nvidia_peermem was loaded before mlx5_ib");
  EXPECT_THAT(order.message(), HasSubstr("inferred from /proc/modules"));
  EXPECT_THAT(order.remedy(),
              HasSubstr("modprobe -r nvidia_peermem && sudo modprobe nvidia_peermem"));
  EXPECT_EQ(testing::Get(findings, "stack.modules").status(), v1::Finding::pass);
  EXPECT_EQ(testing::Get(findings, "stack.srcversion").status(), v1::Finding::pass);
}

TEST(StackChecksTest, TheSoftRoceLabNeedsRdmaRxeNotMlx5) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"rxe0"};
  const v1::Inventory inventory = FixtureHost("rxe-vm");
  const auto findings = ModuleFindings(plan, inventory);
  const v1::Finding& modules = testing::Get(findings, "stack.modules");
  EXPECT_EQ(modules.status(), v1::Finding::pass) << modules.DebugString();
  EXPECT_EQ(modules.observed(), "ib_core, ib_uverbs, rdma_rxe loaded");
  // The capture holds no /lib/modules: nothing to compare, said so, never a pass.
  const v1::Finding& src = testing::Get(findings, "stack.srcversion");
  EXPECT_EQ(src.status(), v1::Finding::skipped);
  EXPECT_THAT(src.message(), HasSubstr("no /lib/modules/"));
  EXPECT_EQ(testing::Get(findings, "stack.module_order").status(), v1::Finding::pass);

  v1::Inventory unloaded = inventory;
  for (auto& module : *unloaded.mutable_stack()->mutable_modules()) {
    if (module.name() == "rdma_rxe") module.set_loaded(false);
  }
  const auto unloaded_findings = ModuleFindings(plan, unloaded);
  const v1::Finding& missing = testing::Get(unloaded_findings, "stack.modules");
  EXPECT_EQ(missing.status(), v1::Finding::fail);
  EXPECT_THAT(missing.message(), HasSubstr("rdma_rxe (for rxe0)"));
}

TEST(StackChecksTest, AnOlderInventorySkipsWhatItDidNotRecord) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  for (auto& module : *inventory.mutable_stack()->mutable_modules()) {
    module.clear_load_rank();
    module.set_file_read(false);
    module.clear_file_source();
  }
  const auto findings = ModuleFindings(testing::RocePlan(), inventory);
  EXPECT_EQ(testing::Get(findings, "stack.modules").status(), v1::Finding::pass);
  EXPECT_EQ(testing::Get(findings, "stack.srcversion").status(), v1::Finding::skipped);
  EXPECT_EQ(testing::Get(findings, "stack.module_order").status(), v1::Finding::skipped);
}

TEST(StackChecksTest, AnUnreadableModuleFileOnALiveHostIsUnknown) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  auto* module = inventory.mutable_stack()->mutable_modules(0);
  module->set_file_read(false);
  module->set_file_source("/lib/modules/6.8.0-45-generic/modules.dep: Permission denied");
  auto* unknown = inventory.mutable_stack()->add_unknowns();
  unknown->set_field("modules.file_srcversion");
  unknown->set_path("/lib/modules/6.8.0-45-generic/modules.dep");
  unknown->set_reason("Permission denied");
  const auto findings = ModuleFindings(testing::RocePlan(), inventory);
  EXPECT_EQ(testing::Get(findings, "stack.srcversion").status(), v1::Finding::unknown);
}

TEST(StackChecksTest, EthernetPlansSkipAllThree) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.type = plan::FabricType::kEthernet;
  for (const auto& f : ModuleFindings(plan, testing::HealthyRoceInventory())) {
    EXPECT_EQ(f.status(), v1::Finding::skipped) << f.id();
  }
}

}  // namespace
}  // namespace clustercert::controller::checks
