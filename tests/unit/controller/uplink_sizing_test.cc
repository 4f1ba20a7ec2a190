// The seed's uplink arithmetic and the uplink verdicts.
#include "controller/uplink/uplink_sizing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "controller/plan/plan_parser.h"
#include "controller/uplink/uplink_verdicts.h"

namespace clustercert::controller::uplink {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Four nodes with four GPUs each on a 200 Gb/s fabric, and `uplink` as the
// plan's uplink section.
plan::Plan FourNodes(const std::string& uplink) {
  std::string yaml =
      "cluster: kentino-4node\n"
      "fabric: {type: roce, link_rate_gbps: 200}\n"
      "nodes:\n";
  for (int n = 1; n <= 4; ++n) {
    yaml += "  - {name: node" + std::to_string(n) + ", agent: 192.168.100.1" + std::to_string(n) +
            ":7070, data_ip: 10.10.1." + std::to_string(n) + ", rails: [mlx5_0], gpus: 4}\n";
  }
  yaml += "uplink:\n" + uplink;
  auto plan = plan::ParsePlan(yaml, "uplink.yaml");
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : plan::Plan{};
}

TEST(UplinkSizingTest, ImageVideoIsTheSeedsSixteenGigabytesASecond) {
  // 4 nodes x 4 GPUs x ~1 GB/s = 16 GB/s = 128 Gb/s.
  v1::UplinkSizing sizing = SizeUplink(
      FourNodes("  capacity_gbps: 25\n  workload: {profile: image-video, gpus_per_node: 4}\n"));
  EXPECT_EQ(sizing.profile(), "image-video");
  EXPECT_EQ(sizing.gpus(), 16);
  EXPECT_DOUBLE_EQ(sizing.required_gbytes_s(), 16);
  EXPECT_DOUBLE_EQ(sizing.required_gbps(), 128);
  EXPECT_EQ(sizing.verdict(), v1::UplinkSizing::undersized);
  EXPECT_DOUBLE_EQ(sizing.headroom_gbps(), -103);
  EXPECT_THAT(sizing.arithmetic(), HasSubstr("4 nodes x 4 GPUs x 1 GB/s = 16 GB/s = 128 Gb/s"));
  ASSERT_GE(sizing.advice_size(), 1);
  EXPECT_THAT(sizing.advice(0), HasSubstr("needs 128 Gb/s"));
  EXPECT_THAT(sizing.advice(0), HasSubstr("size the uplink to the read rate"));
}

TEST(UplinkSizingTest, CheckpointTimesAreTheSeeds) {
  // 140 GB at 25 GbE = 44.8 s; a 280 GB checkpoint 89.6 s; at 100 GbE 22.4 s.
  EXPECT_NEAR(TransferSeconds(140, 25), 44.8, 1e-9);
  EXPECT_NEAR(TransferSeconds(280, 25), 89.6, 1e-9);
  EXPECT_NEAR(TransferSeconds(280, 100), 22.4, 1e-9);
  EXPECT_EQ(TransferSeconds(280, 0), 0);
  v1::UplinkSizing sizing = SizeUplink(FourNodes(
      "  capacity_gbps: 25\n  workload: {profile: llm-pretrain, checkpoint_gbytes: 280}\n"));
  EXPECT_NEAR(sizing.checkpoint_seconds(), 89.6, 1e-9);
  EXPECT_THAT(sizing.advice(), testing::Contains(HasSubstr("280 GB checkpoint takes 90 s")));
}

TEST(UplinkSizingTest, LlmPretrainFitsTwentyFiveGigabit) {
  v1::UplinkSizing sizing =
      SizeUplink(FourNodes("  capacity_gbps: 25\n  workload: {profile: llm-pretrain}\n"));
  EXPECT_DOUBLE_EQ(sizing.required_gbps(), 4);
  EXPECT_DOUBLE_EQ(sizing.required_gbytes_s(), 0.5);
  EXPECT_EQ(sizing.ingest_gbytes_per_gpu(), 0);
  EXPECT_EQ(sizing.verdict(), v1::UplinkSizing::fits);
  EXPECT_DOUBLE_EQ(sizing.headroom_gbps(), 21);
  EXPECT_DOUBLE_EQ(sizing.utilisation(), 0.16);
  // 25 Gb/s is below the 200 Gb/s fabric: no "sized to the fabric" advice.
  for (const auto& advice : sizing.advice()) EXPECT_THAT(advice, Not(HasSubstr("fabric")));
}

TEST(UplinkSizingTest, AnUplinkSizedToTheFabricGetsTheSeedsAdvice) {
  // 400 GbE bought because the fabric is 400 GbE, for LLM tokens at 4 Gb/s.
  v1::UplinkSizing sizing =
      SizeUplink(FourNodes("  capacity_gbps: 400\n  workload: {profile: llm-pretrain}\n"));
  EXPECT_EQ(sizing.verdict(), v1::UplinkSizing::fits);
  EXPECT_DOUBLE_EQ(sizing.fabric_gbps(), 800);
  EXPECT_THAT(sizing.advice(),
              testing::Contains(HasSubstr("the right target is the read rate, not the fabric")));
}

TEST(UplinkSizingTest, FineTuneBurstsAndCustomRates) {
  EXPECT_DOUBLE_EQ(SizeUplink(FourNodes("  capacity_gbps: 100\n  workload: {profile: fine-tune}\n"))
                       .required_gbps(),
                   40);
  v1::UplinkSizing custom =
      SizeUplink(FourNodes("  capacity_gbps: 100\n  workload: {ingest_gbytes_per_gpu: 0.25}\n"));
  EXPECT_EQ(custom.profile(), "custom");
  EXPECT_EQ(custom.gpus(), 16);  // each node's gpus: 4
  EXPECT_DOUBLE_EQ(custom.required_gbps(), 32);
  v1::UplinkSizing cluster =
      SizeUplink(FourNodes("  capacity_gbps: 10\n  workload: {cluster_ingest_gbps: 12}\n"));
  EXPECT_EQ(cluster.verdict(), v1::UplinkSizing::undersized);
}

TEST(UplinkSizingTest, NodeShareOfTheIngest) {
  plan::Plan plan = FourNodes("  capacity_gbps: 200\n  workload: {profile: image-video}\n");
  v1::UplinkSizing sizing = SizeUplink(plan);
  EXPECT_DOUBLE_EQ(NodeNeedGbps(plan, sizing, plan.nodes[0]), 32);  // 4 GPUs x 1 GB/s
  plan::Plan llm = FourNodes("  capacity_gbps: 25\n  workload: {profile: llm-pretrain}\n");
  EXPECT_DOUBLE_EQ(NodeNeedGbps(llm, SizeUplink(llm), llm.nodes[0]), 1);  // 4 Gb/s over 4
}

TEST(UplinkSizingTest, ProfileAndRateTogetherIsAPlanError) {
  auto plan = plan::ParsePlan(
      "cluster: c\nfabric: {type: ethernet}\nnodes: [{name: a, agent: 127.0.0.1:1}]\n"
      "uplink: {capacity_gbps: 25, workload: {profile: image-video, ingest_gbytes_per_gpu: 1}}\n",
      "both.yaml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("gives both profile and ingest_gbytes_per_gpu"));
}

TEST(UplinkVerdictsTest, SizingFindingFailsAnUndersizedUplink) {
  v1::Finding finding = SizingFinding(
      SizeUplink(FourNodes("  capacity_gbps: 25\n  workload: {profile: image-video}\n")));
  EXPECT_EQ(finding.id(), "uplink.sizing");
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_DOUBLE_EQ(finding.value(), 128);
  EXPECT_DOUBLE_EQ(finding.threshold(), 25);
  EXPECT_THAT(finding.message(), HasSubstr("512% used"));
  EXPECT_THAT(finding.remedy(), HasSubstr("stage the dataset on local NVMe"));
}

TEST(UplinkVerdictsTest, SizingWithoutARateIsUnknown) {
  v1::Finding finding = SizingFinding(SizeUplink(FourNodes("  capacity_gbps: 25\n")));
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_THAT(finding.remedy(), HasSubstr("uplink.workload.profile"));
}

v1::UplinkThroughput MakeRun(const std::string& node, int flows, double gbps, double need) {
  v1::UplinkThroughput run;
  run.set_node(node);
  run.set_target("storage1");
  run.set_target_type("http");
  run.set_flows(flows);
  run.set_ok(true);
  run.set_aggregate_gbps(gbps);
  run.set_need_gbps(need);
  for (int i = 0; i < flows; ++i) run.add_flow_gbps(gbps / flows);
  run.set_min_flow_gbps(gbps / flows);
  run.set_max_flow_gbps(gbps / flows);
  return run;
}

TEST(UplinkVerdictsTest, OneFlowAgainstEightFlowsPassesAndSaysSo) {
  v1::Uplink uplink;
  *uplink.add_throughput() = MakeRun("node1", 1, 0.05, 0.04);
  *uplink.add_throughput() = MakeRun("node1", 8, 0.4, 0.04);
  std::vector<v1::Finding> findings = ThroughputFindings(uplink);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id(), "uplink.throughput");
  EXPECT_EQ(findings[0].node(), "node1");
  EXPECT_EQ(findings[0].device(), "storage1");
  EXPECT_EQ(findings[0].status(), v1::Finding::pass);
  EXPECT_DOUBLE_EQ(findings[0].value(), 0.4);
  EXPECT_THAT(findings[0].message(), HasSubstr("8 flows reach 8.0x one flow"));
  EXPECT_THAT(findings[0].message(), HasSubstr("One TCP flow uses one NIC"));
}

TEST(UplinkVerdictsTest, BelowTheNodesShareFails) {
  v1::Uplink uplink;
  *uplink.add_throughput() = MakeRun("node2", 1, 3, 32);
  *uplink.add_throughput() = MakeRun("node2", 8, 10, 32);
  std::vector<v1::Finding> findings = ThroughputFindings(uplink);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_THAT(findings[0].message(), HasSubstr("below the 32 Gb/s this node's GPUs read"));
}

TEST(UplinkVerdictsTest, AnOutageFailsWithItsReason) {
  v1::Uplink uplink;
  v1::UplinkThroughput run = MakeRun("node3", 1, 0, 0);
  run.set_ok(false);
  run.set_error("node3: connecting to 10.201.2.50:8080 timed out after 10 s");
  *uplink.add_throughput() = run;
  std::vector<v1::Finding> findings = ThroughputFindings(uplink);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_EQ(findings[0].observed(), "unreachable");
  EXPECT_THAT(findings[0].message(), HasSubstr("timed out after 10 s"));
  EXPECT_THAT(findings[0].remedy(), HasSubstr("management plane still answers"));
}

// A run the receiver counted nothing in is no evidence, even where the plan
// asks only that the target be reachable (no required rate).
TEST(UplinkVerdictsTest, ARunThatMovedNothingFailsEvenWithoutARequiredRate) {
  v1::Uplink uplink;
  *uplink.add_throughput() = MakeRun("node2", 1, 0, 0);
  std::vector<v1::Finding> findings = ThroughputFindings(uplink);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_THAT(findings[0].message(), HasSubstr("moved no data"));
}

// Issue 34: a tcp target that accepts and never reads was certified at the
// rate send() filled the socket buffers. The agent now fails that run with
// what the target acknowledged; the verdict names it, with its own remedy,
// and verify's recomputation (JudgeUplink) gives the same finding.
TEST(UplinkVerdictsTest, ATargetThatDoesNotReadFailsWithWhatItRead) {
  v1::Uplink uplink;
  v1::UplinkThroughput run = MakeRun("node3", 1, 0, 0);
  run.set_target_type("tcp");
  run.set_ok(false);
  run.set_error(
      "node3: the target read 4194304 bytes in 0.551 s: tcp flow 1 of 1 to 10.201.2.50:5201 had "
      "2097152 bytes unacknowledged and no acknowledgement for the last 0.549 s, so "
      "10.201.2.50:5201 accepts connections but does not read them");
  *uplink.add_throughput() = run;
  std::vector<v1::Finding> findings = ThroughputFindings(uplink);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_EQ(findings[0].observed(), "not read by the target");
  EXPECT_FALSE(findings[0].has_value());
  EXPECT_THAT(findings[0].message(), HasSubstr("the target read 4194304 bytes in 0.551 s"));
  EXPECT_THAT(findings[0].remedy(), HasSubstr("reads and discards every connection"));
  std::vector<v1::Finding> recomputed = JudgeUplink(uplink);
  ASSERT_EQ(recomputed.size(), 2u);
  EXPECT_EQ(recomputed[1].SerializeAsString(), findings[0].SerializeAsString());
}

}  // namespace
}  // namespace clustercert::controller::uplink
