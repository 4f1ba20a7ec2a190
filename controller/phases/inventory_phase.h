#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/phases/node_state.h"
#include "controller/phases/progress.h"
#include "controller/phases/rerun_scope.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Phase 2: fetch every reachable node's inventory concurrently, then evaluate
// the plan's expectations. Returns every check evaluated, passes included:
// per node connect.reachable and inventory.collected, the node checks of
// checks::EvaluateNode, then the cluster-wide clock.offset.
// The evidence the inventory checks judge, from one node's live state.
checks::NodeEvidence EvidenceOf(const NodeState& state);

std::vector<v1::Finding> RunInventoryPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                           Progress& progress, const RerunScope* rerun = nullptr);

}  // namespace clustercert::controller
