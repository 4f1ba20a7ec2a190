#include "controller/pairwise/pair_verdict.h"

#include <cstdint>
#include <limits>
#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/counters.pb.h"
#include "common/counter_deltas.h"
#include "controller/checks/node_checks.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

PairMeasurement Bandwidth(double gbps, double line_rate = 200, std::string memory = "host") {
  PairMeasurement m;
  m.client = "node1";
  m.server = "node3";
  m.rail = "mlx5_0";
  m.memory = std::move(memory);
  m.test = "write_bw";
  m.ok = true;
  m.result.mutable_bandwidth()->set_avg_gbps(gbps);
  m.line_rate_gbps = line_rate;
  return m;
}

PairMeasurement Latency(double typical_us, double p99_us) {
  PairMeasurement m;
  m.client = "node1";
  m.server = "node3";
  m.rail = "mlx5_0";
  m.memory = "host";
  m.test = "write_lat";
  m.ok = true;
  m.result.mutable_latency()->set_typical_us(typical_us);
  m.result.mutable_latency()->set_p99_us(p99_us);
  return m;
}

TEST(JudgePairTest, BandwidthUnderTheFloorFailsWithTheSeedRemedy) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(92.4));
  EXPECT_EQ(finding.id(), "pairwise.bandwidth");
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_EQ(finding.node(), "node1");
  EXPECT_EQ(finding.device(), "mlx5_0");
  EXPECT_EQ(finding.message(),
            "node1 mlx5_0 -> node3 mlx5_0 write_bw host: 92.4 Gb/s, 46.2 % of 200 Gb/s "
            "(plan floor 80 %).");
  EXPECT_EQ(finding.observed(), "92.4 Gb/s (46.2 % of 200 Gb/s)");
  EXPECT_EQ(finding.expected(), ">= 160 Gb/s (80 % of 200 Gb/s)");
  EXPECT_THAT(finding.remedy(),
              HasSubstr("More than 20 % under line rate is a fabric fault: check in this order "
                        "MTU, PFC, the cable/transceiver, the NIC's PCIe gen/lanes, NUMA "
                        "placement"));
}

TEST(JudgePairTest, ExactlyEightyPercentPasses) {
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Bandwidth(160)).status(), v1::Finding::pass);
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Bandwidth(80, 100)).status(), v1::Finding::pass);
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Bandwidth(320, 400)).status(), v1::Finding::pass);
  plan::Pairwise azure;
  azure.min_fraction_of_line_rate = 0.9;
  EXPECT_EQ(JudgePair(azure, Bandwidth(180)).status(), v1::Finding::pass);
  EXPECT_EQ(JudgePair(azure, Bandwidth(179.9)).status(), v1::Finding::fail);
  EXPECT_THAT(JudgePair(azure, Bandwidth(179.9)).remedy(), HasSubstr("More than 10 % under"));
}

TEST(JudgePairTest, JustUnderEightyPercentFailsAndDoesNotReadAsEighty) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(159.98));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(), HasSubstr("159.98 Gb/s, 79.9 % of 200 Gb/s"));
}

TEST(JudgePairTest, ZeroBytesMovedPointsAtPathMtu) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(0));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.remedy(), HasSubstr("No data moved: a path MTU mismatch"));
}

TEST(JudgePairTest, NoLineRateIsSkipped) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(0.048726, 0));
  EXPECT_EQ(finding.status(), v1::Finding::skipped);
  EXPECT_EQ(finding.observed(), "0.048726 Gb/s");
  EXPECT_THAT(finding.message(), HasSubstr("no line rate to compare with"));
}

// At 768 nodes a controller-side deadline was judged a fabric fault and its
// node named a suspect: a control-plane failure is "not measured" instead.
TEST(JudgePairTest, ControlPlaneFailureIsNotMeasuredNeverAFail) {
  PairMeasurement m = Bandwidth(0);
  m.ok = false;
  m.control_plane = true;
  m.error = "node3 connect: Deadline Exceeded";
  v1::Finding bandwidth = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(bandwidth.status(), v1::Finding::unknown);
  EXPECT_EQ(bandwidth.severity(), v1::Finding::error);  // not measured is not certified
  EXPECT_EQ(bandwidth.observed(), "not measured: node3 connect: Deadline Exceeded");
  EXPECT_THAT(bandwidth.message(), HasSubstr("not measured, the control plane failed"));
  EXPECT_THAT(bandwidth.remedy(), HasSubstr("not the fabric"));
  EXPECT_THAT(bandwidth.remedy(), Not(HasSubstr("MTU")));

  m.test = "write_lat";
  EXPECT_EQ(JudgePair(plan::Pairwise{}, m).status(), v1::Finding::unknown);
}

TEST(JudgePairTest, FailedMeasurementFailsWithItsError) {
  PairMeasurement m = Bandwidth(0);
  m.ok = false;
  m.error = "node3 mlx5_0: RTR failed: Connection timed out";
  v1::Finding finding = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(finding.id(), "pairwise.bandwidth");
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.observed(), "error: node3 mlx5_0: RTR failed: Connection timed out");
  EXPECT_THAT(finding.message(), HasSubstr("node1 mlx5_0 -> node3 mlx5_0 write_bw host: the "
                                           "bandwidth test failed: node3 mlx5_0: RTR failed"));

  m.test = "write_lat";
  m.error.clear();
  v1::Finding latency = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(latency.id(), "pairwise.latency");
  EXPECT_EQ(latency.status(), v1::Finding::fail);
  EXPECT_EQ(latency.observed(), "error: the test did not complete");
}

TEST(JudgePairTest, MissingFiguresAreUnknown) {
  PairMeasurement m = Bandwidth(100);
  m.result.clear_bandwidth();
  EXPECT_EQ(JudgePair(plan::Pairwise{}, m).status(), v1::Finding::unknown);
  PairMeasurement lat = Latency(1, 1);
  lat.result.clear_latency();
  EXPECT_EQ(JudgePair(plan::Pairwise{}, lat).status(), v1::Finding::unknown);
}

TEST(JudgePairTest, TcpPairHasNoRail) {
  PairMeasurement m = Bandwidth(9.1, 10);
  m.rail.clear();
  v1::Finding finding = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.device(), "");
  EXPECT_EQ(finding.message(),
            "node1 -> node3 write_bw host: 9.1 Gb/s, 91 % of 10 Gb/s (plan "
            "floor 80 %).");
}

TEST(JudgePairTest, LatencyAtTheBoundPassesAndReportsP99) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Latency(5, 7.25));
  EXPECT_EQ(finding.id(), "pairwise.latency");
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.observed(), "typical 5 us, p99 7.25 us");
  EXPECT_EQ(finding.expected(), "typical <= 5 us");
  EXPECT_EQ(finding.message(),
            "node1 mlx5_0 -> node3 mlx5_0 write_lat host: typical 5 us (p99 7.25 us), plan max "
            "5 us.");
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Latency(1.8, 2.3)).status(), v1::Finding::pass);
}

TEST(JudgePairTest, LatencyOverTheBoundFails) {
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Latency(5.01, 5.2)).status(), v1::Finding::fail);
  // The rxe sample: t_typical 1011.28 us, 99 % 4211.33 us.
  v1::Finding rxe = JudgePair(plan::Pairwise{}, Latency(1011.28, 4211.33));
  EXPECT_EQ(rxe.status(), v1::Finding::fail);
  EXPECT_EQ(rxe.observed(), "typical 1011.3 us, p99 4211.3 us");
  EXPECT_THAT(rxe.remedy(), HasSubstr("check in this order MTU, PFC"));
  // A low median with a bad tail still passes: the bound is on the typical value.
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Latency(1.9, 40)).status(), v1::Finding::pass);
}

TEST(JudgePairTest, NoLatencyBoundIsSkipped) {
  plan::Pairwise plan;
  plan.max_latency_us = 0;
  EXPECT_EQ(JudgePair(plan, Latency(3, 4)).status(), v1::Finding::skipped);
}

TEST(JudgePairTest, UnknownTestIsSkipped) {
  PairMeasurement m = Bandwidth(100);
  m.test = "atomic";
  v1::Finding finding = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(finding.id(), "pairwise.test");
  EXPECT_EQ(finding.status(), v1::Finding::skipped);
}

// GPUDirect: the cuda-memory run at host / ratio.
v1::Finding GpuDirectAt(double slowdown) {
  PairMeasurement host = Bandwidth(180);
  PairMeasurement cuda = Bandwidth(180 / slowdown, 200, "cuda");
  cuda.result.set_memory_path("cuda:0 via nvidia-peermem");
  return JudgeGpuDirect(host, cuda);
}

TEST(JudgeGpuDirectTest, WithinAFewPercentPasses) {
  v1::Finding finding = GpuDirectAt(1.02);
  EXPECT_EQ(finding.id(), "pairwise.gpudirect");
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.node(), "node1");
  EXPECT_EQ(finding.device(), "mlx5_0");
  EXPECT_EQ(finding.expected(), "cuda >= 95 % of host bandwidth");
  EXPECT_THAT(finding.message(),
              HasSubstr("node1 mlx5_0 -> node3 mlx5_0 write_bw: cuda (cuda:0 via nvidia-peermem) "
                        "176.47 Gb/s is 98 % of host memory's 180 Gb/s"));
  EXPECT_EQ(GpuDirectAt(1 / 0.95).status(), v1::Finding::pass);  // exactly 95 %
  EXPECT_EQ(GpuDirectAt(0.9).status(), v1::Finding::pass);       // faster than host
}

TEST(JudgeGpuDirectTest, OneAndAHalfTimesSlowerIsAWarning) {
  v1::Finding finding = GpuDirectAt(1.5);
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::warning);
  EXPECT_EQ(finding.observed(), "cuda 120 Gb/s, host 180 Gb/s (1.5x slower)");
  EXPECT_THAT(finding.remedy(), HasSubstr("nvidia-smi topo -m"));
}

TEST(JudgeGpuDirectTest, TwiceSlowerMeansGpuDirectIsNotInThePath) {
  for (double slowdown : {2.0, 5.0}) {
    v1::Finding finding = GpuDirectAt(slowdown);
    EXPECT_EQ(finding.status(), v1::Finding::fail) << slowdown;
    EXPECT_EQ(finding.severity(), v1::Finding::error) << slowdown;
    EXPECT_THAT(finding.message(), HasSubstr("the data goes through host memory"));
    EXPECT_THAT(finding.remedy(), HasSubstr("GPUDirect not in the path: check nvidia_peermem"));
    EXPECT_THAT(finding.remedy(), HasSubstr("GPU/NIC NUMA placement"));
  }
  EXPECT_EQ(GpuDirectAt(2.0).observed(), "cuda 90 Gb/s, host 180 Gb/s (2x slower)");
  EXPECT_EQ(GpuDirectAt(5.0).observed(), "cuda 36 Gb/s, host 180 Gb/s (5x slower)");
  EXPECT_EQ(GpuDirectAt(1.99).severity(), v1::Finding::warning);
}

TEST(JudgeGpuDirectTest, CudaTestThatFailsOrMovesNothingFails) {
  PairMeasurement host = Bandwidth(180);
  PairMeasurement cuda = Bandwidth(0, 200, "cuda");
  v1::Finding none = JudgeGpuDirect(host, cuda);
  EXPECT_EQ(none.status(), v1::Finding::fail);
  EXPECT_EQ(none.severity(), v1::Finding::error);
  EXPECT_EQ(none.observed(), "cuda 0 Gb/s, host 180 Gb/s (no cuda data moved)");

  cuda.ok = false;
  cuda.error = "ibv_reg_mr on cuda:0: Bad address";
  v1::Finding failed = JudgeGpuDirect(host, cuda);
  EXPECT_EQ(failed.status(), v1::Finding::fail);
  EXPECT_EQ(failed.severity(), v1::Finding::error);
  EXPECT_THAT(failed.message(), HasSubstr("the cuda-memory test failed (ibv_reg_mr on cuda:0: "
                                          "Bad address) while host memory ran at 180 Gb/s"));
  EXPECT_THAT(failed.remedy(), HasSubstr("nvidia_peermem"));
}

TEST(JudgeGpuDirectTest, NoHostBaselineIsUnknown) {
  PairMeasurement host = Bandwidth(0);
  EXPECT_EQ(JudgeGpuDirect(host, Bandwidth(100, 200, "cuda")).status(), v1::Finding::unknown);
  host.ok = false;
  host.error = "timed out";
  v1::Finding finding = JudgeGpuDirect(host, Bandwidth(100, 200, "cuda"));
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_EQ(finding.observed(), "unknown: the host-memory test failed: timed out");
}

TEST(JudgeGpuDirectTest, DifferentPairsAreNotCompared) {
  PairMeasurement host = Bandwidth(180);
  PairMeasurement cuda = Bandwidth(180, 200, "cuda");
  cuda.server = "node4";
  EXPECT_EQ(JudgeGpuDirect(host, cuda).status(), v1::Finding::unknown);
}

// Counters judge the cell: a PairResult as the pairwise phase records it
// (RecordCounters keeps only the deltas that moved or carry a note). The
// bandwidth figures say 1,000,000-byte messages x 100,000 iterations: 100 GB
// each way, so N events are N/100 per GB.
v1::PairResult Cell(const std::string& test = "write_bw") {
  v1::PairResult pair;
  pair.set_test(test);
  pair.set_engine("verbs");
  pair.set_memory("host");
  pair.set_client("node1");
  pair.set_server("node3");
  pair.set_rail("mlx5_0");
  pair.set_ok(true);
  pair.set_line_rate_gbps(200);
  if (test == "write_bw") {
    for (v1::PeerTestResult* side : {pair.mutable_client_result(), pair.mutable_server_result()}) {
      side->mutable_bandwidth()->set_message_bytes(1000000);
      side->mutable_bandwidth()->set_iterations(100000);
      side->mutable_bandwidth()->set_avg_gbps(195);
    }
  } else {
    pair.mutable_client_result()->mutable_latency()->set_typical_us(1.8);
    pair.mutable_client_result()->mutable_latency()->set_p99_us(2.3);
  }
  return pair;
}

void AddDelta(google::protobuf::RepeatedPtrField<v1::CounterDelta>* deltas,
              const std::string& source, const std::string& name, uint64_t delta) {
  v1::CounterDelta* d = deltas->Add();
  d->set_source(source);
  d->set_name(name);
  d->set_before(1000);
  d->set_after(1000 + delta);
  d->set_delta(delta);
  d->set_category(counters::CounterCategory(name));
}

// The bandwidth verdict of Cell() before the counters are looked at.
v1::Finding Base(const plan::Pairwise& plan = {}) { return JudgePair(plan, Bandwidth(195)); }

TEST(CounterVerdictTest, NoCounterTroubleGivesTodaysFindingExactly) {
  const v1::Finding base = Base();
  EXPECT_EQ(base.status(), v1::Finding::pass);
  v1::PairResult quiet = Cell();
  EXPECT_TRUE(MessageDifferencer::Equals(WithCounterVerdict({}, quiet, base), base));

  // Traffic, congestion, informational errors, FEC-corrected bits and a few
  // retries well under the threshold move nothing in the verdict.
  v1::PairResult busy = Cell();
  AddDelta(busy.mutable_client_counters(), "counters", "port_xmit_data", 25000000000);
  AddDelta(busy.mutable_client_counters(), "hw_counters", "np_cnp_sent", 1520);
  AddDelta(busy.mutable_server_counters(), "ethtool", "rx_prio3_pause", 880);
  AddDelta(busy.mutable_server_counters(), "ethtool", "rx_corrected_bits_phy", 123456);
  AddDelta(busy.mutable_server_counters(), "counters", "port_rcv_remote_physical_errors", 2);
  AddDelta(busy.mutable_server_counters(), "hw_counters", "req_cqe_flush_error", 1);
  AddDelta(busy.mutable_server_counters(), "hw_counters", "out_of_buffer", 40);
  AddDelta(busy.mutable_client_counters(), "hw_counters", "local_ack_timeout_err", 7);
  EXPECT_TRUE(MessageDifferencer::Equals(WithCounterVerdict({}, busy, base), base));
}

TEST(CounterVerdictTest, LinkDownedAtLineRateFailsAsErrorNamingTheCounter) {
  v1::PairResult pair = Cell();
  AddDelta(pair.mutable_client_counters(), "counters", "link_downed", 1);
  v1::Finding finding = WithCounterVerdict({}, pair, Base());
  EXPECT_EQ(finding.id(), "pairwise.bandwidth");
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_TRUE(checks::BlocksCertification(finding));
  EXPECT_EQ(finding.observed(), "195 Gb/s (97.5 % of 200 Gb/s); node1 mlx5_0 link_downed +1");
  EXPECT_EQ(finding.expected(), ">= 160 Gb/s (80 % of 200 Gb/s); no link error counter rises");
  EXPECT_EQ(finding.message(),
            "node1 mlx5_0 -> node3 mlx5_0 write_bw host: 195 Gb/s, 97.5 % of 200 Gb/s (plan "
            "floor 80 %). Link error counters rose during the test: node1 mlx5_0 link_downed +1; "
            "a link-level error fails the cell even at line rate.");
  EXPECT_EQ(finding.remedy(),
            "Reseat or replace the cable/transceiver on node1 mlx5_0 (check `ethtool -m` / "
            "mlxlink), then re-run.");
}

TEST(CounterVerdictTest, SymbolErrorsOnTheServerNameTheServer) {
  v1::PairResult pair = Cell();
  AddDelta(pair.mutable_server_counters(), "counters", "symbol_error", 3);
  v1::Finding finding = WithCounterVerdict({}, pair, Base());
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_THAT(finding.message(), HasSubstr("node3 mlx5_0 symbol_error +3"));
  EXPECT_THAT(finding.message(), Not(HasSubstr("node1 mlx5_0 symbol_error")));
  EXPECT_THAT(finding.remedy(),
              StartsWith("Reseat or replace the cable/transceiver on node3 mlx5_0 (check"));
}

TEST(CounterVerdictTest, EveryJudgedLinkCounterFailsAndBothEndsAreNamed) {
  for (const auto& [source, name] : std::vector<std::pair<std::string, std::string>>{
           {"counters", "link_downed"},
           {"counters", "symbol_error"},
           {"counters", "link_error_recovery"},
           {"counters", "port_rcv_errors"},
           {"counters", "local_link_integrity_errors"},
           {"counters", "excessive_buffer_overrun_errors"},
           {"hw_counters", "link_downed"},  // rxe keeps it there
           {"ethtool", "link_down_events_phy"},
           {"ethtool", "rx_symbol_err_phy"},
           {"ethtool", "rx_pcs_symbol_err_phy"},
           {"ethtool", "rx_crc_errors_phy"}}) {
    v1::PairResult pair = Cell();
    AddDelta(pair.mutable_server_counters(), source, name, 1);
    EXPECT_EQ(WithCounterVerdict({}, pair, Base()).status(), v1::Finding::fail)
        << source << "/" << name;
  }
  v1::PairResult both = Cell();
  AddDelta(both.mutable_client_counters(), "ethtool", "link_down_events_phy", 2);
  AddDelta(both.mutable_client_counters(), "counters", "link_downed", 2);
  AddDelta(both.mutable_server_counters(), "counters", "symbol_error", 9);
  v1::Finding finding = WithCounterVerdict({}, both, Base());
  EXPECT_THAT(finding.observed(),
              HasSubstr("; node1 mlx5_0 link_down_events_phy +2, node1 mlx5_0 link_downed +2, "
                        "node3 mlx5_0 symbol_error +9"));
  EXPECT_THAT(finding.remedy(), StartsWith("Reseat or replace the cable/transceiver on node1 "
                                           "mlx5_0 and node3 mlx5_0 (check"));
}

TEST(CounterVerdictTest, OutOfSequenceHalfPerGbPassesFivePerGbWarns) {
  v1::PairResult half = Cell();
  AddDelta(half.mutable_server_counters(), "hw_counters", "out_of_sequence", 50);  // 0.5 / GB
  EXPECT_TRUE(MessageDifferencer::Equals(WithCounterVerdict({}, half, Base()), Base()));

  v1::PairResult five = Cell();
  AddDelta(five.mutable_server_counters(), "hw_counters", "out_of_sequence", 500);  // 5 / GB
  v1::Finding finding = WithCounterVerdict({}, five, Base());
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::warning);
  EXPECT_FALSE(checks::BlocksCertification(finding));
  EXPECT_EQ(finding.observed(),
            "195 Gb/s (97.5 % of 200 Gb/s); node3 mlx5_0 out_of_sequence +500 (5 per GB)");
  EXPECT_EQ(finding.expected(), ">= 160 Gb/s (80 % of 200 Gb/s); retries <= 1 per GB moved");
  EXPECT_THAT(finding.message(),
              HasSubstr("(plan floor 80 %). Retransmissions over the plan's 1 per GB (100 GB "
                        "moved): node3 mlx5_0 out_of_sequence +500 (5 per GB)."));
  EXPECT_EQ(finding.remedy(),
            "Check PFC on the RDMA priority for node3 mlx5_0 and its switch port (drops force "
            "go-back-N retransmits), then the cable, then re-run.");
}

TEST(CounterVerdictTest, RetryThresholdComesFromThePlan) {
  v1::PairResult pair = Cell();
  AddDelta(pair.mutable_client_counters(), "hw_counters", "roce_adp_retrans", 500);
  plan::Pairwise lenient;
  lenient.max_retries_per_gb = 10;
  EXPECT_EQ(WithCounterVerdict(lenient, pair, Base(lenient)).status(), v1::Finding::pass);
  plan::Pairwise strict;
  strict.max_retries_per_gb = 0;
  v1::PairResult one = Cell();
  AddDelta(one.mutable_client_counters(), "hw_counters", "packet_seq_err", 1);
  v1::Finding finding = WithCounterVerdict(strict, one, Base(strict));
  EXPECT_EQ(finding.severity(), v1::Finding::warning);
  EXPECT_THAT(finding.message(), HasSubstr("over the plan's 0 per GB"));
  // Exactly at the threshold passes.
  v1::PairResult at = Cell();
  AddDelta(at.mutable_client_counters(), "hw_counters", "duplicate_request", 100);
  EXPECT_EQ(WithCounterVerdict({}, at, Base()).status(), v1::Finding::pass);
}

TEST(CounterVerdictTest, EachRetryCounterIsJudgedOnItsOwn) {
  // 80 + 80 on one end is not 1.6 / GB: the same loss shows in several
  // counters (out_of_sequence at the receiver, packet_seq_err at the sender).
  v1::PairResult pair = Cell();
  AddDelta(pair.mutable_client_counters(), "hw_counters", "packet_seq_err", 80);
  AddDelta(pair.mutable_server_counters(), "hw_counters", "out_of_sequence", 80);
  EXPECT_EQ(WithCounterVerdict({}, pair, Base()).status(), v1::Finding::pass);
  for (const auto& [source, name] :
       std::vector<std::pair<std::string, std::string>>{{"hw_counters", "out_of_sequence"},
                                                        {"hw_counters", "packet_seq_err"},
                                                        {"hw_counters", "local_ack_timeout_err"},
                                                        {"hw_counters", "rnr_nak_retry_err"},
                                                        {"hw_counters", "implied_nak_seq_err"},
                                                        {"hw_counters", "duplicate_request"},
                                                        {"hw_counters", "roce_adp_retrans"},
                                                        {"hw_counters", "roce_adp_retrans_to"},
                                                        {"hw_counters", "roce_slow_restart"},
                                                        {"hw_counters", "roce_slow_restart_trans"},
                                                        {"hw_counters", "rcvd_seq_err"},
                                                        {"ethtool", "rx_discards_phy"}}) {
    v1::PairResult cell = Cell();
    AddDelta(cell.mutable_server_counters(), source, name, 101);
    EXPECT_EQ(WithCounterVerdict({}, cell, Base()).severity(), v1::Finding::warning)
        << source << "/" << name;
  }
}

TEST(CounterVerdictTest, BidirectionalCellsCountBothDirections) {
  plan::Pairwise plan;
  plan.bidirectional = true;
  v1::PairResult pair = Cell();
  AddDelta(pair.mutable_server_counters(), "hw_counters", "out_of_sequence", 150);  // 0.75 / GB
  EXPECT_EQ(WithCounterVerdict(plan, pair, Base(plan)).status(), v1::Finding::pass);
  AddDelta(pair.mutable_client_counters(), "hw_counters", "out_of_sequence", 500);  // 2.5 / GB
  v1::Finding finding = WithCounterVerdict(plan, pair, Base(plan));
  EXPECT_EQ(finding.severity(), v1::Finding::warning);
  EXPECT_THAT(finding.message(), HasSubstr("(200 GB moved): node1 mlx5_0 out_of_sequence +500 "
                                           "(2.5 per GB)."));
  AddDelta(pair.mutable_server_counters(), "hw_counters", "local_ack_timeout_err", 900);
  EXPECT_THAT(WithCounterVerdict(plan, pair, Base(plan)).remedy(),
              StartsWith("Check PFC on the RDMA priority for node1 mlx5_0 and node3 mlx5_0 and "
                         "their switch ports (drops force"));
}

TEST(CounterVerdictTest, LatencyCellsAreJudgedPerAtLeastOneGb) {
  const plan::Pairwise plan;
  const v1::Finding base = JudgePair(plan, Latency(1.8, 2.3));
  ASSERT_EQ(base.status(), v1::Finding::pass);
  v1::PairResult one = Cell("write_lat");
  AddDelta(one.mutable_client_counters(), "hw_counters", "local_ack_timeout_err", 1);
  EXPECT_TRUE(MessageDifferencer::Equals(WithCounterVerdict(plan, one, base), base));

  v1::PairResult three = Cell("write_lat");
  AddDelta(three.mutable_client_counters(), "hw_counters", "local_ack_timeout_err", 3);
  v1::Finding warned = WithCounterVerdict(plan, three, base);
  EXPECT_EQ(warned.id(), "pairwise.latency");
  EXPECT_EQ(warned.status(), v1::Finding::fail);
  EXPECT_EQ(warned.severity(), v1::Finding::warning);
  EXPECT_THAT(warned.message(),
              HasSubstr("Retransmissions over the plan's 1 per GB (under 1 GB moved, judged per "
                        "1 GB): node1 mlx5_0 local_ack_timeout_err +3 (3 per GB)."));

  v1::PairResult flap = Cell("write_lat");
  AddDelta(flap.mutable_server_counters(), "counters", "link_downed", 1);
  v1::Finding failed = WithCounterVerdict(plan, flap, base);
  EXPECT_EQ(failed.status(), v1::Finding::fail);
  EXPECT_EQ(failed.severity(), v1::Finding::error);
  EXPECT_EQ(failed.observed(), "typical 1.8 us, p99 2.3 us; node3 mlx5_0 link_downed +1");
}

TEST(CounterVerdictTest, CounterGoneBackwardsPassesWithTheNote) {
  v1::PortCounters before;
  v1::PortCounters after;
  for (auto [counters, value] :
       {std::pair{&before, uint64_t{10}}, std::pair{&after, uint64_t{2}}}) {
    v1::CounterValue* v = counters->add_values();
    v->set_source("counters");
    v->set_name("symbol_error");
    v->set_value(value);
  }
  v1::PairResult pair = Cell();
  for (auto& delta : counters::DiffCounters(before, after)) {
    *pair.add_server_counters() = delta;
  }
  ASSERT_EQ(pair.server_counters(0).delta(), 0u);
  const v1::Finding base = Base();
  v1::Finding finding = WithCounterVerdict({}, pair, base);
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_EQ(finding.observed(), base.observed());
  EXPECT_EQ(finding.expected(), base.expected());
  EXPECT_EQ(finding.remedy(), "");
  EXPECT_EQ(finding.message(),
            base.message() +
                " Counters not judged: node3 mlx5_0 symbol_error: went backwards from 10 to 2 "
                "(counter reset or wrap): no delta.");
  // A retry counter that wrapped (mlx5 q counters are 32-bit) is said too.
  v1::PairResult wrapped = Cell();
  v1::CounterDelta* d = wrapped.add_client_counters();
  d->set_source("hw_counters");
  d->set_name("out_of_sequence");
  d->set_before(4294967290);
  d->set_after(3);
  d->set_note("went backwards from 4294967290 to 3 (counter reset or wrap): no delta");
  EXPECT_EQ(WithCounterVerdict({}, wrapped, base).status(), v1::Finding::pass);
  EXPECT_THAT(WithCounterVerdict({}, wrapped, base).message(),
              HasSubstr("node1 mlx5_0 out_of_sequence: went backwards"));
}

TEST(CounterVerdictTest, AFailedAfterReadIsOneSentencePerEnd) {
  v1::PairResult pair = Cell();
  for (const char* name : {"link_downed", "symbol_error", "port_xmit_data"}) {
    v1::CounterDelta* d = pair.add_client_counters();
    d->set_source("counters");
    d->set_name(name);
    d->set_before(5);
    d->set_note("not read after the test: no delta");
  }
  v1::Finding finding = WithCounterVerdict({}, pair, Base());
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_THAT(finding.message(),
              HasSubstr("Counters not judged: node1 mlx5_0 link_downed, symbol_error: not read "
                        "after the test: no delta."));
}

TEST(CounterVerdictTest, CellsThatAlreadyFailKeepFailingWithBothRemedies) {
  v1::PairResult slow = Cell();
  AddDelta(slow.mutable_server_counters(), "hw_counters", "out_of_sequence", 5000);
  const v1::Finding base = JudgePair({}, Bandwidth(92.4));
  v1::Finding finding = WithCounterVerdict({}, slow, base);
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);  // retries never soften a failing cell
  EXPECT_THAT(finding.remedy(), StartsWith("Check PFC on the RDMA priority for node3 mlx5_0"));
  EXPECT_THAT(finding.remedy(), HasSubstr(base.remedy()));

  AddDelta(slow.mutable_client_counters(), "counters", "link_error_recovery", 1);
  v1::Finding both = WithCounterVerdict({}, slow, base);
  EXPECT_THAT(both.remedy(), StartsWith("Reseat or replace the cable/transceiver on node1 mlx5_0"));
  EXPECT_THAT(both.remedy(), HasSubstr(" Check PFC on the RDMA priority for node3 mlx5_0"));
}

TEST(CounterVerdictTest, LinkErrorsFailCellsThatCouldNotBeJudgedOtherwise) {
  v1::PairResult pair = Cell();
  AddDelta(pair.mutable_client_counters(), "counters", "link_downed", 1);
  const v1::Finding skipped = JudgePair({}, Bandwidth(195, 0));
  ASSERT_EQ(skipped.status(), v1::Finding::skipped);
  EXPECT_EQ(WithCounterVerdict({}, pair, skipped).status(), v1::Finding::fail);
  // Retries alone leave an unknown cell unknown (still blocking).
  PairMeasurement no_figures = Bandwidth(195);
  no_figures.result.clear_bandwidth();
  const v1::Finding unknown = JudgePair({}, no_figures);
  v1::PairResult retried = Cell();
  AddDelta(retried.mutable_client_counters(), "hw_counters", "out_of_sequence", 5000);
  v1::Finding finding = WithCounterVerdict({}, retried, unknown);
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
}

TEST(CounterVerdictTest, GarbageByteCountsDoNotOverflow) {
  v1::PairResult pair = Cell();
  pair.mutable_client_result()->mutable_bandwidth()->set_message_bytes(
      std::numeric_limits<uint64_t>::max());
  pair.mutable_client_result()->mutable_bandwidth()->set_iterations(
      std::numeric_limits<uint64_t>::max());
  AddDelta(pair.mutable_client_counters(), "hw_counters", "out_of_sequence",
           std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(WithCounterVerdict({}, pair, Base()).status(), v1::Finding::pass);
  v1::PairResult none = Cell();
  none.clear_client_result();
  none.clear_server_result();
  AddDelta(none.mutable_client_counters(), "hw_counters", "out_of_sequence", 2);
  EXPECT_THAT(WithCounterVerdict({}, none, Base()).message(),
              HasSubstr("under 1 GB moved, judged per 1 GB"));
}

}  // namespace
}  // namespace clustercert::controller::pairwise
