#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// The transceiver or cable in each rail port (Inventory.rail_ports, read
// when the plan asks for cabling), judged on what its own EEPROM says. A
// marginal optic passes a short bandwidth test and flaps a week later; its
// Rx power or bias drifting past the module's own warning threshold is the
// early sign. Per rail port, node = the node, device = the rail:
//   cable.present (warning): the port has a module (pass, naming its
//     identifier, media, vendor, part number and serial); none, with the
//     agent's Unknown "module" saying why (a veth or on-board port, an empty
//     cage) -> unknown with that reason; neither -> unknown, never pass. A
//     node whose agent sent no rail ports although the plan asks for
//     cabling is unknown for the node.
//   cable.dom (error): temperature, supply voltage and each lane's Tx bias,
//     Tx power and Rx power against the module's own thresholds: beyond an
//     alarm fails (error), beyond only a warning threshold fails as a
//     warning; the message names node, rail, lane, value, threshold and the
//     fix. Thresholds that all read 0 are taken as not set. A module with
//     monitors but no thresholds is unknown (warning); no module, or a
//     passive copper cable without monitors, is skipped.
//   cable.consistency (warning): across nodes, the part numbers of the
//     modules on one rail (the rail's position in the node's plan rails):
//     a node whose part differs from the most common one fails; all alike
//     pass; fewer than two known part numbers skip.
// With no rail ports from any node and a plan that asks for no cabling,
// each check is one skipped finding: "the plan did not ask for cabling".
std::vector<v1::Finding> EvaluateCables(const plan::Plan& plan,
                                        const std::vector<NodeEvidence>& nodes);

}  // namespace clustercert::controller::checks
