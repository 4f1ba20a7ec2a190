// The matrix's lossless wiring: each measured bandwidth cell's lossless.*
// findings among the phase's checks, the ends chosen by the test, and the
// one run-level skipped finding when no cell could be judged.
#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

void Add(google::protobuf::RepeatedPtrField<v1::CounterDelta>* deltas, const std::string& source,
         const std::string& name, uint64_t delta) {
  v1::CounterDelta* d = deltas->Add();
  d->set_source(source);
  d->set_name(name);
  d->set_delta(delta);
  d->set_after(delta);
}

plan::Plan TwoNodeRoce() {
  plan::Plan plan;
  plan.fabric.link_rate_gbps = 100;
  for (const char* name : {"node1", "node2"}) {
    plan::Node node;
    node.name = name;
    node.rails = {"mlx5_0", "mlx5_1"};
    plan.nodes.push_back(node);
  }
  plan.nodes[1].rails = {"mlx5_2", "mlx5_3"};  // rail i of node2 has another name
  plan.pairwise.enabled = true;
  return plan;
}

// A write_bw cell at 93 Gb/s on rail 1; mlx5 counters with the data on
// `priority` (the sender's tx, the receiver's rx).
v1::PairResult Cell(const std::string& test, int priority, bool data_from_client = true) {
  v1::PairResult pair;
  pair.set_test(test);
  pair.set_engine("verbs");
  pair.set_memory("host");
  pair.set_client("node1");
  pair.set_server("node2");
  pair.set_rail("mlx5_1");
  pair.set_ok(true);
  pair.set_line_rate_gbps(100);
  pair.mutable_client_result()->mutable_bandwidth()->set_avg_gbps(93);
  pair.mutable_server_result()->mutable_bandwidth()->set_avg_gbps(93);
  auto* sender = data_from_client ? pair.mutable_client_counters() : pair.mutable_server_counters();
  auto* receiver =
      data_from_client ? pair.mutable_server_counters() : pair.mutable_client_counters();
  Add(sender, "ethtool", "tx_prio" + std::to_string(priority) + "_bytes", 11'600'000'000);
  Add(sender, "ethtool", "rx_prio3_bytes", 180'000'000);  // ACKs / read requests
  Add(receiver, "ethtool", "rx_prio" + std::to_string(priority) + "_bytes", 11'600'000'000);
  Add(receiver, "ethtool", "tx_prio3_bytes", 180'000'000);
  return pair;
}

std::vector<std::string> Keys(const std::vector<v1::Finding>& findings, const std::string& prefix) {
  std::vector<std::string> keys;
  for (const auto& f : findings) {
    if (f.id().rfind(prefix, 0) == 0) keys.push_back(f.key());
  }
  return keys;
}

const v1::Finding* Find(const std::vector<v1::Finding>& findings, const std::string& key) {
  for (const auto& f : findings) {
    if (f.key() == key) return &f;
  }
  return nullptr;
}

TEST(LosslessMatrixTest, EachMeasuredBandwidthCellGetsItsThreeChecks) {
  const plan::Plan plan = TwoNodeRoce();
  std::vector<v1::PairResult> pairs = {Cell("write_bw", 3)};
  v1::PairResult latency;
  latency.set_test("write_lat");
  latency.set_engine("verbs");
  latency.set_client("node1");
  latency.set_server("node2");
  latency.set_rail("mlx5_1");
  latency.set_memory("host");
  latency.set_ok(true);
  pairs.push_back(latency);
  MatrixJudgement judgement = JudgeMatrix(plan, pairs, {});
  EXPECT_THAT(Keys(judgement.checks, "lossless."),
              ElementsAre("lossless.priority@node1/mlx5_1->node2 write_bw host",
                          "lossless.pause@node1/mlx5_1->node2 write_bw host",
                          "lossless.drops@node1/mlx5_1->node2 write_bw host"));
  for (const auto& f : judgement.checks) {
    if (f.id().rfind("lossless.", 0) == 0) {
      EXPECT_EQ(f.status(), v1::Finding::pass) << f.key();
    }
  }
  // The lossless checks judge the chain, not the cell: the cell's own
  // verdict and the failing count are untouched.
  EXPECT_EQ(judgement.failing, 0);
  EXPECT_EQ(pairs[0].verdict().id(), "pairwise.bandwidth");
}

TEST(LosslessMatrixTest, TrafficOnTheWrongPriorityFailsTheCellsPriorityCheck) {
  std::vector<v1::PairResult> pairs = {Cell("write_bw", 0)};
  MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {});
  const v1::Finding* f =
      Find(judgement.checks, "lossless.priority@node1/mlx5_1->node2 write_bw host");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status(), v1::Finding::fail);
  EXPECT_THAT(f->message(),
              HasSubstr("node1 mlx5_1: 100 % of the 11.6 GB sent left on priority 0"));
  // The server's device is its own rail of the same index.
  EXPECT_THAT(f->message(), HasSubstr("node2 mlx5_3: 100 % of the 11.6 GB received arrived on "
                                      "priority 0"));
}

TEST(LosslessMatrixTest, ReadBwSendsFromTheServer) {
  // The data flows from the server on priority 3; the client's read
  // requests went out on priority 0, which only a client that sends the
  // data would be judged by.
  v1::PairResult read = Cell("read_bw", 3, /*data_from_client=*/false);
  for (auto& delta : *read.mutable_client_counters()) {
    if (delta.name() == "tx_prio3_bytes") delta.set_name("tx_prio0_bytes");
  }
  v1::PairResult as_write = read;
  as_write.set_test("write_bw");
  std::vector<v1::PairResult> pairs = {read, as_write};
  MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {});
  const v1::Finding* f =
      Find(judgement.checks, "lossless.priority@node1/mlx5_1->node2 read_bw host");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status(), v1::Finding::pass) << f->message();
  EXPECT_THAT(f->message(), HasSubstr("node2 mlx5_3 sent"));
  EXPECT_THAT(f->message(), HasSubstr("node1 mlx5_1 received"));

  const v1::Finding* write =
      Find(judgement.checks, "lossless.priority@node1/mlx5_1->node2 write_bw host");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->status(), v1::Finding::fail);
  EXPECT_EQ(write->node(), "node1");
  EXPECT_EQ(write->device(), "mlx5_1");
}

TEST(LosslessMatrixTest, BidirectionalJudgesBothEndsBothWays) {
  plan::Plan plan = TwoNodeRoce();
  plan.pairwise.bidirectional = true;
  v1::PairResult pair = Cell("write_bw", 3);
  // The server's own direction went out on priority 0.
  Add(pair.mutable_server_counters(), "ethtool", "tx_prio0_bytes", 11'600'000'000);
  std::vector<v1::PairResult> pairs = {pair};
  const MatrixJudgement judgement = JudgeMatrix(plan, pairs, {});
  const v1::Finding* f =
      Find(judgement.checks, "lossless.priority@node1/mlx5_1->node2 write_bw host");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status(), v1::Finding::fail);
  EXPECT_EQ(f->node(), "node2");
  EXPECT_THAT(f->message(),
              HasSubstr("node2 mlx5_3: 98.4 % of the 11.8 GB sent left on priority 0"));
}

TEST(LosslessMatrixTest, PauseAndDropsEachFailWithTheirOwnId) {
  v1::PairResult pair = Cell("write_bw", 3);
  Add(pair.mutable_server_counters(), "ethtool", "tx_prio0_pause", 1520);
  Add(pair.mutable_server_counters(), "ethtool", "rx_discards_phy", 42);
  std::vector<v1::PairResult> pairs = {pair};
  MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {});
  const v1::Finding* pause =
      Find(judgement.checks, "lossless.pause@node1/mlx5_1->node2 write_bw host");
  const v1::Finding* drops =
      Find(judgement.checks, "lossless.drops@node1/mlx5_1->node2 write_bw host");
  ASSERT_NE(pause, nullptr);
  ASSERT_NE(drops, nullptr);
  EXPECT_EQ(pause->status(), v1::Finding::fail);
  EXPECT_EQ(drops->status(), v1::Finding::fail);
  EXPECT_EQ(drops->observed(), "node2 mlx5_3 rx_discards_phy +42");
}

TEST(LosslessMatrixTest, SoftRoceGivesOneRunLevelSkippedFinding) {
  plan::Plan plan = TwoNodeRoce();
  plan.nodes[0].rails = {"rxe0"};
  plan.nodes[1].rails = {"rxe0"};
  std::vector<v1::PairResult> pairs;
  for (const char* client : {"node1", "node2"}) {
    v1::PairResult pair;
    pair.set_test("write_bw");
    pair.set_engine("verbs");
    pair.set_memory("host");
    pair.set_client(client);
    pair.set_server(std::string(client) == "node1" ? "node2" : "node1");
    pair.set_rail("rxe0");
    pair.set_ok(true);
    Add(pair.mutable_client_counters(), "hw_counters", "sent_pkts", 120'000);
    Add(pair.mutable_server_counters(), "hw_counters", "rcvd_pkts", 120'000);
    pairs.push_back(pair);
  }
  MatrixJudgement judgement = JudgeMatrix(plan, pairs, {});
  EXPECT_THAT(Keys(judgement.checks, "lossless."), ElementsAre("lossless.priority"));
  const v1::Finding* f = Find(judgement.checks, "lossless.priority");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status(), v1::Finding::skipped);
  EXPECT_EQ(f->message().rfind("skipped: no per-priority byte counters on node1 rxe0", 0), 0u)
      << f->message();
}

TEST(LosslessMatrixTest, TheTcpEngineIsNotJudgedAndSaysWhy) {
  v1::PairResult pair = Cell("tcp_bw", 3);
  pair.set_engine("tcp");
  pair.set_rail("");
  std::vector<v1::PairResult> pairs = {pair};
  MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {});
  const v1::Finding* f = Find(judgement.checks, "lossless.priority");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status(), v1::Finding::skipped);
  EXPECT_THAT(f->message(), HasSubstr("the tcp engine's traffic is not RDMA"));
}

TEST(LosslessMatrixTest, NotLosslessOrNoBandwidthCellOrAnOlderFormatGivesNothing) {
  plan::Plan lossy = TwoNodeRoce();
  lossy.fabric.roce.lossless = false;
  std::vector<v1::PairResult> pairs = {Cell("write_bw", 0)};
  EXPECT_THAT(Keys(JudgeMatrix(lossy, pairs, {}).checks, "lossless."), IsEmpty());

  // A matrix without cells (verify recomputes one for every certificate).
  std::vector<v1::PairResult> none;
  EXPECT_THAT(JudgeMatrix(TwoNodeRoce(), none, {}).checks, IsEmpty());

  // A format-5 certificate is recomputed without them.
  EXPECT_THAT(Keys(JudgeMatrix(TwoNodeRoce(), pairs, {}, 5).checks, "lossless."), IsEmpty());
}

TEST(LosslessMatrixTest, RetestsAndFailedCellsAreNotJudged) {
  v1::PairResult retest = Cell("write_bw", 0);
  retest.set_retest_of("node1->node2");
  v1::PairResult failed = Cell("write_bw", 0);
  failed.set_memory("cuda:0");
  failed.set_ok(false);
  failed.set_error("the QP timed out");
  std::vector<v1::PairResult> pairs = {Cell("write_bw", 3), retest, failed};
  MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {});
  EXPECT_THAT(Keys(judgement.checks, "lossless."),
              ElementsAre("lossless.priority@node1/mlx5_1->node2 write_bw host",
                          "lossless.pause@node1/mlx5_1->node2 write_bw host",
                          "lossless.drops@node1/mlx5_1->node2 write_bw host"));
}

}  // namespace
}  // namespace clustercert::controller
