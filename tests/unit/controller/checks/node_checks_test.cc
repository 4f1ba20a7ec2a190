#include "controller/checks/node_checks.h"

#include <string>
#include <vector>

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
using ::testing::UnorderedElementsAre;

std::vector<v1::Finding> Evaluate(const plan::Plan& plan, const v1::Inventory& inventory) {
  return EvaluateNode(plan, plan.nodes[0], inventory);
}

TEST(EvaluateNodeTest, HealthyRoceNodeOnlyPasses) {
  std::vector<v1::Finding> findings =
      Evaluate(testing::RocePlan(), testing::HealthyRoceInventory());
  EXPECT_THAT(NonPassing(findings), IsEmpty());
  // Every check ran on both rails: 4 stack, per rail 1 + 4 port, 1 GID, 2 MTU,
  // 5 QoS, 1 PCIe; 2 GPU, 4 pcie.gpu, pcie.acs, host.iommu, 2 nic.link_type,
  // nic.ats, 4 topology, 2 mgmt, clock.
  EXPECT_EQ(findings.size(), 4u + 2 * (5 + 1 + 2 + 5 + 1) + 2 + 4 + 5 + 4 + 2 + 1);
  for (const v1::Finding& finding : findings) {
    EXPECT_EQ(finding.node(), "node1") << finding.id();
    EXPECT_FALSE(finding.observed().empty()) << finding.id();
    EXPECT_FALSE(finding.expected().empty()) << finding.id();
    EXPECT_THAT(finding.message(), HasSubstr("node1")) << finding.id();
    EXPECT_FALSE(BlocksCertification(finding)) << finding.id();
  }
}

TEST(EvaluateNodeTest, HealthyInfinibandNodeOnlyPasses) {
  std::vector<v1::Finding> findings =
      Evaluate(testing::InfinibandPlan(), testing::HealthyInfinibandInventory());
  EXPECT_THAT(NonPassing(findings), IsEmpty());
  // No RoCE GID or QoS checks on InfiniBand, one subnet-manager check per rail port.
  for (const v1::Finding& finding : findings) {
    EXPECT_NE(finding.id().rfind("qos.", 0), 0u) << finding.id();
    EXPECT_NE(finding.id(), "roce.gid");
    EXPECT_NE(finding.id(), "mtu.netdev");
  }
  EXPECT_EQ(Get(findings, "ib.subnet_manager", "mlx5_1", 1).observed(),
            "4: ACTIVE, LID 0x6, SM LID 0x1");
}

TEST(EvaluateNodeTest, FindingsFollowTheSeedsTriageOrder) {
  std::vector<v1::Finding> findings =
      Evaluate(testing::RocePlan(), testing::HealthyRoceInventory());
  std::vector<std::string> first_seen;
  for (const v1::Finding& finding : findings) {
    std::string group = finding.id().substr(0, finding.id().find('.'));
    if (first_seen.empty() || first_seen.back() != group) first_seen.push_back(group);
  }
  // Rails interleave rail.present and port.* so the first rows read per rail.
  EXPECT_THAT(first_seen,
              ElementsAre("stack", "rail", "port", "rail", "port", "roce", "mtu", "qos",
                          "gpudirect", "gpu", "pcie", "host", "nic", "topology", "mgmt", "clock"));
}

TEST(EvaluateNodeTest, InfinibandOrderPutsSubnetManagerAfterPorts) {
  std::vector<v1::Finding> findings =
      Evaluate(testing::InfinibandPlan(), testing::HealthyInfinibandInventory());
  size_t last_port = 0, first_sm = findings.size(), first_mtu = findings.size();
  for (size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].id().rfind("port.", 0) == 0) last_port = i;
    if (findings[i].id() == "ib.subnet_manager") first_sm = std::min(first_sm, i);
    if (findings[i].id() == "mtu.active") first_mtu = std::min(first_mtu, i);
  }
  EXPECT_LT(last_port, first_sm);
  EXPECT_LT(first_sm, first_mtu);
}

TEST(EvaluateNodeTest, EthernetFabricSkipsRdmaChecks) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.type = plan::FabricType::kEthernet;
  std::vector<v1::Finding> findings = Evaluate(plan, testing::HealthyRoceInventory());
  for (const v1::Finding& finding : findings) {
    const std::string& id = finding.id();
    EXPECT_NE(id, "roce.gid");
    EXPECT_NE(id, "ib.subnet_manager");
    EXPECT_NE(id.rfind("qos.", 0), 0u) << id;
    const bool rdma = id.rfind("port.", 0) == 0 || id.rfind("stack.", 0) == 0 ||
                      id == "rail.present" || id == "mtu.active" || id == "gpudirect.peermem" ||
                      id == "pcie.nic" || id == "topology.gpu_nic";
    if (rdma) {
      EXPECT_EQ(finding.status(), v1::Finding::skipped) << id;
      EXPECT_THAT(finding.message(), HasSubstr("ethernet")) << id;
    }
  }
  EXPECT_THAT(
      NonPassing(findings),
      UnorderedElementsAre("stack.modules", "stack.srcversion", "stack.module_order", "stack.ofed",
                           "rail.present", "port.state", "port.phys_state", "port.rate",
                           "port.link_layer", "mtu.active", "gpudirect.peermem", "pcie.nic",
                           "pcie.acs", "nic.ats", "topology.gpu_nic"));
  // The data netdev (the one holding data_ip) still needs its large MTU.
  const v1::Finding& mtu = Get(findings, "mtu.netdev", "enp65s0np0");
  EXPECT_EQ(mtu.status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "gpu.count").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "clock.ntp").status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "mgmt.separate", "eno1").status(), v1::Finding::pass);
}

TEST(EvaluateNodeTest, EthernetFabricFlagsManagementOnTheDataNetdev) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.type = plan::FabricType::kEthernet;
  v1::Inventory inventory;
  inventory.set_management_netdev("eth0");
  v1::Netdev* data = inventory.add_netdevs();
  data->set_name("eth0");
  data->set_mtu(1500);
  data->add_ipv4("10.10.1.1");
  std::vector<v1::Finding> findings = Evaluate(plan, inventory);
  const v1::Finding& mgmt = Get(findings, "mgmt.separate", "eth0");
  EXPECT_EQ(mgmt.status(), v1::Finding::fail);
  EXPECT_THAT(mgmt.observed(), HasSubstr("data netdev"));
  EXPECT_EQ(Get(findings, "mtu.netdev", "eth0").status(), v1::Finding::fail);
}

TEST(BlocksCertificationTest, ErrorsThatFailOrAreUnknownBlock) {
  v1::Finding finding;
  finding.set_severity(v1::Finding::error);
  finding.set_status(v1::Finding::fail);
  EXPECT_TRUE(BlocksCertification(finding));
  finding.set_status(v1::Finding::unknown);
  EXPECT_TRUE(BlocksCertification(finding));
  finding.set_status(v1::Finding::pass);
  EXPECT_FALSE(BlocksCertification(finding));
  finding.set_status(v1::Finding::skipped);
  EXPECT_FALSE(BlocksCertification(finding));
  finding.set_severity(v1::Finding::warning);
  finding.set_status(v1::Finding::fail);
  EXPECT_FALSE(BlocksCertification(finding));
  finding.set_status(v1::Finding::unknown);
  EXPECT_FALSE(BlocksCertification(finding));
}

TEST(FindingSentenceTest, FailNamesStatusIdSeverityMessageAndRemedy) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Port(inventory, "mlx5_0").set_rate_gbps(100);
  testing::Port(inventory, "mlx5_0").set_width(2);
  std::vector<v1::Finding> findings = Evaluate(testing::RocePlan(), inventory);
  const v1::Finding& rate = Get(findings, "port.rate", "mlx5_0", 1);
  EXPECT_EQ(FindingSentence(rate),
            "FAIL port.rate (error): node1 mlx5_0 port 1 is at 100 Gb/s (2X HDR), plan expects "
            "200 Gb/s. Remedy: " +
                rate.remedy());
}

TEST(FindingSentenceTest, PassAndSkipCarryNoRemedy) {
  plan::Plan plan = testing::RocePlan();
  plan.expect.ntp_synced = false;
  std::vector<v1::Finding> findings = Evaluate(plan, testing::HealthyRoceInventory());
  EXPECT_EQ(FindingSentence(Get(findings, "clock.ntp")),
            "SKIP clock.ntp: node1: plan sets expect.ntp_synced: false.");
  EXPECT_EQ(FindingSentence(Get(findings, "gpu.count")),
            "PASS gpu.count: node1 has 4 GPUs on PCIe, as the plan expects.");
}

}  // namespace
}  // namespace clustercert::controller::checks
