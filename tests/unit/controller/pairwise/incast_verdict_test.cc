#include "controller/pairwise/incast_verdict.h"

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void Add(google::protobuf::RepeatedPtrField<v1::CounterDelta>* deltas, const std::string& source,
         const std::string& name, uint64_t delta) {
  v1::CounterDelta* d = deltas->Add();
  d->set_source(source);
  d->set_name(name);
  d->set_delta(delta);
  d->set_after(delta);
}

// Three mlx5 senders into node2's mlx5_0 at 100 Gb/s, the RDMA traffic on
// priority 3, the receiver pausing its senders there.
v1::IncastResult Round(std::vector<double> gbps) {
  v1::IncastResult round;
  round.set_receiver("node2");
  round.set_rail("mlx5_0");
  round.set_engine("verbs");
  round.set_test("write_bw");
  round.set_round(1);
  round.set_line_rate_gbps(100);
  const char* names[] = {"node1", "node3", "node4", "node5"};
  for (size_t i = 0; i < gbps.size(); ++i) {
    v1::IncastSender* sender = round.add_senders();
    sender->set_node(names[i]);
    sender->set_rail("mlx5_0");
    sender->set_ok(true);
    sender->set_gbps(gbps[i]);
    Add(sender->mutable_counters(), "ethtool", "tx_prio3_bytes", 3'800'000'000);
    Add(sender->mutable_counters(), "ethtool", "rx_prio3_pause", 900);
    Add(sender->mutable_counters(), "hw_counters", "rp_cnp_handled", 1660);
    Add(sender->mutable_counters(), "hw_counters", "rp_cnp_ignored", 0);
  }
  Add(round.mutable_receiver_counters(), "ethtool", "rx_prio3_bytes", 11'400'000'000);
  Add(round.mutable_receiver_counters(), "ethtool", "tx_prio3_pause", 2700);
  Add(round.mutable_receiver_counters(), "hw_counters", "np_ecn_marked_roce_packets", 5000);
  Add(round.mutable_receiver_counters(), "hw_counters", "np_cnp_sent", 4990);
  return round;
}

plan::Plan IncastPlan() {
  plan::Plan plan;
  plan.pairwise.incast.enabled = true;
  return plan;
}

std::vector<std::string> Ids(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id());
  return ids;
}

TEST(SummarizeIncastTest, SumsTheOkSendersAndComparesTheSlowestWithTheFastest) {
  v1::IncastResult round = Round({30.0, 31.2, 30.0});
  SummarizeIncast(round);
  EXPECT_DOUBLE_EQ(round.aggregate_gbps(), 91.2);
  EXPECT_DOUBLE_EQ(round.fairness(), 30.0 / 31.2);

  round.mutable_senders(1)->set_ok(false);  // a failed sender counts 0
  SummarizeIncast(round);
  EXPECT_DOUBLE_EQ(round.aggregate_gbps(), 60.0);
  EXPECT_DOUBLE_EQ(round.fairness(), 0.0);

  v1::IncastResult empty = Round({});
  SummarizeIncast(empty);
  EXPECT_DOUBLE_EQ(empty.aggregate_gbps(), 0.0);
  EXPECT_DOUBLE_EQ(empty.fairness(), 0.0);
}

TEST(JudgeIncastTest, AHealthyRoundPassesEveryCheck) {
  v1::IncastResult round = Round({30.4, 30.4, 30.4});
  SummarizeIncast(round);
  std::vector<v1::Finding> findings = JudgeIncast(IncastPlan(), round);
  ASSERT_THAT(Ids(findings), ElementsAre("incast.bandwidth", "incast.fairness", "lossless.priority",
                                         "lossless.pause", "lossless.drops", "incast.dcqcn",
                                         "incast.cnp_ignored"));
  for (const auto& f : findings) {
    EXPECT_EQ(f.status(), v1::Finding::pass) << f.DebugString();
    EXPECT_EQ(f.node(), "node2");
    const bool dcqcn = f.id() == "incast.dcqcn" || f.id() == "incast.cnp_ignored";
    EXPECT_EQ(f.severity(), dcqcn ? v1::Finding::warning : v1::Finding::error);
  }
  EXPECT_EQ(findings[0].key(), "incast.bandwidth@incast->node2/mlx5_0 write_bw");
  EXPECT_EQ(findings[2].key(), "lossless.priority@incast->node2/mlx5_0 write_bw");
  EXPECT_EQ(findings[0].device(), "mlx5_0");
  EXPECT_EQ(findings[0].message(),
            "incast into node2 mlx5_0 from node1, node3, node4: 3 x ~30.4 Gb/s = 91.2 Gb/s of "
            "100 Gb/s (91.2 %, plan floor 90 %).");
  EXPECT_DOUBLE_EQ(findings[0].value(), 91.2);
  EXPECT_DOUBLE_EQ(findings[0].threshold(), 90);
  EXPECT_EQ(findings[1].observed(), "1.00 (node1 30.4 Gb/s, node1 30.4 Gb/s)");
}

TEST(JudgeIncastTest, AnAggregateUnderThePlanFloorFails) {
  v1::IncastResult round = Round({29.0, 29.0, 29.0});
  SummarizeIncast(round);
  const v1::Finding f = JudgeIncast(IncastPlan(), round)[0];
  EXPECT_EQ(f.id(), "incast.bandwidth");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.observed(), "87 Gb/s (87 % of 100 Gb/s)");
  EXPECT_EQ(f.expected(), ">= 90 Gb/s (90 % of 100 Gb/s)");
  EXPECT_THAT(f.remedy(), HasSubstr("PFC on priority 3"));

  plan::Plan lenient = IncastPlan();
  lenient.pairwise.incast.min_fraction_of_line_rate = 0.87;
  EXPECT_EQ(JudgeIncast(lenient, round)[0].status(), v1::Finding::pass);
}

TEST(JudgeIncastTest, AFailedSenderFailsTheRoundAndItsFairness) {
  v1::IncastResult round = Round({45.0, 0, 45.0});
  round.mutable_senders(1)->set_ok(false);
  round.mutable_senders(1)->set_error("node3 mlx5_0: work completion status 12 (retry exceeded)");
  SummarizeIncast(round);
  std::vector<v1::Finding> findings = JudgeIncast(IncastPlan(), round);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_THAT(findings[0].message(),
              HasSubstr("node3 failed (node3 mlx5_0: work completion status 12 (retry "
                        "exceeded)); the others 2 x ~45 Gb/s = 90 Gb/s"));
  EXPECT_EQ(findings[1].id(), "incast.fairness");
  EXPECT_EQ(findings[1].status(), v1::Finding::fail);
  EXPECT_THAT(findings[1].message(), HasSubstr("slowest node3 at 0 Gb/s"));
}

TEST(JudgeIncastTest, AControlPlaneFailureIsUnknownNotAFabricFault) {
  v1::IncastResult round = Round({45.0, 0, 45.0});
  round.mutable_senders(1)->set_ok(false);
  round.mutable_senders(1)->set_control_plane(true);
  round.mutable_senders(1)->set_error("node3: deadline exceeded");
  SummarizeIncast(round);
  EXPECT_EQ(JudgeIncast(IncastPlan(), round)[0].status(), v1::Finding::unknown);
}

TEST(JudgeIncastTest, ARoundThatCouldNotRunFailsWithFairnessUnknown) {
  v1::IncastResult round = Round({0, 0, 0});
  for (auto& sender : *round.mutable_senders()) sender.set_ok(false);
  round.set_error("node2 is unreachable");
  SummarizeIncast(round);
  std::vector<v1::Finding> findings = JudgeIncast(IncastPlan(), round);
  EXPECT_EQ(findings[0].status(), v1::Finding::fail);
  EXPECT_THAT(findings[0].message(), HasSubstr("the round could not run: node2 is unreachable"));
  EXPECT_EQ(findings[1].status(), v1::Finding::unknown);
}

TEST(JudgeIncastTest, NoLineRateIsSkippedWithTheReason) {
  v1::IncastResult round = Round({30.0, 30.0, 30.0});
  round.set_line_rate_gbps(0);
  SummarizeIncast(round);
  const v1::Finding f = JudgeIncast(IncastPlan(), round)[0];
  EXPECT_EQ(f.status(), v1::Finding::skipped);
  EXPECT_THAT(f.message(), HasSubstr("no line rate to compare with"));
}

TEST(JudgeIncastTest, UnfairSendersFailFairness) {
  v1::IncastResult round = Round({60.0, 12.0, 20.0});
  SummarizeIncast(round);
  const v1::Finding f = JudgeIncast(IncastPlan(), round)[1];
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.observed(), "0.20 (node3 12 Gb/s, node1 60 Gb/s)");
  EXPECT_EQ(f.expected(), ">= 0.50 (slowest / fastest)");
  EXPECT_THAT(f.remedy(), HasSubstr("DCQCN"));
}

TEST(JudgeIncastTest, DropsAndWrongPauseAtTheReceiverFailTheLosslessChecks) {
  v1::IncastResult round = Round({30.4, 30.4, 30.4});
  Add(round.mutable_receiver_counters(), "ethtool", "rx_prio3_discards", 311);
  Add(round.mutable_senders(2)->mutable_counters(), "ethtool", "rx_prio0_pause", 80);
  SummarizeIncast(round);
  std::vector<v1::Finding> findings = JudgeIncast(IncastPlan(), round);
  ASSERT_EQ(findings.size(), 7u);  // and incast.dcqcn, incast.cnp_ignored
  EXPECT_EQ(findings[2].status(), v1::Finding::pass);
  EXPECT_EQ(findings[3].id(), "lossless.pause");
  EXPECT_EQ(findings[3].status(), v1::Finding::fail);
  EXPECT_EQ(findings[3].node(), "node4");
  EXPECT_EQ(findings[4].id(), "lossless.drops");
  EXPECT_EQ(findings[4].status(), v1::Finding::fail);
  EXPECT_EQ(findings[4].observed(), "node2 mlx5_0 rx_prio3_discards +311");
}

TEST(JudgeIncastTest, TheTcpEngineGetsBandwidthAndFairnessOnly) {
  v1::IncastResult round = Round({3.0, 3.1, 3.0});
  round.set_engine("tcp");
  round.set_rail("");
  round.set_line_rate_gbps(10);
  SummarizeIncast(round);
  std::vector<v1::Finding> findings = JudgeIncast(IncastPlan(), round);
  EXPECT_THAT(Ids(findings), ElementsAre("incast.bandwidth", "incast.fairness"));
  EXPECT_EQ(findings[0].key(), "incast.bandwidth@incast->node2 write_bw");
}

TEST(JudgeIncastTest, ACarriedRoundCarriesItsFindings) {
  v1::IncastResult round = Round({30.4, 30.4, 30.4});
  round.mutable_carried()->set_from_started_at("2026-01-01T00:00:00Z");
  SummarizeIncast(round);
  for (const auto& f : JudgeIncast(IncastPlan(), round)) EXPECT_TRUE(f.has_carried()) << f.id();
}

}  // namespace
}  // namespace clustercert::controller::pairwise
