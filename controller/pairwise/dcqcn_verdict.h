#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::pairwise {

// Whether DCQCN reacted to the congestion of one incast round, from the
// RoCE congestion counters mlx5 keeps per port in
// /sys/class/infiniband/<dev>/ports/<N>/hw_counters/ (kernel commit
// e1f24a79f424, "IB/mlx5: Support congestion related counters"):
//   np_ecn_marked_roce_packets  CE-marked RoCE packets the notification point (the receiver) got
//   np_cnp_sent                 CNPs it sent back in answer to them
//   rp_cnp_handled              CNPs the reaction point (a sender) handled: it slowed down
//   rp_cnp_ignored              CNPs the reaction point ignored: it did not
// In the seed's words DCQCN is the loop that ties PFC and ECN together: a
// switch queue marks ECN, the receiver returns a CNP, the sender slows
// down; PFC is the last resort when DCQCN cannot react in time. So pause
// frames during an incast round with no mark and no CNP mean PFC alone is
// throttling. Plain functions of the recorded round and the plan, so
// `controller verify` recomputes them; drops stay lossless.drops' (fail).

// The four counters above; an incast round records their deltas even when
// they did not move, so "zero" and "the port has no such counter" differ.
bool IsDcqcnCounter(const std::string& name);

// The round's DCQCN findings, warning severity, keyed "<id>@<IncastLabel>";
// none unless the plan is RoCE with fabric.roce.ecn and the round ran the
// verbs engine:
//   incast.dcqcn       pause frames (rx/tx_prio<N>_pause, rx/tx_pause_ctrl_phy) rose on an end
//                      while the receiver counted no ECN mark and sent no CNP and no sender
//                      handled one -> fail ("DCQCN is not engaged: PFC alone is throttling");
//                      marks arrived but the receiver sent no CNP -> fail (its notification
//                      point is off); marks or CNPs rose -> pass; neither pause nor mark rose ->
//                      skipped (the round did not congest the port); the round did not run ->
//                      unknown; an end without the counters (rxe, a non-mlx5 NIC, a certificate
//                      from before they were kept at zero) -> skipped naming it
//   incast.cnp_ignored rp_cnp_ignored rose on a sender -> fail (its reaction point got CNPs
//                      and did not slow down); every sender has the counter at 0 -> pass;
//                      a sender without it -> skipped naming it
std::vector<v1::Finding> JudgeDcqcn(const plan::Plan& plan, const v1::IncastResult& round);

}  // namespace clustercert::controller::pairwise
