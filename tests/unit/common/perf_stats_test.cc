#include "common/perf_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace clustercert {
namespace {

// samples/perftest-rxe-client.txt, ib_write_bw between two soft-RoCE VMs:
//  #bytes  #iterations  BW peak[Gb/sec]  BW average[Gb/sec]  MsgRate[Mpps]
//  65536   280          0.000000         0.048726            0.000093
// 65536 x 280 x 8 bits / 0.048726e9 b/s = 3.01278 s; any elapsed time in
// (3.012786, 3.012848] s prints 0.048726 with perftest's %f.
TEST(ComputeBandwidthTest, ReproducesTheRxeSample) {
  v1::BandwidthStats stats =
      ComputeBandwidth(65536, 280, absl::Microseconds(3012800), std::nullopt);
  EXPECT_EQ(stats.message_bytes(), 65536u);
  EXPECT_EQ(stats.iterations(), 280u);
  EXPECT_DOUBLE_EQ(stats.seconds(), 3.0128);
  EXPECT_EQ(absl::StrFormat("%f", stats.avg_gbps()), "0.048726");
  EXPECT_EQ(absl::StrFormat("%f", stats.msg_rate_mpps()), "0.000093");
  // Duration mode: perftest does not track the peak and prints 0.
  EXPECT_EQ(absl::StrFormat("%f", stats.peak_gbps()), "0.000000");
}

TEST(ComputeBandwidthTest, AverageIsDecimalGigabits) {
  // 8 MiB x 1000 in 0.4 s = 8,388,608,000 B / 0.4 s / 125,000,000 = 167.77216 Gb/s.
  v1::BandwidthStats stats = ComputeBandwidth(8388608, 1000, absl::Milliseconds(400), std::nullopt);
  EXPECT_NEAR(stats.avg_gbps(), 167.77216, 1e-9);
  EXPECT_NEAR(stats.msg_rate_mpps(), 0.0025, 1e-12);
  EXPECT_DOUBLE_EQ(stats.peak_gbps(), 0);
}

TEST(ComputeBandwidthTest, PeakComesFromTheSmallestGapPerMessage) {
  // 65536 B in 2.5 us per message at best: 65536 / 2.5e-6 / 125e6 = 209.7152 Gb/s.
  v1::BandwidthStats stats =
      ComputeBandwidth(65536, 5000, absl::Milliseconds(2000), absl::Nanoseconds(2500));
  EXPECT_NEAR(stats.peak_gbps(), 209.7152, 1e-9);
  EXPECT_NEAR(stats.avg_gbps(), 65536.0 * 5000 * 8 / 2.0 / 1e9, 1e-12);
  EXPECT_GE(stats.peak_gbps(), stats.avg_gbps());
}

TEST(ComputeBandwidthTest, ZeroInputsGiveZerosWithoutDividingByZero) {
  v1::BandwidthStats none = ComputeBandwidth(65536, 0, absl::Seconds(3), std::nullopt);
  EXPECT_EQ(none.avg_gbps(), 0);
  EXPECT_EQ(none.msg_rate_mpps(), 0);

  v1::BandwidthStats instant =
      ComputeBandwidth(65536, 280, absl::ZeroDuration(), absl::ZeroDuration());
  EXPECT_EQ(instant.seconds(), 0);
  EXPECT_EQ(instant.avg_gbps(), 0);
  EXPECT_EQ(instant.msg_rate_mpps(), 0);
  EXPECT_EQ(instant.peak_gbps(), 0);
  EXPECT_FALSE(std::isnan(instant.avg_gbps()));

  v1::BandwidthStats backwards =
      ComputeBandwidth(65536, 280, absl::Seconds(-1), absl::Nanoseconds(-5));
  EXPECT_EQ(backwards.seconds(), 0);
  EXPECT_EQ(backwards.avg_gbps(), 0);
  EXPECT_EQ(backwards.peak_gbps(), 0);

  v1::BandwidthStats empty_messages = ComputeBandwidth(0, 280, absl::Seconds(1), absl::Seconds(1));
  EXPECT_EQ(empty_messages.avg_gbps(), 0);
  EXPECT_DOUBLE_EQ(empty_messages.msg_rate_mpps(), 0.00028);
}

TEST(ComputeLatencyTest, EmptyGivesZeros) {
  v1::LatencyStats stats = ComputeLatency({});
  EXPECT_EQ(stats.samples(), 0u);
  EXPECT_EQ(stats.min_us(), 0);
  EXPECT_EQ(stats.max_us(), 0);
  EXPECT_EQ(stats.typical_us(), 0);
  EXPECT_EQ(stats.avg_us(), 0);
  EXPECT_EQ(stats.stdev_us(), 0);
  EXPECT_EQ(stats.p99_us(), 0);
  EXPECT_EQ(stats.p999_us(), 0);
}

TEST(ComputeLatencyTest, OneSampleIsEveryStatistic) {
  v1::LatencyStats stats = ComputeLatency({7.5});
  EXPECT_EQ(stats.samples(), 1u);
  EXPECT_EQ(stats.min_us(), 7.5);
  EXPECT_EQ(stats.max_us(), 7.5);
  EXPECT_EQ(stats.typical_us(), 7.5);
  EXPECT_EQ(stats.avg_us(), 7.5);
  EXPECT_EQ(stats.stdev_us(), 0);
  EXPECT_EQ(stats.p99_us(), 7.5);
  EXPECT_EQ(stats.p999_us(), 7.5);
}

TEST(ComputeLatencyTest, TwoSamplesAreNotTrimmed) {
  v1::LatencyStats stats = ComputeLatency({3, 1});
  EXPECT_EQ(stats.min_us(), 1);
  EXPECT_EQ(stats.max_us(), 3);
  EXPECT_EQ(stats.typical_us(), 2);
  EXPECT_EQ(stats.avg_us(), 2);
  EXPECT_DOUBLE_EQ(stats.stdev_us(), 1);
  EXPECT_EQ(stats.p99_us(), 3);
  EXPECT_EQ(stats.p999_us(), 3);
}

// Seven samples: the two largest (100, 200) are the tail, m = 5 kept.
TEST(ComputeLatencyTest, OddKeptCountTakesTheMiddleSample) {
  v1::LatencyStats stats = ComputeLatency({5, 1, 3, 2, 4, 100, 200});
  EXPECT_EQ(stats.samples(), 7u);
  EXPECT_EQ(stats.min_us(), 1);
  EXPECT_EQ(stats.max_us(), 100);  // sorted[m]: the second largest, as perftest prints
  EXPECT_EQ(stats.typical_us(), 3);
  EXPECT_DOUBLE_EQ(stats.avg_us(), 3);
  EXPECT_DOUBLE_EQ(stats.stdev_us(), std::sqrt(2.0));  // (4+1+0+1+4)/5
  EXPECT_EQ(stats.p99_us(), 100);                      // ceil(4.95) = 5
  EXPECT_EQ(stats.p999_us(), 100);                     // ceil(4.995) = 5
}

// Six samples: m = 4 kept {1, 2, 3, 4}; the median is the mean of the middle two.
TEST(ComputeLatencyTest, EvenKeptCountAveragesTheMiddlePair) {
  v1::LatencyStats stats = ComputeLatency({4, 60, 1, 3, 50, 2});
  EXPECT_EQ(stats.min_us(), 1);
  EXPECT_EQ(stats.max_us(), 50);
  EXPECT_DOUBLE_EQ(stats.typical_us(), 2.5);
  EXPECT_DOUBLE_EQ(stats.avg_us(), 2.5);
  EXPECT_DOUBLE_EQ(stats.stdev_us(), std::sqrt(1.25));  // (2.25+0.25+0.25+2.25)/4
  EXPECT_EQ(stats.p99_us(), 50);                        // ceil(3.96) = 4
  EXPECT_EQ(stats.p999_us(), 50);
}

// The rxe sample ran 200 iterations: 199 deltas, m = 197. Its 99.9 % column
// equals t_max because ceil(197 x 0.999) = 197 = m; 99 % is sorted[196].
TEST(ComputeLatencyTest, TwoHundredIterationsLikeTheRxeSample) {
  std::vector<double> samples;
  for (int i = 199; i >= 1; --i) samples.push_back(i);
  v1::LatencyStats stats = ComputeLatency(samples);
  EXPECT_EQ(stats.samples(), 199u);
  EXPECT_EQ(stats.min_us(), 1);
  EXPECT_EQ(stats.max_us(), 198);
  EXPECT_EQ(stats.typical_us(), 99);  // sorted[98]
  EXPECT_DOUBLE_EQ(stats.avg_us(), 99);
  EXPECT_EQ(stats.p99_us(), 197);
  EXPECT_EQ(stats.p999_us(), stats.max_us());
}

TEST(ComputeLatencyTest, ThousandSamplesHaveKnownPercentiles) {
  std::vector<double> samples;
  for (int i = 1; i <= 1000; ++i) samples.push_back(i);
  std::shuffle(samples.begin(), samples.end(), std::mt19937(42));
  v1::LatencyStats stats = ComputeLatency(samples);
  // m = 998 kept: 1..998.
  EXPECT_EQ(stats.samples(), 1000u);
  EXPECT_EQ(stats.min_us(), 1);
  EXPECT_EQ(stats.max_us(), 999);               // sorted[998]
  EXPECT_DOUBLE_EQ(stats.typical_us(), 499.5);  // (sorted[498] + sorted[499]) / 2
  EXPECT_DOUBLE_EQ(stats.avg_us(), 499.5);
  EXPECT_NEAR(stats.stdev_us(), std::sqrt((998.0 * 998.0 - 1) / 12), 1e-9);  // 288.0977
  EXPECT_EQ(stats.p99_us(), 990);   // sorted[ceil(988.02) = 989]
  EXPECT_EQ(stats.p999_us(), 999);  // sorted[ceil(997.002) = 998]
}

TEST(ComputeLatencyTest, KeepsSubMicrosecondJitterInTheStdev) {
  // perftest would print 0 here (it truncates each deviation to an integer).
  v1::LatencyStats stats = ComputeLatency({1.0, 1.2, 1.4, 1.6, 9, 9});
  EXPECT_NEAR(stats.typical_us(), 1.3, 1e-12);
  EXPECT_NEAR(stats.stdev_us(), std::sqrt(0.05), 1e-12);
}

TEST(OneWayFromRoundTripTest, HalvesTheRoundTrip) {
  // The rxe sample's t_typical 1011.28 us is half of a 2022.56 us round trip.
  EXPECT_DOUBLE_EQ(OneWayFromRoundTrip(2022.56), 1011.28);
  EXPECT_EQ(OneWayFromRoundTrip(0), 0);
}

}  // namespace
}  // namespace clustercert
