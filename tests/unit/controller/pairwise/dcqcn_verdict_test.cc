#include "controller/pairwise/dcqcn_verdict.h"

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/incast_verdict.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::testing::HasSubstr;

void Add(google::protobuf::RepeatedPtrField<v1::CounterDelta>* deltas, const std::string& source,
         const std::string& name, uint64_t delta) {
  v1::CounterDelta* d = deltas->Add();
  d->set_source(source);
  d->set_name(name);
  d->set_before(1000);
  d->set_after(1000 + delta);
  d->set_delta(delta);
}

// Two ConnectX-7 senders (mlx5_0, hw_counters and mlx5 ethtool names) into
// node2's mlx5_0 under incast, PFC on priority 3. `marks`, `cnps`,
// `handled`, `ignored` are the DCQCN deltas; `pauses` the receiver's
// tx_prio3_pause.
v1::IncastResult Round(uint64_t marks, uint64_t cnps, uint64_t handled, uint64_t ignored,
                       uint64_t pauses) {
  v1::IncastResult round;
  round.set_receiver("node2");
  round.set_rail("mlx5_0");
  round.set_engine("verbs");
  round.set_test("write_bw");
  round.set_line_rate_gbps(400);
  auto* receiver = round.mutable_receiver_counters();
  Add(receiver, "ethtool", "rx_prio3_bytes", 90'000'000'000);
  Add(receiver, "ethtool", "tx_prio3_pause", pauses);
  Add(receiver, "hw_counters", "np_ecn_marked_roce_packets", marks);
  Add(receiver, "hw_counters", "np_cnp_sent", cnps);
  Add(receiver, "hw_counters", "rp_cnp_handled", 0);
  Add(receiver, "hw_counters", "rp_cnp_ignored", 0);
  for (const char* node : {"node1", "node3"}) {
    v1::IncastSender* sender = round.add_senders();
    sender->set_node(node);
    sender->set_rail("mlx5_0");
    sender->set_ok(true);
    sender->set_gbps(190);
    auto* counters = sender->mutable_counters();
    Add(counters, "ethtool", "tx_prio3_bytes", 45'000'000'000);
    Add(counters, "ethtool", "rx_prio3_pause", pauses / 2);
    Add(counters, "hw_counters", "np_ecn_marked_roce_packets", 0);
    Add(counters, "hw_counters", "np_cnp_sent", 0);
    Add(counters, "hw_counters", "rp_cnp_handled", handled / 2);
    Add(counters, "hw_counters", "rp_cnp_ignored", std::string(node) == "node3" ? ignored : 0);
  }
  return round;
}

const v1::Finding& Get(const std::vector<v1::Finding>& findings, const std::string& id) {
  for (const auto& f : findings) {
    if (f.id() == id) return f;
  }
  ADD_FAILURE() << "no " << id;
  static const v1::Finding none;
  return none;
}

plan::Plan RocePlan() { return plan::Plan(); }  // RoCE, ECN on, PFC priority 3

TEST(JudgeDcqcnTest, MarksAndCnpsUnderCongestionPass) {
  const auto findings = JudgeDcqcn(RocePlan(), Round(52'000, 51'800, 51'600, 0, 3'000));
  ASSERT_EQ(findings.size(), 2u);
  const v1::Finding& dcqcn = Get(findings, "incast.dcqcn");
  EXPECT_EQ(dcqcn.status(), v1::Finding::pass);
  EXPECT_EQ(dcqcn.severity(), v1::Finding::warning);
  EXPECT_EQ(dcqcn.key(), "incast.dcqcn@incast->node2/mlx5_0 write_bw");
  EXPECT_THAT(dcqcn.observed(), HasSubstr("np_ecn_marked_roce_packets +52000, np_cnp_sent +51800"));
  EXPECT_THAT(dcqcn.observed(), HasSubstr("rp_cnp_handled node1 +25800, node3 +25800"));
  EXPECT_EQ(Get(findings, "incast.cnp_ignored").status(), v1::Finding::pass);
}

TEST(JudgeDcqcnTest, PauseFramesAloneWarnThatDcqcnIsNotEngaged) {
  const auto findings = JudgeDcqcn(RocePlan(), Round(0, 0, 0, 0, 48'000));
  const v1::Finding& dcqcn = Get(findings, "incast.dcqcn");
  EXPECT_EQ(dcqcn.status(), v1::Finding::fail);
  EXPECT_EQ(dcqcn.severity(), v1::Finding::warning);
  EXPECT_EQ(dcqcn.node(), "node2");
  EXPECT_EQ(dcqcn.device(), "mlx5_0");
  EXPECT_THAT(dcqcn.message(),
              HasSubstr("DCQCN is not engaged: PFC alone is throttling; check ECN on the switch "
                        "queue and the NIC's DCQCN enablement"));
  EXPECT_THAT(dcqcn.message(), HasSubstr("node2 mlx5_0 tx_prio3_pause +48000"));
  EXPECT_THAT(dcqcn.message(), HasSubstr("np_ecn_marked_roce_packets +0, np_cnp_sent +0"));
  EXPECT_THAT(dcqcn.remedy(), HasSubstr("/sys/class/net/<netdev>/ecn/roce_np/enable/3"));
}

TEST(JudgeDcqcnTest, MarksWithoutCnpsNameTheNotificationPoint) {
  const auto findings = JudgeDcqcn(RocePlan(), Round(9'000, 0, 0, 0, 100));
  const v1::Finding& dcqcn = Get(findings, "incast.dcqcn");
  EXPECT_EQ(dcqcn.status(), v1::Finding::fail);
  EXPECT_THAT(dcqcn.message(), HasSubstr("received 9000 ECN-marked RoCE packets and sent no CNP"));
}

TEST(JudgeDcqcnTest, IgnoredCnpsWarnAndNameTheSender) {
  const auto findings = JudgeDcqcn(RocePlan(), Round(52'000, 51'800, 40'000, 11'800, 3'000));
  const v1::Finding& ignored = Get(findings, "incast.cnp_ignored");
  EXPECT_EQ(ignored.status(), v1::Finding::fail);
  EXPECT_EQ(ignored.severity(), v1::Finding::warning);
  EXPECT_EQ(ignored.node(), "node3");
  EXPECT_EQ(ignored.observed(), "rp_cnp_ignored node1 +0, node3 +11800");
  EXPECT_THAT(ignored.message(), HasSubstr("did not slow down"));
  EXPECT_THAT(ignored.remedy(), HasSubstr("/sys/class/net/<netdev>/ecn/roce_rp/enable/3"));
}

TEST(JudgeDcqcnTest, NoCongestionSignalIsSkippedNotPassed) {
  const auto findings = JudgeDcqcn(RocePlan(), Round(0, 0, 0, 0, 0));
  EXPECT_EQ(Get(findings, "incast.dcqcn").status(), v1::Finding::skipped);
  EXPECT_THAT(Get(findings, "incast.dcqcn").message(), HasSubstr("did not congest"));
}

TEST(JudgeDcqcnTest, SoftRoceWithoutTheCountersIsSkippedWithTheReason) {
  v1::IncastResult round = Round(0, 0, 0, 0, 0);
  round.set_rail("rxe0");
  round.clear_receiver_counters();
  for (auto& sender : *round.mutable_senders()) {
    sender.set_rail("rxe0");
    sender.clear_counters();
  }
  const auto findings = JudgeDcqcn(RocePlan(), round);
  ASSERT_EQ(findings.size(), 2u);
  for (const auto& f : findings) {
    EXPECT_EQ(f.status(), v1::Finding::skipped) << f.id();
    EXPECT_THAT(f.message(), HasSubstr("recorded no"));
  }
  EXPECT_THAT(Get(findings, "incast.dcqcn").message(),
              HasSubstr("node2 rxe0 recorded no np_ecn_marked_roce_packets"));
}

TEST(JudgeDcqcnTest, ARoundThatDidNotRunIsUnknown) {
  v1::IncastResult round = Round(0, 0, 0, 0, 0);
  round.set_error("node3 is unreachable");
  for (const auto& f : JudgeDcqcn(RocePlan(), round)) {
    EXPECT_EQ(f.status(), v1::Finding::unknown);
  }
}

TEST(JudgeDcqcnTest, OnlyRoceWithEcnOnTheVerbsEngineIsJudged) {
  plan::Plan no_ecn = RocePlan();
  no_ecn.fabric.roce.ecn = false;
  EXPECT_TRUE(JudgeDcqcn(no_ecn, Round(0, 0, 0, 0, 48'000)).empty());
  plan::Plan infiniband = RocePlan();
  infiniband.fabric.type = plan::FabricType::kInfiniband;
  EXPECT_TRUE(JudgeDcqcn(infiniband, Round(0, 0, 0, 0, 48'000)).empty());
  v1::IncastResult tcp = Round(0, 0, 0, 0, 48'000);
  tcp.set_engine("tcp");
  EXPECT_TRUE(JudgeDcqcn(RocePlan(), tcp).empty());
}

TEST(JudgeDcqcnTest, JudgeIncastCarriesTheDcqcnFindingsAndKeepsDropsFailing) {
  v1::IncastResult round = Round(0, 0, 0, 0, 48'000);
  Add(round.mutable_receiver_counters(), "ethtool", "rx_prio3_discards", 311);
  SummarizeIncast(round);
  const auto findings = JudgeIncast(RocePlan(), round);
  EXPECT_EQ(Get(findings, "lossless.drops").status(), v1::Finding::fail);
  EXPECT_EQ(Get(findings, "lossless.drops").severity(), v1::Finding::error);
  EXPECT_EQ(Get(findings, "incast.dcqcn").status(), v1::Finding::fail);
  EXPECT_EQ(Get(findings, "incast.cnp_ignored").status(), v1::Finding::pass);
}

TEST(IsDcqcnCounterTest, NamesTheFourMlx5Counters) {
  for (const char* name :
       {"np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "rp_cnp_ignored"}) {
    EXPECT_TRUE(IsDcqcnCounter(name)) << name;
  }
  EXPECT_FALSE(IsDcqcnCounter("out_of_sequence"));
}

}  // namespace
}  // namespace clustercert::controller::pairwise
