#pragma once

// perftest's arithmetic, so our verbs and tcp engines report the numbers an
// operator would get from ib_write_bw / ib_write_lat on the same pair
// (linux-rdma/perftest, print_report_bw and print_report_lat in
// src/perftest_parameters.c). Only the arithmetic is shared: timing is the
// caller's, in absl::Duration or microseconds.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "clustercert/v1/peer.pb.h"

namespace clustercert {

// Bandwidth of `iterations` messages of `message_bytes` completed in `elapsed`,
// as `ib_*_bw --report_gbits` prints it:
//   avg_gbps      = bytes x iterations / seconds / 125,000,000 (decimal Gb/s)
//   msg_rate_mpps = iterations / seconds / 1e6
//   peak_gbps     = bytes / smallest_gap / 125,000,000, where smallest_gap is the
//                   least time per message over any run of consecutive
//                   completions (perftest's opt_delta). perftest prints 0 when
//                   it does not track the peak (duration mode, -N): pass
//                   std::nullopt for the same.
// A zero or negative elapsed time (or gap) gives 0 for the figures that divide
// by it; the inputs are still recorded.
v1::BandwidthStats ComputeBandwidth(uint64_t message_bytes, uint64_t iterations,
                                    absl::Duration elapsed,
                                    std::optional<absl::Duration> smallest_gap);

// Latency statistics over per-iteration samples in microseconds (already
// one-way where the test is send/write: see OneWayFromRoundTrip), computed the
// way print_report_lat does:
//   - samples are sorted and the two largest are dropped as the measurement
//     tail (LAT_MEASURE_TAIL); with m = n - 2 kept samples:
//   - min = sorted[0]; max = sorted[m] (so the printed max is the
//     second-largest sample; the largest is never shown);
//   - typical (median) = sorted[m/2] when m is odd, else the mean of
//     sorted[m/2 - 1] and sorted[m/2];
//   - avg and stdev (population, divided by m) over the m kept samples;
//   - p99 = sorted[ceil(m * 0.99)], p99.9 = sorted[ceil(m * 0.999)].
// One deliberate difference: perftest truncates each deviation to an integer
// before squaring it, which makes the stdev of sub-microsecond jitter 0; we
// keep the fraction.
// With fewer than 3 samples nothing is dropped (perftest never reports so few);
// an empty input gives all zeros. `samples` in the result is the input count.
v1::LatencyStats ComputeLatency(std::vector<double> samples_us);

// perftest's send/write latency tests time a ping-pong and report half the
// round trip; read and atomic latencies are the round trip itself.
double OneWayFromRoundTrip(double rtt_us);

}  // namespace clustercert
