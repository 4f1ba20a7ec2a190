#include "controller/checks/host_setting_checks.h"

#include <string>
#include <vector>

#include "agent/inventory/inventory_collector.h"
#include "controller/checks/check_context.h"
#include "controller/checks/node_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/fixture_collection.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using testing::AddBridge;
using testing::AddHealthyHostSettings;
using ::testing::ElementsAre;
using testing::Get;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::NonPassing;

std::vector<v1::Finding> Evaluate(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendHostSettingChecks(context, findings);
  return findings;
}

v1::Inventory HealthyRoce() { return testing::HealthyRoceInventory(); }

// The shared healthy inventory without the host settings it now carries.
v1::Inventory WithoutHostSettings(v1::Inventory inventory) {
  inventory.clear_pcie_bridges();
  inventory.clear_iommu();
  inventory.clear_nic_firmware();
  return inventory;
}

TEST(HostSettingChecksTest, HealthyNodePasses) {
  std::vector<v1::Finding> findings = Evaluate(testing::RocePlan(), HealthyRoce());
  EXPECT_THAT(NonPassing(findings), IsEmpty());
  const v1::Finding& acs = Get(findings, "pcie.acs");
  EXPECT_EQ(acs.status(), v1::Finding::pass);
  EXPECT_EQ(acs.observed(), "ACS redirect off on 3 bridges");
  EXPECT_EQ(Get(findings, "host.iommu").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_0").observed(), "ETH(2)");
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_1").status(), v1::Finding::pass);
  // No redirect anywhere: ATS has nothing to bypass.
  EXPECT_EQ(Get(findings, "nic.ats").status(), v1::Finding::pass);
}

TEST(HostSettingChecksTest, RedirectOnASwitchPortFailsNamingItAndItsPairs) {
  v1::Inventory inventory = HealthyRoce();
  // SV RR CR UF: what Linux enables when the IOMMU translates.
  inventory.mutable_pcie_bridges(0)->set_acs_control(0x001d);
  inventory.mutable_pcie_bridges(0)->set_p2p_redirect(true);
  std::vector<v1::Finding> findings = Evaluate(testing::RocePlan(), inventory);
  const v1::Finding& acs = Get(findings, "pcie.acs", "0000:40:01.0");
  EXPECT_EQ(acs.status(), v1::Finding::fail);
  EXPECT_EQ(acs.severity(), v1::Finding::error);
  EXPECT_TRUE(BlocksCertification(acs));
  EXPECT_EQ(acs.observed(), "ACSCtl 0x001d: ReqRedir+ CmpltRedir+");
  EXPECT_THAT(acs.message(), HasSubstr("node1 0000:40:01.0"));
  EXPECT_THAT(acs.message(), HasSubstr("gpu0<->mlx5_0, gpu1<->mlx5_0"));
  EXPECT_THAT(acs.remedy(), HasSubstr("setpci -s 0000:40:01.0 ECAP_ACS+6.w=0000"));
  EXPECT_THAT(acs.remedy(), HasSubstr("GPUDirect 5x slower = via host"));
  // Only the redirecting bridge fails; no node-level pass beside it.
  EXPECT_THAT(NonPassing(findings), ElementsAre("pcie.acs 0000:40:01.0", "nic.ats mlx5_0"));
  // ATS is off on the NIC behind it: a warning.
  const v1::Finding& ats = Get(findings, "nic.ats", "mlx5_0");
  EXPECT_EQ(ats.status(), v1::Finding::fail);
  EXPECT_FALSE(BlocksCertification(ats));
  EXPECT_THAT(ats.remedy(), HasSubstr("ATS_ENABLED=1"));
}

TEST(HostSettingChecksTest, AtsOnBehindARedirectPassesAndNotExpectedSkips) {
  v1::Inventory inventory = HealthyRoce();
  inventory.mutable_pcie_bridges(0)->set_acs_control(0x000c);
  inventory.mutable_pcie_bridges(0)->set_p2p_redirect(true);
  inventory.mutable_nic_firmware(0)->mutable_settings(1)->set_value("True(1)");
  EXPECT_EQ(Get(Evaluate(testing::RocePlan(), inventory), "nic.ats", "mlx5_0").status(),
            v1::Finding::pass);
  plan::Plan plan = testing::RocePlan();
  plan.expect.nvidia_peermem = false;
  const v1::Finding ats = Get(Evaluate(plan, inventory), "nic.ats");
  EXPECT_EQ(ats.status(), v1::Finding::skipped);
  EXPECT_THAT(ats.message(), HasSubstr("expect.nvidia_peermem: false"));
}

TEST(HostSettingChecksTest, EgressControlAloneIsRedirect) {
  v1::Inventory inventory = HealthyRoce();
  inventory.mutable_pcie_bridges(2)->set_acs_control(0x0020);  // EgressCtrl+
  inventory.mutable_pcie_bridges(2)->set_p2p_redirect(true);
  const v1::Finding acs = Get(Evaluate(testing::RocePlan(), inventory), "pcie.acs", "0000:c0:01.0");
  EXPECT_EQ(acs.status(), v1::Finding::fail);
  EXPECT_EQ(acs.observed(), "ACSCtl 0x0020: EgressCtrl+");
}

TEST(HostSettingChecksTest, UnreadableBridgeIsUnknownWithTheRootFix) {
  v1::Inventory inventory = HealthyRoce();
  v1::PcieBridge* bridge = inventory.mutable_pcie_bridges(1);
  bridge->clear_acs_control();
  bridge->set_acs_capable(false);
  bridge->set_p2p_redirect(false);
  v1::Unknown* unknown = bridge->add_unknowns();
  unknown->set_field("acs_control");
  unknown->set_path("/sys/bus/pci/devices/0000:40:02.0/config");
  unknown->set_reason("only 64 bytes of config space are readable: run the agent as root");
  std::vector<v1::Finding> findings = Evaluate(testing::RocePlan(), inventory);
  const v1::Finding& acs = Get(findings, "pcie.acs");
  EXPECT_EQ(acs.status(), v1::Finding::unknown);
  EXPECT_TRUE(BlocksCertification(acs));
  EXPECT_THAT(acs.observed(), HasSubstr("only 64 bytes"));
  EXPECT_THAT(acs.observed(), HasSubstr("0000:40:02.0"));
  EXPECT_THAT(acs.remedy(), HasSubstr("as root"));
}

TEST(HostSettingChecksTest, SwitchedPairsWithoutReportedBridgesAreUnknown) {
  // An inventory that lists PIX/PXB pairs but no bridge (an agent that did not look).
  v1::Inventory inventory = WithoutHostSettings(testing::HealthyRoceInventory());
  const v1::Finding acs = Get(Evaluate(testing::RocePlan(), inventory), "pcie.acs");
  EXPECT_EQ(acs.status(), v1::Finding::unknown);
  EXPECT_THAT(acs.observed(), HasSubstr("reported no PCIe bridge for gpu0<->mlx5_0"));
}

TEST(HostSettingChecksTest, PairsMeetingAtTheHostBridgeAreNotJudged) {
  v1::Inventory inventory = WithoutHostSettings(testing::HealthyRoceInventory());
  for (v1::GpuNicPath& path : *inventory.mutable_gpu_nic_paths()) {
    if (path.relation() != "SYS") path.set_relation("PHB");
  }
  // A root port with Linux's default ACS: peer-to-peer crosses the root complex anyway.
  AddBridge(inventory, "0000:00:01.0", {"gpu0<->mlx5_0"}, 0x001d);
  const v1::Finding acs = Get(Evaluate(testing::RocePlan(), inventory), "pcie.acs");
  EXPECT_EQ(acs.status(), v1::Finding::pass);
  EXPECT_EQ(acs.observed(), "no GPU<->rail path crosses a PCIe switch");
}

TEST(HostSettingChecksTest, AcsSkippedWithoutGpusOrOnEthernet) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].gpus = 0;
  EXPECT_EQ(Get(Evaluate(plan, HealthyRoce()), "pcie.acs").status(), v1::Finding::skipped);
  plan = testing::RocePlan();
  plan.fabric.type = plan::FabricType::kEthernet;
  EXPECT_THAT(Get(Evaluate(plan, HealthyRoce()), "pcie.acs").message(), HasSubstr("TCP-only"));
  v1::Inventory no_paths = HealthyRoce();
  no_paths.clear_gpu_nic_paths();
  EXPECT_EQ(Get(Evaluate(testing::RocePlan(), no_paths), "pcie.acs").status(),
            v1::Finding::skipped);
}

TEST(HostSettingChecksTest, IommuModes) {
  v1::Inventory inventory = HealthyRoce();
  inventory.mutable_iommu()->set_mode("translated");
  inventory.mutable_iommu()->set_cmdline("intel_iommu=on");
  const v1::Finding translated = Get(Evaluate(testing::RocePlan(), inventory), "host.iommu");
  EXPECT_EQ(translated.status(), v1::Finding::fail);
  EXPECT_EQ(translated.severity(), v1::Finding::warning);
  EXPECT_FALSE(BlocksCertification(translated));
  EXPECT_EQ(translated.observed(), "translated (intel_iommu=on; 1 IOMMU units)");
  EXPECT_THAT(translated.remedy(), HasSubstr("iommu=pt (intel_iommu=on iommu=pt on Intel)"));

  plan::Plan no_gpus = testing::RocePlan();
  no_gpus.nodes[0].gpus = 0;
  EXPECT_EQ(Get(Evaluate(no_gpus, inventory), "host.iommu").status(), v1::Finding::pass);

  inventory.mutable_iommu()->set_mode("off");
  EXPECT_EQ(Get(Evaluate(testing::RocePlan(), inventory), "host.iommu").status(),
            v1::Finding::pass);

  inventory.clear_iommu();
  const v1::Finding missing = Get(Evaluate(testing::RocePlan(), inventory), "host.iommu");
  EXPECT_EQ(missing.status(), v1::Finding::unknown);
  EXPECT_FALSE(BlocksCertification(missing));
  inventory.mutable_iommu()->set_mode("unknown");
  inventory.mutable_iommu()->set_source("/proc/cmdline unreadable: Permission denied");
  EXPECT_THAT(Get(Evaluate(testing::RocePlan(), inventory), "host.iommu").observed(),
              HasSubstr("Permission denied"));
}

TEST(HostSettingChecksTest, LinkTypeMismatchFails) {
  v1::Inventory inventory = WithoutHostSettings(testing::HealthyRoceInventory());
  AddHealthyHostSettings(inventory, "IB(1)");
  std::vector<v1::Finding> findings = Evaluate(testing::RocePlan(), inventory);
  const v1::Finding& link = Get(findings, "nic.link_type", "mlx5_0");
  EXPECT_EQ(link.status(), v1::Finding::fail);
  EXPECT_EQ(link.observed(), "IB(1)");
  EXPECT_EQ(link.expected(), "ETH(2)");
  EXPECT_THAT(link.message(), HasSubstr("roce fabric needs ETH(2)"));
  EXPECT_THAT(link.remedy(), HasSubstr("mstconfig -d 0000:41:00.0 set LINK_TYPE_P1=2"));
  // The same firmware is right for an InfiniBand fabric, and ETH wrong there.
  findings = Evaluate(testing::InfinibandPlan(), inventory);
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_0").status(), v1::Finding::pass);
  v1::Inventory eth = WithoutHostSettings(testing::HealthyInfinibandInventory());
  AddHealthyHostSettings(eth, "ETH(2)");
  EXPECT_EQ(Get(Evaluate(testing::InfinibandPlan(), eth), "nic.link_type", "mlx5_1").status(),
            v1::Finding::fail);
}

TEST(HostSettingChecksTest, SecondFunctionReadsThePortTwoSetting) {
  v1::Inventory inventory = HealthyRoce();
  testing::Device(inventory, "mlx5_1").set_pci_address("0000:41:00.1");
  v1::NicFirmwareConfig* config = inventory.mutable_nic_firmware(1);
  config->set_pci_address("0000:41:00.1");
  v1::FirmwareSetting* p2 = config->add_settings();
  p2->set_name("LINK_TYPE_P2");
  p2->set_value("IB(1)");
  const v1::Finding link = Get(Evaluate(testing::RocePlan(), inventory), "nic.link_type", "mlx5_1");
  EXPECT_EQ(link.status(), v1::Finding::fail);
  EXPECT_THAT(link.remedy(), HasSubstr("set LINK_TYPE_P2=2"));
}

TEST(HostSettingChecksTest, FirmwareNotReadIsSkippedNeverPass) {
  v1::Inventory inventory = HealthyRoce();
  inventory.mutable_nic_firmware(0)->clear_settings();
  inventory.mutable_nic_firmware(0)->set_error("mstconfig not installed: apt-get install mstflint");
  inventory.mutable_nic_firmware()->RemoveLast();
  std::vector<v1::Finding> findings = Evaluate(testing::RocePlan(), inventory);
  const v1::Finding& absent = Get(findings, "nic.link_type", "mlx5_0");
  EXPECT_EQ(absent.status(), v1::Finding::skipped);
  EXPECT_THAT(absent.message(), HasSubstr("apt-get install mstflint"));
  const v1::Finding& unreported = Get(findings, "nic.link_type", "mlx5_1");
  EXPECT_EQ(unreported.status(), v1::Finding::skipped);
  EXPECT_THAT(unreported.message(), HasSubstr("reported no firmware configuration"));
  // Garbage in the value is unknown, not a guess.
  inventory = HealthyRoce();
  inventory.mutable_nic_firmware(0)->mutable_settings(0)->set_value("ETH");
  EXPECT_EQ(Get(Evaluate(testing::RocePlan(), inventory), "nic.link_type", "mlx5_0").status(),
            v1::Finding::unknown);
}

TEST(HostSettingChecksTest, EvaluateNodeIncludesTheHostSettings) {
  std::vector<v1::Finding> findings =
      EvaluateNode(testing::RocePlan(), testing::RocePlan().nodes[0], HealthyRoce());
  EXPECT_EQ(Get(findings, "pcie.acs").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "host.iommu").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_0").status(), v1::Finding::pass);
  // With the host settings a healthy node reports, the whole node still only passes.
  EXPECT_THAT(NonPassing(findings), IsEmpty());
  v1::Inventory infiniband = WithoutHostSettings(testing::HealthyInfinibandInventory());
  AddHealthyHostSettings(infiniband, "IB(1)");
  const plan::Plan ib_plan = testing::InfinibandPlan();
  EXPECT_THAT(NonPassing(EvaluateNode(ib_plan, ib_plan.nodes[0], infiniband)), IsEmpty());
}

// The whole path on the acs-* fixture hosts: InventoryCollector over the tree,
// then the checks.
v1::Inventory CollectFixture(const std::string& name) { return testing::CollectFixtureHost(name); }

plan::Plan HgxSlicePlan() {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"mlx5_0"};
  plan.nodes[0].gpus = 2;
  return plan;
}

TEST(HostSettingFixturesTest, CleanHostPasses) {
  std::vector<v1::Finding> findings = Evaluate(HgxSlicePlan(), CollectFixture("acs-clean"));
  EXPECT_EQ(Get(findings, "pcie.acs").observed(), "ACS redirect off on 4 bridges");
  EXPECT_EQ(Get(findings, "host.iommu").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_0").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "nic.ats").status(), v1::Finding::pass);
}

TEST(HostSettingFixturesTest, RedirectHostFailsOnEverySwitchDownstreamPort) {
  std::vector<v1::Finding> findings = Evaluate(HgxSlicePlan(), CollectFixture("acs-redirect"));
  EXPECT_THAT(NonPassing(findings),
              ElementsAre("pcie.acs 0000:17:00.0", "pcie.acs 0000:17:01.0", "pcie.acs 0000:17:02.0",
                          "host.iommu", "nic.ats mlx5_0", "nic.link_type mlx5_0"));
  EXPECT_THAT(Get(findings, "pcie.acs", "0000:17:01.0").message(),
              HasSubstr("gpu0<->mlx5_0, gpu1<->mlx5_0"));
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_0").observed(), "IB(1)");
}

TEST(HostSettingFixturesTest, NonRootHostIsUnknownAndFirmwareSkipped) {
  std::vector<v1::Finding> findings = Evaluate(HgxSlicePlan(), CollectFixture("acs-nonroot"));
  const v1::Finding& acs = Get(findings, "pcie.acs");
  EXPECT_EQ(acs.status(), v1::Finding::unknown);
  EXPECT_THAT(acs.observed(), HasSubstr("only to a reader with CAP_SYS_ADMIN"));
  EXPECT_EQ(Get(findings, "host.iommu").status(), v1::Finding::fail);  // DMA groups: translated
  EXPECT_EQ(Get(findings, "nic.link_type", "mlx5_0").status(), v1::Finding::skipped);
  // Whether ATS is needed cannot be told while ACS is unknown.
  EXPECT_EQ(Get(findings, "nic.ats").status(), v1::Finding::skipped);
  EXPECT_THAT(NonPassing(findings), ::testing::Not(::testing::Contains("nic.ats mlx5_0")));
}

}  // namespace
}  // namespace clustercert::controller::checks
