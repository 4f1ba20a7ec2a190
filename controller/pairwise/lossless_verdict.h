#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace clustercert::controller::pairwise {

// The lossless chain of a RoCE fabric, proven by the port counters around
// one measured test (a pair cell or an incast round): the bytes travelled on
// the plan's PFC priority, pause frames rose on that priority only, and no
// drop counter rose. The counters are mlx5's per-priority ethtool statistics
// (rx/tx_prio<N>_bytes, rx/tx_prio<N>_pause) and the drop counters
// counters::IsDropCounter names; a port without per-priority statistics
// (soft-RoCE, a non-mlx5 NIC, the tcp engine) cannot show the priority, so
// its test is not judged. Plain functions of the recorded deltas and the
// plan, so `controller verify` recomputes them.

// lossless.priority passes when at least this share of the bytes an end
// sent (tx_prio<N>_bytes) or received (rx_prio<N>_bytes) travelled on
// fabric.roce.pfc_priority; the rest is other traffic on the port.
inline constexpr double kMinPlannedPriorityShare = 0.95;

// One end of a measured test: its counter deltas and which way the test's
// data crossed it (a bidirectional test both sends and receives).
struct LosslessEnd {
  std::string node;
  std::string device;  // the RDMA device (rail)
  const google::protobuf::RepeatedPtrField<v1::CounterDelta>* deltas = nullptr;
  bool sends = false;
  bool receives = false;
};

// Whether a plan's tests are judged lossless: a RoCE fabric with
// fabric.roce.lossless true.
bool LosslessJudged(const plan::Plan& plan);

struct LosslessJudgement {
  // Each keyed "<id>@<test_label>", error severity; node and device those of
  // the end the finding is about (the first failing end, else the first end).
  std::vector<v1::Finding> findings;
  // Whether the test's priority could be judged: every sending end showed
  // tx_prio<N>_bytes and every receiving end rx_prio<N>_bytes.
  bool judged = false;
  std::string not_judged_reason;  // "no per-priority byte counters on node1 rxe0", when not
};

// The findings of one test, `test_label` naming it in keys and messages
// ("node1/mlx5_0->node2 write_bw host"):
//   lossless.priority  of the bytes each sending end's tx_prio<N>_bytes (and
//                      each receiving end's rx_prio<N>_bytes) rose by, less
//                      than kMinPlannedPriorityShare on pfc_priority -> fail,
//                      naming where most bytes went; emitted only when judged
//   lossless.pause     rx/tx_prio<N>_pause for N != pfc_priority, or link-level
//                      rx/tx_pause_ctrl_phy, rose on either end -> fail
//   lossless.drops     a drop counter (counters::IsDropCounter) rose on either
//                      end -> fail
// The pause and drops checks pass only when the priority was judged (a port
// that records no per-priority counters shows no pause or drop either way);
// their failures are reported whatever the port. Nothing when the plan is
// not lossless RoCE (LosslessJudged).
LosslessJudgement JudgeLossless(const plan::Plan& plan, const std::string& test_label,
                                const std::vector<LosslessEnd>& ends);

// The one run-level finding for a lossless RoCE plan none of whose tests
// could be judged: lossless.priority, skipped, error severity, message
// "skipped: <reason>." (e.g. no per-priority byte counters on node1 rxe0),
// key "lossless.priority".
v1::Finding LosslessNotJudged(const std::string& reason);

}  // namespace clustercert::controller::pairwise
