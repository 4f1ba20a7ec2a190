#include "controller/checks/nccl_env_checks.h"

#include <string>
#include <vector>

#include "controller/checks/node_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::HasSubstr;
using testing::NonPassing;

plan::Plan NcclPlan() {
  plan::Plan plan = testing::RocePlan();
  plan.collectives.enabled = true;
  plan.collectives.backend = plan::CollectiveBackend::kNccl;
  return plan;
}

v1::Inventory Inventory() {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.set_management_netdev("eno1");
  return inventory;
}

std::vector<v1::Finding> Evaluate(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendNcclEnvChecks(context, findings);
  return findings;
}

TEST(DerivedNcclEnvTest, FollowsTheRailsTheGidTheClassAndTheDataNetdev) {
  const plan::Plan plan = NcclPlan();
  const v1::Inventory inventory = Inventory();
  auto env = DerivedNcclEnv(plan, plan.nodes[0], &inventory);
  EXPECT_EQ(env["NCCL_IB_HCA"], "=mlx5_0,mlx5_1");
  EXPECT_EQ(env["NCCL_IB_GID_INDEX"], "3");
  EXPECT_EQ(env["NCCL_IB_TC"], "106");  // DSCP 26 << 2 | ECN
  // Not eno1 (management): the first rail's netdev, or the one holding data_ip.
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "=" + inventory.rdma_devices(0).ports(0).netdev());
  plan::Plan with_data_ip = plan;
  with_data_ip.nodes[0].data_ip = "10.10.2.1";
  const std::string second = inventory.rdma_devices(1).ports(0).netdev();
  EXPECT_EQ(DerivedNcclEnv(with_data_ip, with_data_ip.nodes[0], &inventory)["NCCL_SOCKET_IFNAME"],
            "=" + second);
  plan::Plan ib = plan;
  ib.fabric.type = plan::FabricType::kInfiniband;
  env = DerivedNcclEnv(ib, ib.nodes[0], nullptr);
  EXPECT_EQ(env.size(), 2u);  // the HCAs and the SL
  EXPECT_EQ(env.count("NCCL_IB_GID_INDEX"), 0u);
  EXPECT_EQ(env.count("NCCL_IB_TC"), 0u);
  ib.fabric.type = plan::FabricType::kEthernet;
  EXPECT_TRUE(DerivedNcclEnv(ib, ib.nodes[0], nullptr).empty());
}

// fabric.infiniband.service_level reaches NCCL: the SL the verbs tests send
// on is the one NCCL's QPs use, and a plan env that says otherwise is named.
TEST(DerivedNcclEnvTest, InfinibandServiceLevelBecomesNcclIbSl) {
  plan::Plan ib = NcclPlan();
  ib.fabric.type = plan::FabricType::kInfiniband;
  EXPECT_EQ(DerivedNcclEnv(ib, ib.nodes[0], nullptr)["NCCL_IB_SL"], "0");  // the default SL
  ib.fabric.infiniband.service_level = 7;
  EXPECT_EQ(DerivedNcclEnv(ib, ib.nodes[0], nullptr)["NCCL_IB_SL"], "7");
  // RoCE has no SL: its class is NCCL_IB_TC.
  EXPECT_EQ(DerivedNcclEnv(NcclPlan(), ib.nodes[0], nullptr).count("NCCL_IB_SL"), 0u);

  ib.collectives.env = {{"NCCL_IB_SL", "3"}};
  std::vector<v1::Finding> findings = Evaluate(ib, Inventory());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::warning);
  EXPECT_EQ(findings[0].device(), "NCCL_IB_SL");
  EXPECT_THAT(findings[0].message(), HasSubstr("sets NCCL_IB_SL=3 but the plan itself implies 7"));
}

TEST(NcclEnvChecksTest, AgreeingOrAbsentEnvPasses) {
  plan::Plan plan = NcclPlan();
  EXPECT_TRUE(NonPassing(Evaluate(plan, Inventory())).empty());
  // NCCL's own spellings of the same thing: no "=", ":port", a prefix.
  plan.collectives.env = {{"NCCL_IB_HCA", "mlx5_1:1,mlx5_0:1"},
                          {"NCCL_IB_GID_INDEX", "3"},
                          {"NCCL_SOCKET_IFNAME", "enp"}};
  std::vector<v1::Finding> findings = Evaluate(plan, Inventory());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::pass);
  EXPECT_THAT(findings[0].observed(), HasSubstr("NCCL_IB_HCA==mlx5_0,mlx5_1"));
}

// The plan of issue 14: two rails listed, NCCL_IB_HCA naming one of them.
TEST(NcclEnvChecksTest, HandWrittenEnvThatDisagreesIsAFinding) {
  plan::Plan plan = NcclPlan();
  plan.collectives.env = {{"NCCL_IB_HCA", "mlx5_0"},
                          {"NCCL_IB_GID_INDEX", "1"},
                          {"NCCL_IB_TC", "0"},
                          {"NCCL_SOCKET_IFNAME", "eno1"}};
  std::vector<v1::Finding> findings = Evaluate(plan, Inventory());
  ASSERT_EQ(findings.size(), 4u);
  for (const v1::Finding& finding : findings)
    EXPECT_EQ(finding.status(), v1::Finding::fail) << finding.device();
  const v1::Finding& hca = testing::Get(findings, "collectives.env", "NCCL_IB_HCA");
  EXPECT_EQ(hca.severity(), v1::Finding::error);
  EXPECT_EQ(hca.expected(), "NCCL_IB_HCA==mlx5_0,mlx5_1");
  EXPECT_THAT(hca.remedy(), HasSubstr("Remove NCCL_IB_HCA from collectives.env"));
  EXPECT_EQ(testing::Get(findings, "collectives.env", "NCCL_IB_GID_INDEX").severity(),
            v1::Finding::error);
  EXPECT_EQ(testing::Get(findings, "collectives.env", "NCCL_IB_TC").severity(),
            v1::Finding::warning);
  EXPECT_EQ(testing::Get(findings, "collectives.env", "NCCL_SOCKET_IFNAME").severity(),
            v1::Finding::warning);
}

TEST(NcclEnvChecksTest, GlooOrNoCollectivesHasNoEnvCheck) {
  plan::Plan plan = NcclPlan();
  plan.collectives.backend = plan::CollectiveBackend::kGloo;
  EXPECT_TRUE(Evaluate(plan, Inventory()).empty());
  plan.collectives.enabled = false;
  EXPECT_TRUE(Evaluate(plan, Inventory()).empty());
}

}  // namespace
}  // namespace clustercert::controller::checks
