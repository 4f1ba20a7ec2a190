#include "controller/pairwise/pair_verdict.h"

#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::pairwise {
namespace {

using ::testing::HasSubstr;

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
  EXPECT_EQ(finding.status(), "fail");
  EXPECT_EQ(finding.severity(), "error");
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
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Bandwidth(160)).status(), "pass");
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Bandwidth(80, 100)).status(), "pass");
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Bandwidth(320, 400)).status(), "pass");
  plan::Pairwise azure;
  azure.min_fraction_of_line_rate = 0.9;
  EXPECT_EQ(JudgePair(azure, Bandwidth(180)).status(), "pass");
  EXPECT_EQ(JudgePair(azure, Bandwidth(179.9)).status(), "fail");
  EXPECT_THAT(JudgePair(azure, Bandwidth(179.9)).remedy(), HasSubstr("More than 10 % under"));
}

TEST(JudgePairTest, JustUnderEightyPercentFailsAndDoesNotReadAsEighty) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(159.98));
  EXPECT_EQ(finding.status(), "fail");
  EXPECT_THAT(finding.message(), HasSubstr("159.98 Gb/s, 79.9 % of 200 Gb/s"));
}

TEST(JudgePairTest, ZeroBytesMovedPointsAtPathMtu) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(0));
  EXPECT_EQ(finding.status(), "fail");
  EXPECT_THAT(finding.remedy(), HasSubstr("No data moved: a path MTU mismatch"));
}

TEST(JudgePairTest, NoLineRateIsSkipped) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Bandwidth(0.048726, 0));
  EXPECT_EQ(finding.status(), "skipped");
  EXPECT_EQ(finding.observed(), "0.048726 Gb/s");
  EXPECT_THAT(finding.message(), HasSubstr("no line rate to compare with"));
}

TEST(JudgePairTest, FailedMeasurementFailsWithItsError) {
  PairMeasurement m = Bandwidth(0);
  m.ok = false;
  m.error = "node3 mlx5_0: RTR failed: Connection timed out";
  v1::Finding finding = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(finding.id(), "pairwise.bandwidth");
  EXPECT_EQ(finding.status(), "fail");
  EXPECT_EQ(finding.observed(), "error: node3 mlx5_0: RTR failed: Connection timed out");
  EXPECT_THAT(finding.message(), HasSubstr("node1 mlx5_0 -> node3 mlx5_0 write_bw host: the "
                                           "bandwidth test failed: node3 mlx5_0: RTR failed"));

  m.test = "write_lat";
  m.error.clear();
  v1::Finding latency = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(latency.id(), "pairwise.latency");
  EXPECT_EQ(latency.status(), "fail");
  EXPECT_EQ(latency.observed(), "error: the test did not complete");
}

TEST(JudgePairTest, MissingFiguresAreUnknown) {
  PairMeasurement m = Bandwidth(100);
  m.result.clear_bandwidth();
  EXPECT_EQ(JudgePair(plan::Pairwise{}, m).status(), "unknown");
  PairMeasurement lat = Latency(1, 1);
  lat.result.clear_latency();
  EXPECT_EQ(JudgePair(plan::Pairwise{}, lat).status(), "unknown");
}

TEST(JudgePairTest, TcpPairHasNoRail) {
  PairMeasurement m = Bandwidth(9.1, 10);
  m.rail.clear();
  v1::Finding finding = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(finding.status(), "pass");
  EXPECT_EQ(finding.device(), "");
  EXPECT_EQ(finding.message(),
            "node1 -> node3 write_bw host: 9.1 Gb/s, 91 % of 10 Gb/s (plan "
            "floor 80 %).");
}

TEST(JudgePairTest, LatencyAtTheBoundPassesAndReportsP99) {
  v1::Finding finding = JudgePair(plan::Pairwise{}, Latency(5, 7.25));
  EXPECT_EQ(finding.id(), "pairwise.latency");
  EXPECT_EQ(finding.status(), "pass");
  EXPECT_EQ(finding.observed(), "typical 5 us, p99 7.25 us");
  EXPECT_EQ(finding.expected(), "typical <= 5 us");
  EXPECT_EQ(finding.message(),
            "node1 mlx5_0 -> node3 mlx5_0 write_lat host: typical 5 us (p99 7.25 us), plan max "
            "5 us.");
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Latency(1.8, 2.3)).status(), "pass");
}

TEST(JudgePairTest, LatencyOverTheBoundFails) {
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Latency(5.01, 5.2)).status(), "fail");
  // The rxe sample: t_typical 1011.28 us, 99 % 4211.33 us.
  v1::Finding rxe = JudgePair(plan::Pairwise{}, Latency(1011.28, 4211.33));
  EXPECT_EQ(rxe.status(), "fail");
  EXPECT_EQ(rxe.observed(), "typical 1011.3 us, p99 4211.3 us");
  EXPECT_THAT(rxe.remedy(), HasSubstr("check in this order MTU, PFC"));
  // A low median with a bad tail still passes: the bound is on the typical value.
  EXPECT_EQ(JudgePair(plan::Pairwise{}, Latency(1.9, 40)).status(), "pass");
}

TEST(JudgePairTest, NoLatencyBoundIsSkipped) {
  plan::Pairwise plan;
  plan.max_latency_us = 0;
  EXPECT_EQ(JudgePair(plan, Latency(3, 4)).status(), "skipped");
}

TEST(JudgePairTest, UnknownTestIsSkipped) {
  PairMeasurement m = Bandwidth(100);
  m.test = "atomic";
  v1::Finding finding = JudgePair(plan::Pairwise{}, m);
  EXPECT_EQ(finding.id(), "pairwise.test");
  EXPECT_EQ(finding.status(), "skipped");
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
  EXPECT_EQ(finding.status(), "pass");
  EXPECT_EQ(finding.node(), "node1");
  EXPECT_EQ(finding.device(), "mlx5_0");
  EXPECT_EQ(finding.expected(), "cuda >= 95 % of host bandwidth");
  EXPECT_THAT(finding.message(),
              HasSubstr("node1 mlx5_0 -> node3 mlx5_0 write_bw: cuda (cuda:0 via nvidia-peermem) "
                        "176.47 Gb/s is 98 % of host memory's 180 Gb/s"));
  EXPECT_EQ(GpuDirectAt(1 / 0.95).status(), "pass");  // exactly 95 %
  EXPECT_EQ(GpuDirectAt(0.9).status(), "pass");       // faster than host
}

TEST(JudgeGpuDirectTest, OneAndAHalfTimesSlowerIsAWarning) {
  v1::Finding finding = GpuDirectAt(1.5);
  EXPECT_EQ(finding.status(), "fail");
  EXPECT_EQ(finding.severity(), "warning");
  EXPECT_EQ(finding.observed(), "cuda 120 Gb/s, host 180 Gb/s (1.5x slower)");
  EXPECT_THAT(finding.remedy(), HasSubstr("nvidia-smi topo -m"));
}

TEST(JudgeGpuDirectTest, TwiceSlowerMeansGpuDirectIsNotInThePath) {
  for (double slowdown : {2.0, 5.0}) {
    v1::Finding finding = GpuDirectAt(slowdown);
    EXPECT_EQ(finding.status(), "fail") << slowdown;
    EXPECT_EQ(finding.severity(), "error") << slowdown;
    EXPECT_THAT(finding.message(), HasSubstr("the data goes through host memory"));
    EXPECT_THAT(finding.remedy(), HasSubstr("GPUDirect not in the path: check nvidia_peermem"));
    EXPECT_THAT(finding.remedy(), HasSubstr("GPU/NIC NUMA placement"));
  }
  EXPECT_EQ(GpuDirectAt(2.0).observed(), "cuda 90 Gb/s, host 180 Gb/s (2x slower)");
  EXPECT_EQ(GpuDirectAt(5.0).observed(), "cuda 36 Gb/s, host 180 Gb/s (5x slower)");
  EXPECT_EQ(GpuDirectAt(1.99).severity(), "warning");
}

TEST(JudgeGpuDirectTest, CudaTestThatFailsOrMovesNothingFails) {
  PairMeasurement host = Bandwidth(180);
  PairMeasurement cuda = Bandwidth(0, 200, "cuda");
  v1::Finding none = JudgeGpuDirect(host, cuda);
  EXPECT_EQ(none.status(), "fail");
  EXPECT_EQ(none.severity(), "error");
  EXPECT_EQ(none.observed(), "cuda 0 Gb/s, host 180 Gb/s (no cuda data moved)");

  cuda.ok = false;
  cuda.error = "ibv_reg_mr on cuda:0: Bad address";
  v1::Finding failed = JudgeGpuDirect(host, cuda);
  EXPECT_EQ(failed.status(), "fail");
  EXPECT_EQ(failed.severity(), "error");
  EXPECT_THAT(failed.message(), HasSubstr("the cuda-memory test failed (ibv_reg_mr on cuda:0: "
                                          "Bad address) while host memory ran at 180 Gb/s"));
  EXPECT_THAT(failed.remedy(), HasSubstr("nvidia_peermem"));
}

TEST(JudgeGpuDirectTest, NoHostBaselineIsUnknown) {
  PairMeasurement host = Bandwidth(0);
  EXPECT_EQ(JudgeGpuDirect(host, Bandwidth(100, 200, "cuda")).status(), "unknown");
  host.ok = false;
  host.error = "timed out";
  v1::Finding finding = JudgeGpuDirect(host, Bandwidth(100, 200, "cuda"));
  EXPECT_EQ(finding.status(), "unknown");
  EXPECT_EQ(finding.observed(), "unknown: the host-memory test failed: timed out");
}

TEST(JudgeGpuDirectTest, DifferentPairsAreNotCompared) {
  PairMeasurement host = Bandwidth(180);
  PairMeasurement cuda = Bandwidth(180, 200, "cuda");
  cuda.server = "node4";
  EXPECT_EQ(JudgeGpuDirect(host, cuda).status(), "unknown");
}

}  // namespace
}  // namespace clustercert::pairwise
