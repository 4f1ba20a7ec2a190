#pragma once

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::pairwise {

// GPUDirect: cuda-memory bandwidth at or above this fraction of host-memory
// bandwidth on the same pair passes ("within a few %").
inline constexpr double kGpuDirectPassFraction = 0.95;
// ... and this many times slower (or worse) means the data goes through host
// memory: GPUDirect is not in the path. In between is a warning.
inline constexpr double kGpuDirectViaHostSlowdown = 2.0;

// Judges one pair measurement against the plan's pairwise thresholds.
//   *_bw  -> id "pairwise.bandwidth": avg_gbps >= min_fraction_of_line_rate x
//            line_rate_gbps passes; line rate 0 -> skipped.
//   *_lat -> id "pairwise.latency": typical_us <= max_latency_us passes (p99 is
//            reported alongside); max_latency_us <= 0 -> skipped.
//   other -> id "pairwise.test", skipped (not a test this judge knows).
// ok == false fails with the measurement's error. Findings are error severity,
// node = the client, device = the rail, port 0; the message starts with
// "client rail -> server rail test memory".
v1::Finding JudgePair(const plan::Pairwise& plan, const PairMeasurement& measurement);

// pairwise.max_retries_per_gb judges a cell that moved less than this as if
// it had moved this much, so a latency cell (a few KB of ping-pong) does not
// warn on its first retransmission.
inline constexpr double kMinJudgedGigabytes = 1.0;

// Folds the port counters recorded around a cell's test (pair.client_counters
// and pair.server_counters, counters::RoleOf says which are judged) into the
// cell's verdict from JudgePair; depends only on the PairResult and the plan,
// so `controller verify` recomputes it.
//   a link error counter rose on either end -> fail, error (even at line rate)
//   a retry counter rose more than plan.max_retries_per_gb per GB moved
//     (bytes from the PeerTestResult bandwidth figures, both directions when
//     bidirectional; at least kMinJudgedGigabytes) -> a passing cell becomes
//     fail, warning; other statuses keep theirs and gain the sentence
//   a receiving port's raw (pre-FEC) BER (pair.ber, format 8) above
//     plan.max_raw_ber -> fail, error, with the cable remedy (link_ber.h)
//   a judged counter with no delta and a note (went backwards, read on one
//     side only, saturated) -> named in the message, status unchanged
// Each trouble is appended to observed, expected, message and remedy, naming
// the node, the device, the counter and its change; a cell without any
// returns `verdict` unchanged.
v1::Finding WithCounterVerdict(const plan::Pairwise& plan, const v1::PairResult& pair,
                               v1::Finding verdict);

// Compares the cuda-memory bandwidth of a pair with its host-memory bandwidth
// (same client, server, rail and test): id "pairwise.gpudirect".
//   cuda >= 95 % of host          -> pass
//   host / cuda >= 2 (or cuda 0) -> fail, error: GPUDirect is not in the path
//   in between                    -> fail, warning
//   cuda test failed             -> fail, error
//   no usable host baseline, or the two are not the same pair -> unknown
v1::Finding JudgeGpuDirect(const PairMeasurement& host, const PairMeasurement& cuda);

}  // namespace clustercert::controller::pairwise
