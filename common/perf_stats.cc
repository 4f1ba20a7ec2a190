#include "common/perf_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"

namespace clustercert {
namespace {

// perftest --report_gbits: bytes per second / 125,000,000 = decimal Gb/s.
constexpr double kBytesPerSecondPerGbps = 125'000'000.0;

// print_report_lat drops this many of the largest samples before any statistic.
constexpr size_t kLatencyMeasureTail = 2;

}  // namespace

v1::BandwidthStats ComputeBandwidth(uint64_t message_bytes, uint64_t iterations,
                                    absl::Duration elapsed,
                                    std::optional<absl::Duration> smallest_gap) {
  v1::BandwidthStats stats;
  stats.set_message_bytes(message_bytes);
  stats.set_iterations(iterations);
  const double seconds = absl::ToDoubleSeconds(elapsed);
  stats.set_seconds(seconds > 0 ? seconds : 0);
  if (seconds > 0) {
    const double bytes = static_cast<double>(message_bytes) * static_cast<double>(iterations);
    stats.set_avg_gbps(bytes / seconds / kBytesPerSecondPerGbps);
    stats.set_msg_rate_mpps(static_cast<double>(iterations) / seconds / 1e6);
  }
  if (smallest_gap.has_value()) {
    const double gap_seconds = absl::ToDoubleSeconds(*smallest_gap);
    if (gap_seconds > 0) {
      stats.set_peak_gbps(static_cast<double>(message_bytes) / gap_seconds /
                          kBytesPerSecondPerGbps);
    }
  }
  return stats;
}

v1::LatencyStats ComputeLatency(std::vector<double> samples_us) {
  v1::LatencyStats stats;
  stats.set_samples(samples_us.size());
  if (samples_us.empty()) return stats;

  std::sort(samples_us.begin(), samples_us.end());
  const size_t n = samples_us.size();
  // m: the samples the statistics use. perftest always has more than the tail.
  const size_t m = n > kLatencyMeasureTail ? n - kLatencyMeasureTail : n;
  // perftest indexes up to sorted[m], one past the kept samples (it still lies
  // inside the array because the tail was dropped); clamp when nothing was.
  auto at = [&](size_t index) { return samples_us[std::min(index, n - 1)]; };

  stats.set_min_us(samples_us[0]);
  stats.set_max_us(at(m));
  // get_median(m): odd m -> the middle one; even m -> mean of the two middle ones.
  stats.set_typical_us(m % 2 == 1 ? samples_us[m / 2]
                                  : (samples_us[m / 2 - 1] + samples_us[m / 2]) / 2);

  double sum = 0;
  for (size_t i = 0; i < m; ++i) sum += samples_us[i];
  const double average = sum / static_cast<double>(m);
  stats.set_avg_us(average);

  double square_sum = 0;
  for (size_t i = 0; i < m; ++i) {
    const double deviation = average - samples_us[i];
    square_sum += deviation * deviation;
  }
  stats.set_stdev_us(std::sqrt(square_sum / static_cast<double>(m)));

  // The same double expressions as perftest, so the index agrees at the edges.
  const auto iters_99 = static_cast<size_t>(std::ceil(static_cast<double>(m) * 0.99));
  const auto iters_99_9 = static_cast<size_t>(std::ceil(static_cast<double>(m) * 0.999));
  stats.set_p99_us(at(iters_99));
  stats.set_p999_us(at(iters_99_9));
  return stats;
}

double OneWayFromRoundTrip(double rtt_us) { return rtt_us / 2; }

}  // namespace clustercert
