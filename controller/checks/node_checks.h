#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// Evaluates every inventory check of one plan node against that node's
// inventory and returns every finding, passes and skips included, in the
// seed's triage order: stack, rails and port state/rate/link layer, subnet
// manager, RoCE GID, MTU, BGP (routed fabrics), PFC/QoS, GPUDirect and GPU
// count, PCIe, topology, management plane, clock. Each check's ids and
// conditions are documented in its header (host_checks.h, port_checks.h,
// roce_checks.h, mtu_checks.h, bgp_checks.h, qos_checks.h, pcie_checks.h,
// topology_checks.h, management_checks.h, clock_checks.h). A fact the agent
// could not read makes its check unknown, never a pass.
std::vector<v1::Finding> EvaluateNode(const plan::Plan& plan, const plan::Node& node,
                                      const v1::Inventory& inventory);

// Whether a finding keeps the cluster from being certified: an error that
// failed or could not be evaluated (unknown).
bool BlocksCertification(const v1::Finding& finding);
// How many of `findings` block certification.
int CountBlocking(const std::vector<v1::Finding>& findings);

// One line for a terminal: "FAIL port.rate (error): <message> Remedy: <remedy>",
// "PASS port.rate: <message>", "SKIP pcie.nic: <message>".
std::string FindingSentence(const v1::Finding& finding);

}  // namespace clustercert::controller::checks
