#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The findings of one scope's sweep (docs/checks.md, collectives.*), each
// with the scope ("2-node") as its device and no node:
//   collectives.run          every rank ran the sweep to the end
//   collectives.correctness  no element held a wrong sum (#wrong = 0)
//   collectives.busbw        large-message busbw >= min_busbw_gbytes (between nodes)
//   collectives.transport    NCCL used NET/IB (GDRDMA where peermem is expected), never
//                            NET/Socket; gloo used the transport asked for
std::vector<v1::Finding> JudgeSweep(const plan::Plan& plan, const v1::CollectiveSweep& sweep,
                                    const std::string& expected_gloo_transport);

// Every collectives finding of a phase: JudgeSweep for each sweep (with the
// sweep's expected_transport), the busbw findings carrying value and
// threshold, then collectives.scaling when a 1-node or 2-node sweep ran. The
// run and `controller verify` both judge through it.
std::vector<v1::Finding> JudgeSweeps(const plan::Plan& plan,
                                     const std::vector<v1::CollectiveSweep>& sweeps);

// collectives.scaling: busbw must not fall by 3x or more from the 1-node
// to the 2-node sweep (RDMA not used between nodes). Skipped when either is
// missing or the 1-node sweep has one rank (no bus traffic to compare with).
// A warning for gloo over tcp (no RDMA is expected there), an error otherwise.
v1::Finding JudgeScaling(const plan::Plan& plan, const v1::CollectiveSweep* one_node,
                         const v1::CollectiveSweep* two_node);

inline constexpr double kCollapseFactor = 3.0;

}  // namespace clustercert::controller
