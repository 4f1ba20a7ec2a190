#include "controller/pairwise/lossless_verdict.h"

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/counters.pb.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Deltas = google::protobuf::RepeatedPtrField<v1::CounterDelta>;

constexpr char kLabel[] = "node1/mlx5_0->node2 write_bw host";

void Add(Deltas& deltas, const std::string& source, const std::string& name, uint64_t delta) {
  v1::CounterDelta* d = deltas.Add();
  d->set_source(source);
  d->set_name(name);
  d->set_before(1000);
  d->set_after(1000 + delta);
  d->set_delta(delta);
}

// What an mlx5 port records around a clean 10 s write_bw at ~93 Gb/s, the
// RDMA traffic on priority 3 (only the counters that moved are recorded):
// the data one way, the ACKs the other, a few pause frames where PFC
// held the sender back, CNPs from ECN.
Deltas CleanSender() {
  Deltas d;
  Add(d, "counters", "port_xmit_data", 2'900'000'000);
  Add(d, "hw_counters", "rp_cnp_handled", 12);
  Add(d, "ethtool", "tx_prio3_bytes", 11'600'000'000);
  Add(d, "ethtool", "tx_prio3_packets", 2'800'000);
  Add(d, "ethtool", "tx_prio0_bytes", 20'000);  // LLDP, ARP on the data netdev
  Add(d, "ethtool", "tx_prio0_packets", 150);
  Add(d, "ethtool", "rx_prio3_bytes", 180'000'000);
  Add(d, "ethtool", "rx_prio3_packets", 2'800'000);
  Add(d, "ethtool", "rx_prio3_pause", 40);
  Add(d, "ethtool", "rx_prio3_pause_duration", 900);
  return d;
}

Deltas CleanReceiver() {
  Deltas d;
  Add(d, "counters", "port_rcv_data", 2'900'000'000);
  Add(d, "hw_counters", "np_cnp_sent", 12);
  Add(d, "hw_counters", "np_ecn_marked_roce_packets", 12);
  Add(d, "ethtool", "rx_prio3_bytes", 11'600'000'000);
  Add(d, "ethtool", "rx_prio3_packets", 2'800'000);
  Add(d, "ethtool", "rx_prio0_bytes", 9'000);
  Add(d, "ethtool", "tx_prio3_bytes", 180'000'000);
  Add(d, "ethtool", "tx_prio3_packets", 2'800'000);
  Add(d, "ethtool", "tx_prio3_pause", 40);
  Add(d, "ethtool", "tx_prio3_pause_duration", 900);
  return d;
}

std::vector<LosslessEnd> Ends(const Deltas& sender, const Deltas& receiver) {
  return {{"node1", "mlx5_0", &sender, true, false}, {"node2", "mlx5_0", &receiver, false, true}};
}

std::vector<std::string> Ids(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id());
  return ids;
}

const v1::Finding& Find(const LosslessJudgement& judgement, const std::string& id) {
  for (const auto& f : judgement.findings) {
    if (f.id() == id) return f;
  }
  ADD_FAILURE() << "no " << id;
  static const v1::Finding kNone;
  return kNone;
}

TEST(LosslessVerdictTest, ACleanCellPassesAllThreeChecks) {
  const Deltas sender = CleanSender();
  const Deltas receiver = CleanReceiver();
  LosslessJudgement judgement = JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver));
  EXPECT_TRUE(judgement.judged);
  EXPECT_EQ(judgement.not_judged_reason, "");
  ASSERT_THAT(Ids(judgement.findings),
              ElementsAre("lossless.priority", "lossless.pause", "lossless.drops"));
  for (const auto& f : judgement.findings) {
    EXPECT_EQ(f.status(), v1::Finding::pass) << f.DebugString();
    EXPECT_EQ(f.severity(), v1::Finding::error);
    EXPECT_EQ(f.key(), f.id() + "@" + kLabel);
  }
  const v1::Finding& priority = judgement.findings[0];
  EXPECT_EQ(priority.message(),
            "node1/mlx5_0->node2 write_bw host: 99.9 % of the 11.6 GB node1 mlx5_0 sent and "
            "99.9 % of the 11.6 GB node2 mlx5_0 received travelled on priority 3 (the plan's "
            "fabric.roce.pfc_priority).");
  EXPECT_TRUE(priority.has_value());
  EXPECT_EQ(priority.unit(), "%");
  EXPECT_EQ(priority.threshold(), 95);
  EXPECT_EQ(priority.expected(), ">= 95 % on priority 3");
  EXPECT_THAT(judgement.findings[1].message(), HasSubstr("(80 on priority 3)"));
}

TEST(LosslessVerdictTest, TrafficOnTheWrongPriorityFailsNamingWhereItWent) {
  // trust pcp with untagged traffic: everything lands on priority 0.
  Deltas sender;
  Add(sender, "ethtool", "tx_prio0_bytes", 11'350'000'000);
  Add(sender, "ethtool", "tx_prio3_bytes", 255'000'000);
  Add(sender, "ethtool", "tx_prio0_packets", 2'700'000);
  Deltas receiver;
  Add(receiver, "ethtool", "rx_prio0_bytes", 11'350'000'000);
  Add(receiver, "ethtool", "rx_prio3_bytes", 255'000'000);
  LosslessJudgement judgement = JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver));
  const v1::Finding& f = Find(judgement, "lossless.priority");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.severity(), v1::Finding::error);
  EXPECT_EQ(f.node(), "node1");
  EXPECT_EQ(f.device(), "mlx5_0");
  EXPECT_EQ(f.key(), "lossless.priority@node1/mlx5_0->node2 write_bw host");
  EXPECT_THAT(f.message(),
              HasSubstr("node1 mlx5_0: 97.8 % of the 11.6 GB sent left on priority 0, 2.1 % on "
                        "priority 3 (the plan's fabric.roce.pfc_priority)"));
  EXPECT_THAT(f.message(), HasSubstr("node2 mlx5_0: 97.8 % of the 11.6 GB received arrived on "
                                     "priority 0"));
  EXPECT_THAT(f.message(), HasSubstr("at least 95 % must travel on priority 3."));
  EXPECT_EQ(f.observed(), "2.1 % on priority 3 (node1 mlx5_0 sent 11.6 GB)");
  EXPECT_NEAR(f.value(), 2.197, 0.01);
  // The seed's order: NIC trust and DSCP map, the application's class, the switch.
  const std::string& remedy = f.remedy();
  EXPECT_THAT(remedy, HasSubstr("--trust dscp"));
  EXPECT_THAT(remedy, HasSubstr("traffic class 106"));
  EXPECT_LT(remedy.find("--trust dscp"), remedy.find("traffic class 106"));
  EXPECT_LT(remedy.find("traffic class 106"), remedy.find("switch port"));
  // Nothing else went wrong: pause and drops still pass.
  EXPECT_EQ(Find(judgement, "lossless.pause").status(), v1::Finding::pass);
  EXPECT_EQ(Find(judgement, "lossless.drops").status(), v1::Finding::pass);
}

TEST(LosslessVerdictTest, JustUnderTheShareFailsAndDoesNotReadAsTheFloor) {
  Deltas sender;
  Add(sender, "ethtool", "tx_prio3_bytes", 9'499);
  Add(sender, "ethtool", "tx_prio0_bytes", 501);
  Deltas receiver = CleanReceiver();
  const v1::Finding f =
      Find(JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver)), "lossless.priority");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.observed(), "94.9 % on priority 3 (node1 mlx5_0 sent 10 kB)");
  // Most bytes on the planned priority, still too few: it is listed first.
  EXPECT_THAT(f.message(), HasSubstr("node1 mlx5_0: 94.9 % of the 10 kB sent left on priority 3 "
                                     "(the plan's fabric.roce.pfc_priority), 5 % on priority 0"));

  Deltas exactly;
  Add(exactly, "ethtool", "tx_prio3_bytes", 9'500);
  Add(exactly, "ethtool", "tx_prio0_bytes", 500);
  EXPECT_EQ(Find(JudgeLossless(plan::Plan{}, kLabel, Ends(exactly, receiver)), "lossless.priority")
                .status(),
            v1::Finding::pass);
}

TEST(LosslessVerdictTest, ThePlannedPriorityIsThePlans) {
  plan::Plan plan;
  plan.fabric.roce.pfc_priority = 5;
  const Deltas sender = CleanSender();
  const Deltas receiver = CleanReceiver();
  LosslessJudgement judgement = JudgeLossless(plan, kLabel, Ends(sender, receiver));
  EXPECT_EQ(Find(judgement, "lossless.priority").status(), v1::Finding::fail);
  // Priority 3's pause frames are now on the wrong priority.
  const v1::Finding& pause = Find(judgement, "lossless.pause");
  EXPECT_EQ(pause.status(), v1::Finding::fail);
  EXPECT_THAT(pause.remedy(), HasSubstr("--pfc 0,0,0,0,0,1,0,0"));
}

TEST(LosslessVerdictTest, PauseFramesOnAnotherPriorityFail) {
  const Deltas sender = CleanSender();
  Deltas receiver = CleanReceiver();
  Add(receiver, "ethtool", "tx_prio0_pause", 1520);
  Add(receiver, "ethtool", "tx_prio0_pause_duration", 30000);
  LosslessJudgement judgement = JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver));
  const v1::Finding& f = Find(judgement, "lossless.pause");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.severity(), v1::Finding::error);
  EXPECT_EQ(f.node(), "node2");
  EXPECT_EQ(f.device(), "mlx5_0");
  EXPECT_EQ(f.key(), "lossless.pause@node1/mlx5_0->node2 write_bw host");
  EXPECT_EQ(f.observed(), "node2 mlx5_0 tx_prio0_pause +1520 (priority 0)");
  EXPECT_EQ(f.expected(), "pause frames on priority 3 only");
  EXPECT_THAT(f.message(), HasSubstr("PFC is on for the wrong priority"));
  EXPECT_THAT(f.remedy(), HasSubstr("mlnx_qos -i <netdev> --pfc 0,0,0,1,0,0,0,0"));
  EXPECT_EQ(Find(judgement, "lossless.priority").status(), v1::Finding::pass);
  EXPECT_EQ(Find(judgement, "lossless.drops").status(), v1::Finding::pass);
}

TEST(LosslessVerdictTest, LinkLevelPauseOnALosslessFabricFails) {
  Deltas sender = CleanSender();
  Add(sender, "ethtool", "rx_pause_ctrl_phy", 7);
  const Deltas receiver = CleanReceiver();
  const v1::Finding f =
      Find(JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver)), "lossless.pause");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.node(), "node1");
  EXPECT_THAT(f.observed(), HasSubstr("rx_pause_ctrl_phy +7 (link-level 802.3x pause)"));
  EXPECT_THAT(f.remedy(), HasSubstr("ethtool -A <netdev> rx off tx off"));
}

TEST(LosslessVerdictTest, ARisingDropCounterFails) {
  const Deltas sender = CleanSender();
  Deltas receiver = CleanReceiver();
  Add(receiver, "ethtool", "rx_discards_phy", 42);
  Add(receiver, "ethtool", "rx_prio3_discards", 42);
  LosslessJudgement judgement = JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver));
  const v1::Finding& f = Find(judgement, "lossless.drops");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.severity(), v1::Finding::error);
  EXPECT_EQ(f.node(), "node2");
  EXPECT_EQ(f.key(), "lossless.drops@node1/mlx5_0->node2 write_bw host");
  EXPECT_EQ(f.observed(), "node2 mlx5_0 rx_discards_phy +42, rx_prio3_discards +42");
  EXPECT_THAT(f.message(), HasSubstr("PFC is not honoured end to end"));
  EXPECT_THAT(f.remedy(), HasSubstr("headroom"));
  EXPECT_EQ(Find(judgement, "lossless.priority").status(), v1::Finding::pass);
  EXPECT_EQ(Find(judgement, "lossless.pause").status(), v1::Finding::pass);
}

TEST(LosslessVerdictTest, HwCountersOutOfBufferIsADropOnEitherEnd) {
  Deltas sender = CleanSender();
  Add(sender, "hw_counters", "out_of_buffer", 3);
  const Deltas receiver = CleanReceiver();
  const v1::Finding f =
      Find(JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver)), "lossless.drops");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.node(), "node1");
  EXPECT_EQ(f.observed(), "node1 mlx5_0 out_of_buffer +3");
}

TEST(LosslessVerdictTest, SoftRoceCountersAreNotJudgedButTheirReasonIsGiven) {
  // rxe0: hw_counters only, no ethtool per-priority statistics.
  Deltas sender;
  Add(sender, "hw_counters", "sent_pkts", 120'000);
  Add(sender, "hw_counters", "rcvd_pkts", 60'000);
  Deltas receiver;
  Add(receiver, "hw_counters", "rcvd_pkts", 120'000);
  std::vector<LosslessEnd> ends = {{"node1", "rxe0", &sender, true, false},
                                   {"node2", "rxe0", &receiver, false, true}};
  LosslessJudgement judgement =
      JudgeLossless(plan::Plan{}, "node1/rxe0->node2 write_bw host", ends);
  EXPECT_FALSE(judgement.judged);
  EXPECT_TRUE(judgement.findings.empty());
  EXPECT_EQ(judgement.not_judged_reason,
            "no per-priority byte counters on node1 rxe0 (its port counters carry no "
            "tx_prio<N>_bytes)");

  v1::Finding skipped = LosslessNotJudged(judgement.not_judged_reason);
  EXPECT_EQ(skipped.id(), "lossless.priority");
  EXPECT_EQ(skipped.status(), v1::Finding::skipped);
  EXPECT_EQ(skipped.key(), "lossless.priority");
  EXPECT_EQ(skipped.node(), "");
  EXPECT_THAT(skipped.message(),
              ::testing::StartsWith("skipped: no per-priority byte counters on node1 rxe0"));
  EXPECT_THAT(skipped.remedy(), HasSubstr("fabric.roce.lossless: false"));
}

TEST(LosslessVerdictTest, AnUnjudgedEndStillFailsOnTheDropsItShows) {
  Deltas sender;
  Add(sender, "ethtool", "rx_discards_phy", 5);
  Deltas receiver;
  std::vector<LosslessEnd> ends = {{"node1", "eth0", &sender, true, false},
                                   {"node2", "eth0", &receiver, false, true}};
  LosslessJudgement judgement = JudgeLossless(plan::Plan{}, kLabel, ends);
  EXPECT_FALSE(judgement.judged);
  ASSERT_THAT(Ids(judgement.findings), ElementsAre("lossless.drops"));
  EXPECT_EQ(judgement.findings[0].status(), v1::Finding::fail);
}

TEST(LosslessVerdictTest, ByteCountersThatCountedNothingAreNotJudged) {
  Deltas sender;
  v1::CounterDelta* reset = sender.Add();
  reset->set_source("ethtool");
  reset->set_name("tx_prio3_bytes");
  reset->set_note("went backwards from 9 to 1 (counter reset or wrap): no delta");
  const Deltas receiver = CleanReceiver();
  LosslessJudgement judgement = JudgeLossless(plan::Plan{}, kLabel, Ends(sender, receiver));
  EXPECT_FALSE(judgement.judged);
  EXPECT_THAT(judgement.not_judged_reason, HasSubstr("node1 mlx5_0 counted no sent bytes"));
  EXPECT_TRUE(judgement.findings.empty());
}

TEST(LosslessVerdictTest, BidirectionalJudgesBothDirectionsOfBothEnds) {
  Deltas a = CleanSender();
  Deltas b = CleanReceiver();
  // b sends its half on priority 0.
  Add(b, "ethtool", "tx_prio0_bytes", 11'000'000'000);
  std::vector<LosslessEnd> ends = {{"node1", "mlx5_0", &a, true, true},
                                   {"node2", "mlx5_1", &b, true, true}};
  const v1::Finding f = Find(JudgeLossless(plan::Plan{}, kLabel, ends), "lossless.priority");
  EXPECT_EQ(f.status(), v1::Finding::fail);
  EXPECT_EQ(f.node(), "node2");
  EXPECT_EQ(f.device(), "mlx5_1");
  EXPECT_THAT(f.message(), HasSubstr("node2 mlx5_1: "));
  EXPECT_THAT(f.message(), HasSubstr(" sent left on priority 0"));
}

TEST(LosslessVerdictTest, NotLosslessOrNotRoceGivesNothing) {
  const Deltas sender = CleanSender();
  Deltas receiver = CleanReceiver();
  Add(receiver, "ethtool", "rx_discards_phy", 42);
  plan::Plan lossy;
  lossy.fabric.roce.lossless = false;
  LosslessJudgement judgement = JudgeLossless(lossy, kLabel, Ends(sender, receiver));
  EXPECT_TRUE(judgement.findings.empty());
  EXPECT_FALSE(judgement.judged);
  EXPECT_EQ(judgement.not_judged_reason, "");
  EXPECT_FALSE(LosslessJudged(lossy));

  plan::Plan ib;
  ib.fabric.type = plan::FabricType::kInfiniband;
  EXPECT_TRUE(JudgeLossless(ib, kLabel, Ends(sender, receiver)).findings.empty());
  EXPECT_FALSE(LosslessJudged(ib));
  EXPECT_TRUE(LosslessJudged(plan::Plan{}));
}

}  // namespace
}  // namespace clustercert::controller::pairwise
