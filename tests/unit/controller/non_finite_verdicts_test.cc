// A NaN or an infinity from a node-agent is an invalid measurement (issue
// 34, item 7): each verdict it feeds is unknown with the sentence naming the
// node, the field and the value, never a pass (inf cleared every floor) and
// never a fail to blame a link with.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/non_finite.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/pairwise/incast_verdict.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/uplink/uplink_verdicts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

using ::testing::HasSubstr;

const double kInf = std::numeric_limits<double>::infinity();
// x86's 0.0/0.0: a NaN with its sign bit set, as an agent's division makes.
const double kNegativeNaN = std::copysign(std::numeric_limits<double>::quiet_NaN(), -1.0);

TEST(NonFiniteTest, FindsTheFieldAnywhereAndCanonicalizesNaNs) {
  v1::PeerTestResult result;
  result.mutable_bandwidth()->set_avg_gbps(9.5);
  result.add_stream_gbps(1);
  result.add_stream_gbps(kNegativeNaN);
  auto bad = FindNonFinite(result);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->field, "stream_gbps");
  EXPECT_EQ(NonFiniteSentence("node3", bad->field, bad->value),
            "node3 reported a non-finite stream_gbps (nan): the measurement is invalid; rerun");
  EXPECT_EQ(NonFiniteText(-kInf), "-inf");

  CanonicalizeNaNs(result);
  EXPECT_FALSE(std::signbit(result.stream_gbps(1)));
  EXPECT_TRUE(std::isnan(result.stream_gbps(1)));
  result.set_stream_gbps(1, 2);
  EXPECT_FALSE(FindNonFinite(result).has_value());
  EXPECT_TRUE(SameValue(std::nan(""), kNegativeNaN));
  EXPECT_FALSE(SameValue(1, std::nan("")));
}

v1::PairResult Cell(double server_gbps) {
  v1::PairResult pair;
  pair.set_client("node1");
  pair.set_server("node3");
  pair.set_test("write_bw");
  pair.set_memory("host");
  pair.set_ok(true);
  pair.set_line_rate_gbps(100);
  pair.mutable_client_result()->mutable_bandwidth()->set_avg_gbps(95);
  pair.mutable_server_result()->mutable_bandwidth()->set_avg_gbps(server_gbps);
  return pair;
}

plan::Plan PairPlan() {
  plan::Plan plan;
  plan.pairwise.min_fraction_of_line_rate = 0.8;
  return plan;
}

TEST(NonFiniteVerdictsTest, APairCellWithNaNOrInfIsUnknownNamingTheNode) {
  for (const double bad : {kNegativeNaN, kInf, -kInf}) {
    SCOPED_TRACE(bad);
    const v1::Finding verdict = JudgeCell(PairPlan(), Cell(bad), 5);
    EXPECT_EQ(verdict.status(), v1::Finding::unknown);
    EXPECT_THAT(verdict.message(),
                HasSubstr(absl::StrCat("node3 reported a non-finite avg_gbps (", NonFiniteText(bad),
                                       "): the measurement is invalid; rerun")));
    EXPECT_FALSE(verdict.has_value());
  }
  EXPECT_EQ(JudgeCell(PairPlan(), Cell(95), 5).status(), v1::Finding::pass);
}

TEST(NonFiniteVerdictsTest, AnUplinkAtInfGbpsIsUnknownNotAPass) {
  v1::UplinkThroughput run;
  run.set_node("node2");
  run.set_target("storage1");
  run.set_target_type("tcp");
  run.set_flows(1);
  run.set_ok(true);
  run.set_aggregate_gbps(kInf);
  run.set_need_gbps(10);
  v1::Uplink uplink;
  *uplink.add_throughput() = run;
  std::vector<v1::Finding> findings = uplink::ThroughputFindings(uplink);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status(), v1::Finding::unknown);
  EXPECT_THAT(findings[0].observed(),
              HasSubstr("node2 reported a non-finite aggregate_gbps (inf): the measurement is "
                        "invalid; rerun"));
}

v1::CollectiveSweep TwoNodeSweep(double busbw) {
  v1::CollectiveSweep sweep;
  sweep.set_scope("2-node");
  sweep.add_nodes("node1");
  sweep.add_nodes("node2");
  sweep.set_ranks(2);
  sweep.set_ok(true);
  sweep.set_transport("tcp");
  v1::CollectiveRow* row = sweep.add_rows();
  row->set_bytes(1 << 20);
  row->set_oop_busbw_gbytes(busbw);
  sweep.set_large_busbw_gbytes(busbw);
  sweep.set_large_from_bytes(1 << 17);
  return sweep;
}

TEST(NonFiniteVerdictsTest, ASweepWithAnInfiniteBusbwIsUnknown) {
  plan::Plan plan;
  plan.collectives.enabled = true;
  plan.collectives.backend = plan::CollectiveBackend::kGloo;
  plan.collectives.min_busbw_gbytes = 1.0;
  for (const double bad : {kInf, kNegativeNaN}) {
    SCOPED_TRACE(bad);
    std::map<std::string, v1::Finding> by_id;
    for (auto& finding : JudgeSweep(plan, TwoNodeSweep(bad), "tcp")) by_id[finding.id()] = finding;
    EXPECT_EQ(by_id["collectives.busbw"].status(), v1::Finding::unknown);
    EXPECT_THAT(by_id["collectives.busbw"].observed(), HasSubstr("non-finite oop_busbw_gbytes"));
  }
}

TEST(NonFiniteVerdictsTest, AnIncastSenderAtInfIsUnknown) {
  plan::Plan plan;
  plan.pairwise.incast.min_fraction_of_line_rate = 0.9;
  plan.pairwise.incast.min_fairness = 0.5;
  v1::IncastResult round;
  round.set_receiver("node1");
  round.set_test("write_bw");
  round.set_line_rate_gbps(10);
  for (const char* node : {"node2", "node3"}) {
    v1::IncastSender* sender = round.add_senders();
    sender->set_node(node);
    sender->set_ok(true);
    sender->set_gbps(node == std::string("node3") ? kInf : 6);
  }
  pairwise::SummarizeIncast(round);
  for (const v1::Finding& finding : pairwise::JudgeIncast(plan, round)) {
    if (finding.id() != "incast.bandwidth" && finding.id() != "incast.fairness") continue;
    EXPECT_EQ(finding.status(), v1::Finding::unknown) << finding.id();
    EXPECT_THAT(finding.message(), HasSubstr("node3 reported a non-finite gbps (inf)"));
  }
}

}  // namespace
}  // namespace clustercert::controller
