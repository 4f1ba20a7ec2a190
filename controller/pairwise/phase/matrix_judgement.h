#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/lossless_verdict.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Whether a pairwise test measures bandwidth ("*_bw") rather than latency.
bool IsBandwidthTest(const std::string& test);

// What the verdict of one cell judges: the receiver's bandwidth (the weaker
// direction with `bidirectional`), the client's latency, against the cell's
// line rate (PairResult.line_rate_gbps).
pairwise::PairMeasurement MeasurementOf(const v1::PairResult& pair, bool bidirectional);

// The verdict of one cell (pairwise.bandwidth / pairwise.latency) with its
// stable key and value, unit and threshold. From format 4 the port counters
// judge the cell too (pairwise::WithCounterVerdict): a link error counter
// that rose fails it, retransmissions beyond pairwise.max_retries_per_gb
// warn. `format` is the certificate format whose rules apply (verify
// recomputes an older certificate by its own); the run judges by the newest.
inline constexpr uint32_t kMatrixRulesFormat = 7;
// From format 6 the matrix's checks carry the lossless.* findings of each
// measured bandwidth cell (JudgeLosslessCells).
inline constexpr uint32_t kLosslessRulesFormat = 6;
// From format 7 the matrix's checks carry one mtu.path per main cell
// (checks::JudgePathMtu), from the path MTU both ends recorded.
inline constexpr uint32_t kPathMtuRulesFormat = 7;
v1::Finding JudgeCell(const plan::Plan& plan, const v1::PairResult& pair,
                      uint32_t format = kMatrixRulesFormat);

// A verdict that counts against its pair: failed with severity error. A
// warning-only cell (retransmissions) is reported but names no suspect and
// asks for no retest.
bool CellFails(const v1::Finding& verdict);

// "node1/mlx5_0->node2 write_bw host": what a cell's lossless.* finding keys
// name after "<id>@" (the shape of PairVerdictKey).
std::string LosslessLabel(const v1::PairResult& pair);

// The ends of a cell as the lossless verdict sees them: the client sends for
// write_bw and send_bw, the server for read_bw (the client reads the
// server's memory), both with pairwise.bidirectional; the server's device is
// its rail of the same index in the plan.
std::vector<pairwise::LosslessEnd> LosslessEnds(const plan::Plan& plan, const v1::PairResult& pair);

struct LosslessCells {
  std::vector<v1::Finding> findings;
  int judged = 0;  // cells whose priority could be judged
};

// The lossless.* findings of every main bandwidth cell that completed on the
// verbs engine (pairwise::JudgeLossless), on a lossless RoCE plan only; when
// there were bandwidth cells but none could be judged (soft-RoCE, the tcp
// engine, NICs without per-priority counters), one run-level skipped
// lossless.priority instead, with the first cell's reason. Incast rounds
// judge their own (incast_verdict.h).
LosslessCells JudgeLosslessCells(const plan::Plan& plan, const std::vector<v1::PairResult>& pairs);

struct MatrixJudgement {
  // each main cell's verdict, then the GPUDirect comparisons, then (format 6)
  // the lossless.* findings, then (format 7) each main cell's mtu.path
  std::vector<v1::Finding> checks;
  std::vector<v1::Suspect> suspects;  // where the failing pairs point
  int failing = 0;                    // main cells that failed
};

// Judges a whole matrix (retests included): sets every cell's verdict, then
// compares cuda with host memory per pair and localises the failing cells,
// each suspect with its inventory findings in triage order. The run and
// `controller verify` both call it, so a verdict can be recomputed from the
// recorded values.
MatrixJudgement JudgeMatrix(const plan::Plan& plan, std::vector<v1::PairResult>& pairs,
                            const std::vector<v1::Finding>& inventory_checks,
                            uint32_t format = kMatrixRulesFormat);

}  // namespace clustercert::controller
