#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::pairwise {

// The verdicts of one incast round (pairwise.incast): k senders write to one
// receiver's rail at once, so the receiver's port is the congestion point.
// The aggregate shows whether the receiver reaches its line rate under
// incast, the fairness whether flow control shares it, and on a lossless
// RoCE fabric the counters whether PFC held the senders back on the planned
// priority without a drop (lossless_verdict.h). Plain functions of the
// recorded round and the plan, so `controller verify` recomputes them.

// Fills round.aggregate_gbps (the sum of the ok senders' gbps) and
// round.fairness (the slowest sender's Gb/s over the fastest's, over all
// senders, a failed sender counting 0; 0 when no sender ran or none moved
// anything).
void SummarizeIncast(v1::IncastResult& round);

// "incast->node2/mlx5_0 write_bw" ("incast->node2 tcp_bw" without a rail):
// what the round's finding keys name after "<id>@", stable across runs
// because a receiver and rail have one round.
std::string IncastLabel(const v1::IncastResult& round);

// The round's findings, each keyed "<id>@<IncastLabel>":
//   incast.bandwidth  aggregate_gbps >= plan.pairwise.incast.min_fraction_of_line_rate x
//                     round.line_rate_gbps passes; a round with an error or any failed sender
//                     fails; line rate 0 -> skipped with the reason
//   incast.fairness   fairness >= plan.pairwise.incast.min_fairness passes; a round that could
//                     not run (error, or no sender ran) -> unknown
//   lossless.*        JudgeLossless over the receiver's counters (it receives) and each
//                     sender's (it sends), on a lossless RoCE plan with a verbs round only
//   incast.dcqcn, incast.cnp_ignored  JudgeDcqcn (dcqcn_verdict.h): warnings, on a RoCE plan
//                     with ECN and a verbs round only
// Findings are error severity, node = the receiver, device = its rail; the
// messages name the receiver, the rail, the senders and the figures:
// "incast into node2 mlx5_0 from node1, node3, node4: 3 x ~30 Gb/s = 91.2 Gb/s of 100 Gb/s".
// The round is judged as recorded: call SummarizeIncast first.
std::vector<v1::Finding> JudgeIncast(const plan::Plan& plan, const v1::IncastResult& round);

}  // namespace clustercert::controller::pairwise
