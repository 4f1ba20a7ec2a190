#include "controller/checks/inventory_evaluation.h"

#include "controller/checks/bgp_checks.h"
#include "controller/checks/cable_checks.h"
#include "controller/checks/cabling_checks.h"
#include "controller/checks/consistency_checks.h"
#include "controller/checks/node_checks.h"

namespace clustercert::controller::checks {

std::vector<v1::Finding> EvaluateInventoryChecks(const plan::Plan& plan,
                                                 const std::vector<NodeEvidence>& nodes) {
  std::vector<v1::Finding> checks;
  std::vector<NodeClockOffset> clocks;
  for (const NodeEvidence& evidence : nodes) {
    const plan::Node& node = *evidence.node;
    checks.push_back(ReachabilityFinding(node, evidence.reachable, evidence.error));
    if (!evidence.reachable) continue;
    if (evidence.inventory == nullptr) {
      checks.push_back(InventoryCollectedFinding(node, evidence.error));
      continue;
    }
    checks.push_back(InventoryCollectedFinding(node, ""));
    for (auto& finding : EvaluateNode(plan, node, *evidence.inventory)) {
      checks.push_back(std::move(finding));
    }
    if (evidence.clock) clocks.push_back(*evidence.clock);
  }
  for (auto& finding : EvaluateConsistency(plan, nodes)) checks.push_back(std::move(finding));
  for (auto& finding : EvaluateBgpRouterIds(plan, nodes)) checks.push_back(std::move(finding));
  for (auto& finding : EvaluateCables(plan, nodes)) checks.push_back(std::move(finding));
  for (auto& finding : EvaluateCabling(plan, nodes)) checks.push_back(std::move(finding));
  checks.push_back(ClockOffsetFinding(plan, clocks));
  return checks;
}

}  // namespace clustercert::controller::checks
