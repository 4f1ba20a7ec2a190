#pragma once

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/plan/plan.h"

namespace clustercert::pairwise {

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

// Compares the cuda-memory bandwidth of a pair with its host-memory bandwidth
// (same client, server, rail and test): id "pairwise.gpudirect".
//   cuda >= 95 % of host          -> pass
//   host / cuda >= 2 (or cuda 0) -> fail, error: GPUDirect is not in the path
//   in between                    -> fail, warning
//   cuda test failed             -> fail, error
//   no usable host baseline, or the two are not the same pair -> unknown
v1::Finding JudgeGpuDirect(const PairMeasurement& host, const PairMeasurement& cuda);

}  // namespace clustercert::pairwise
