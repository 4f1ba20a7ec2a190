#include "controller/checks/qos_checks.h"

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
using ::testing::IsEmpty;
using testing::NonPassing;

std::vector<v1::Finding> QosFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendQosChecks(context, findings);
  return findings;
}

TEST(QosChecksTest, HealthyQosPassesFiveChecksPerRail) {
  std::vector<v1::Finding> findings =
      QosFindings(testing::RocePlan(), testing::HealthyRoceInventory());
  EXPECT_EQ(findings.size(), 10u);
  EXPECT_THAT(NonPassing(findings), IsEmpty());
  EXPECT_EQ(Get(findings, "qos.traffic_class", "mlx5_0", 1).observed(), "106 (DSCP 26, ECN on)");
  EXPECT_EQ(Get(findings, "qos.dscp", "mlx5_0", 1).observed(), "DSCP 26 -> priority 3");
  EXPECT_EQ(Get(findings, "qos.ecn", "mlx5_0", 1).observed(), "np priorities 3, rp priorities 3");
}

TEST(QosChecksTest, UpstreamTrustIsInferredFromTheAppTableAndSaysSo) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").clear_trust();
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  const v1::Finding& trust = Get(findings, "qos.trust", "mlx5_0", 1);
  EXPECT_EQ(trust.status(), v1::Finding::pass);
  EXPECT_THAT(trust.observed(), HasSubstr("dscp (inferred"));
  EXPECT_THAT(trust.observed(), HasSubstr("upstream mlx5"));
}

TEST(QosChecksTest, NoTrustAndNoAppTableIsUnknown) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::NetdevQos& qos = testing::Qos(inventory, "enp65s0np0");
  qos.clear_trust();
  qos.clear_dscp_priorities();
  v1::Unknown* unknown = qos.add_unknowns();
  unknown->set_field("trust");
  unknown->set_path("/sys/class/net/enp65s0np0/qos/trust");
  unknown->set_reason("No such file or directory");
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  const v1::Finding& trust = Get(findings, "qos.trust", "mlx5_0", 1);
  EXPECT_EQ(trust.status(), v1::Finding::unknown);
  EXPECT_EQ(trust.observed(),
            "unknown: No such file or directory (/sys/class/net/enp65s0np0/qos/trust)");
  // With no DSCP entries the DSCP map is the driver's default: skipped, not passed.
  EXPECT_EQ(Get(findings, "qos.dscp", "mlx5_0", 1).status(), v1::Finding::skipped);
}

TEST(QosChecksTest, PcpTrustFailsWithMlnxQosTrustDscp) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").set_trust("pcp");
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("qos.trust mlx5_0 1"));
  const v1::Finding& trust = Get(findings, "qos.trust", "mlx5_0", 1);
  EXPECT_EQ(trust.observed(), "pcp");
  EXPECT_EQ(trust.expected(), "dscp");
  EXPECT_THAT(trust.remedy(), HasSubstr("sudo mlnx_qos -i enp65s0np0 --trust dscp"));
}

TEST(QosChecksTest, DscpMappedToTheWrongPriorityFails) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp193s0np0").mutable_dscp_priorities(0)->set_priority(0);
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("qos.dscp mlx5_1 1"));
  const v1::Finding& dscp = Get(findings, "qos.dscp", "mlx5_1", 1);
  EXPECT_EQ(dscp.observed(), "DSCP 26 -> priority 0");
  EXPECT_THAT(dscp.remedy(), HasSubstr("dcb app replace dev enp193s0np0 dscp-prio 26:3"));
  EXPECT_THAT(dscp.remedy(), HasSubstr("every hop"));
}

TEST(QosChecksTest, DscpAbsentFromANonEmptyAppTableFails) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").mutable_dscp_priorities(0)->set_dscp(46);
  const v1::Finding dscp =
      Get(QosFindings(testing::RocePlan(), inventory), "qos.dscp", "mlx5_0", 1);
  EXPECT_EQ(dscp.status(), v1::Finding::fail);
  EXPECT_EQ(dscp.observed(), "DSCP 26 not in the app table");
}

TEST(QosChecksTest, PcpPlanSkipsTheDscpMap) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.roce.trust = "pcp";
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").set_trust("pcp");
  std::vector<v1::Finding> findings = QosFindings(plan, inventory);
  EXPECT_EQ(Get(findings, "qos.dscp", "mlx5_0", 1).status(), v1::Finding::skipped);
  EXPECT_EQ(Get(findings, "qos.trust", "mlx5_0", 1).status(), v1::Finding::pass);
}

TEST(QosChecksTest, WrongTrafficClassIsAWarningWithTheTeeCommand) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").set_traffic_class(0);
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("qos.traffic_class mlx5_0 1"));
  const v1::Finding& tc = Get(findings, "qos.traffic_class", "mlx5_0", 1);
  EXPECT_EQ(tc.severity(), v1::Finding::warning);
  EXPECT_FALSE(BlocksCertification(tc));
  EXPECT_EQ(tc.observed(), "0 (DSCP 0, ECN off)");
  EXPECT_EQ(tc.expected(), "106 (DSCP 26, ECN on)");
  EXPECT_THAT(tc.remedy(),
              HasSubstr("echo 106 | sudo tee /sys/class/infiniband/mlx5_0/tc/1/traffic_class"));
}

TEST(QosChecksTest, TrafficClassWithoutEcnIsDscpShiftedOnly) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.roce.ecn = false;
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").set_traffic_class(104);
  std::vector<v1::Finding> findings = QosFindings(plan, inventory);
  EXPECT_EQ(Get(findings, "qos.traffic_class", "mlx5_0", 1).status(), v1::Finding::pass);
  EXPECT_EQ(Get(findings, "qos.ecn", "mlx5_0", 1).status(), v1::Finding::skipped);
}

TEST(QosChecksTest, EcnOffForThePriorityIsAWarning) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  testing::Qos(inventory, "enp65s0np0").set_ecn_rp_mask(0);
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings), ElementsAre("qos.ecn mlx5_0 1"));
  const v1::Finding& ecn = Get(findings, "qos.ecn", "mlx5_0", 1);
  EXPECT_EQ(ecn.severity(), v1::Finding::warning);
  EXPECT_EQ(ecn.observed(), "np priorities 3, rp priorities none");
  EXPECT_THAT(ecn.remedy(), HasSubstr("/sys/class/net/enp65s0np0/ecn/roce_rp/enable/3"));
  EXPECT_THAT(ecn.remedy(), HasSubstr("emergency brake"));
}

TEST(QosChecksTest, MissingQosEntryMakesEveryQosCheckUnknown) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_qos()->RemoveLast();  // enp193s0np0
  std::vector<v1::Finding> findings = QosFindings(testing::RocePlan(), inventory);
  EXPECT_THAT(NonPassing(findings),
              ElementsAre("qos.pfc mlx5_1 1", "qos.trust mlx5_1 1", "qos.dscp mlx5_1 1",
                          "qos.traffic_class mlx5_1 1", "qos.ecn mlx5_1 1"));
  for (const v1::Finding& finding : findings) {
    if (finding.device() != "mlx5_1") continue;
    EXPECT_EQ(finding.status(), v1::Finding::unknown) << finding.id();
    EXPECT_EQ(finding.observed(), "unknown: no QoS entry for enp193s0np0") << finding.id();
  }
}

TEST(QosChecksTest, InfinibandHasNoQosChecks) {
  EXPECT_THAT(QosFindings(testing::InfinibandPlan(), testing::HealthyInfinibandInventory()),
              IsEmpty());
}

TEST(QosChecksTest, LosslessFalseSkipsEveryQosCheckWithTheReason) {
  // soft-RoCE has no DCB at all: each check is recorded as skipped, never passed.
  plan::Plan plan = testing::RocePlan();
  plan.fabric.roce.lossless = false;
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.clear_qos();
  std::vector<v1::Finding> findings = QosFindings(plan, inventory);
  ASSERT_EQ(findings.size(), 10u);
  for (const v1::Finding& finding : findings) {
    EXPECT_EQ(finding.status(), v1::Finding::skipped) << finding.id();
    EXPECT_THAT(finding.message(), HasSubstr("fabric.roce.lossless: false")) << finding.id();
  }
  EXPECT_EQ(Get(findings, "qos.ecn", "mlx5_1", 1).severity(), v1::Finding::warning);
}

}  // namespace
}  // namespace clustercert::controller::checks
