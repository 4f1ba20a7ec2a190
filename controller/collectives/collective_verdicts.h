#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/finding_builder.h"
#include "controller/collectives/sweep_merge.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The findings of one scope's sweep (docs/checks.md, collectives.*), each
// with the scope ("2-node") as its device and no node:
//   collectives.run          every rank ran the sweep to the end
//   collectives.correctness  no element held a wrong sum (#wrong = 0)
//   collectives.busbw        large-message busbw >= min_busbw_gbytes (between nodes)
//   collectives.transport    NCCL used NET/IB (GDRDMA where peermem is expected), never
//                            NET/Socket; gloo's ranks created the device the plan
//                            asks for (what each device said it was: gloo_devices.h)
//
// `format`: the certificate format whose rules apply (verify recomputes an
// older certificate by its own; legacy_collective_verdicts.h).
inline constexpr uint32_t kCollectiveRulesFormat = 4;
std::vector<v1::Finding> JudgeSweep(const plan::Plan& plan, const v1::CollectiveSweep& sweep,
                                    const std::string& expected_gloo_transport,
                                    uint32_t format = kCollectiveRulesFormat);

// The busbw floor of a sweep between nodes: the plan's min_busbw_gbytes when
// set, else min_fraction_of_fabric x what the slowest node's rails carry
// (rails x fabric.link_rate_gbps / 8 GB/s; a node without rails counts its
// data link). gbytes 0: no floor (no rate in the plan).
struct BusbwFloor {
  double gbytes = 0;
  double fabric_gbytes = 0;  // the rails' capacity; 0 when the plan has no rate
  std::string basis;         // "0.8 x 2 rail(s) x 200 Gb/s / 8" or "plan min_busbw_gbytes"
};
BusbwFloor SweepFloor(const plan::Plan& plan, const v1::CollectiveSweep& sweep);

// Every collectives finding of a phase: JudgeSweep for each sweep (with the
// sweep's expected_transport), the busbw findings carrying value and
// threshold, collectives.intra_node for the 1-node sweeps, then
// collectives.scaling when a 1-node or 2-node sweep ran. The run and
// `controller verify` both judge through it.
std::vector<v1::Finding> JudgeSweeps(const plan::Plan& plan,
                                     const std::vector<v1::CollectiveSweep>& sweeps,
                                     uint32_t format = kCollectiveRulesFormat);

// collectives.intra_node, one per 1-node sweep (one per node): the node's
// large-message busbw against min_fraction_of_median x the median of every
// node's 1-node figure, so the node whose NVLink/PCIe path is slow is named.
// Skipped for one rank per node or fewer than 3 figures; an error for nccl,
// a warning for gloo (host memory).
std::vector<v1::Finding> JudgeIntraNode(const plan::Plan& plan,
                                        const std::vector<const v1::CollectiveSweep*>& one_node);

// collectives.scaling: the 2-node busbw must not be 3x or more below what the
// rails can carry (the plan's min_busbw_gbytes when set, else the rails' line
// rate / 8): RDMA not used between nodes. The 1-node (intra-node, NVLink)
// figure is reported beside it, never compared: it is many times any fabric.
// Skipped without a 2-node sweep or a capacity. A warning for gloo over tcp
// (no RDMA is expected there), an error otherwise.
// One per operation; `operation` names it in the device ("1-node -> 2-node
// alltoall"), left out for all_reduce.
v1::Finding JudgeScaling(const plan::Plan& plan,
                         const std::vector<const v1::CollectiveSweep*>& one_node,
                         const v1::CollectiveSweep* two_node,
                         const std::string& operation = "all_reduce");

// collectives.scaling's builder, shared by every certificate format's rule:
// a warning for gloo over tcp between nodes (no RDMA is expected there), an
// error otherwise.
checks::FindingBuilder ScalingFindingBuilder(const plan::Plan& plan,
                                             const v1::CollectiveSweep* two_node,
                                             const std::string& operation = "all_reduce");
// What a collapsed 2-node busbw asks of the operator, by the same split.
std::string ScalingCollapseRemedy(const plan::Plan& plan, const v1::CollectiveSweep* two_node);

// How reports and diff name a sweep: its scope, for a 1-node sweep (one
// per node) the node too ("1-node node3"), and the operation after them
// unless it is all_reduce ("2-node alltoall", "1-node node3 all_gather").
std::string SweepName(const v1::CollectiveSweep& sweep);
// The findings' device of a sweep: its scope, and its operation unless
// all_reduce ("2-node alltoall").
std::string ScopeLabel(const v1::CollectiveSweep& sweep);
// Whether `finding` (a collectives.* check) judges `sweep`.
bool FindingOfSweep(const v1::Finding& finding, const v1::CollectiveSweep& sweep);

inline constexpr double kCollapseFactor = 3.0;

}  // namespace clustercert::controller
