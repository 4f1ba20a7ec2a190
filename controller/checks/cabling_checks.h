#pragma once

#include <vector>

#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// Where each rail port's cable lands (Inventory.rail_ports, read by the
// agents over LLDP or from the subnet manager's view), judged across the
// cluster: crossed cables on a rail-optimised fabric pass every pairwise
// test and then cost NCCL's rings their rail alignment at scale. A rail is
// judged on its first reported port; on fabric.type ethernet the rail is the
// netdev holding data_ip. A neighbour the agent could not read (its Unknown
// "neighbor"), or no rail port at all from an agent that was asked, is
// unknown with the reason, never a pass. Nodes without an inventory are left
// to inventory.collected.
//
//   cabling.neighbor (error), per port the cable plan (Plan::cables) names:
//     the port's LLDP neighbour is the plan's switch and port. Two ports each
//     in the other's planned place are one fail (on the first in plan order)
//     that names the swap to make. Skipped, once, without a cable plan.
//   cabling.rail_alignment (error on fabric.topology rail-optimized, else
//     warning), per port, when the plan asks for cabling but gives no cable
//     plan: no other port lands on the same switch port; rail i of every
//     node of a leaf group (nodes[].leaf; no leaves: one group) lands on the
//     switch most of the group's rail i lands on (every node fails when no
//     switch has a strict majority); and, on a fabric not rail-optimized
//     whose leaf names are switch names, every port lands on its node's
//     leaf. Skipped, once, when the plan does not ask for cabling or has a
//     cable plan.
//
// Switch names compare ignoring case (LLDP system names are host names), and
// a plan name without a dot also matches an announced FQDN's first label
// ("leaf1" is "leaf1.pod2.example.com"); port names compare ignoring case.
std::vector<v1::Finding> EvaluateCabling(const plan::Plan& plan,
                                         const std::vector<NodeEvidence>& nodes);

// Whether the switch the plan names is the one LLDP announced, by the rule
// above.
bool SwitchNameMatches(absl::string_view planned, absl::string_view announced);

}  // namespace clustercert::controller::checks
