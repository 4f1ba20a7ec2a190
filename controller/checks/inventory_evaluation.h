#pragma once

#include <optional>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/checks/cluster_checks.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// What the connect and inventory phases learnt about one plan node: all the
// inventory checks need. The run builds it from its live state and
// `controller verify` from the certificate, so both judge with the same code.
struct NodeEvidence {
  const plan::Node* node = nullptr;
  bool reachable = false;
  std::string error;                         // why connect or inventory failed
  const v1::Inventory* inventory = nullptr;  // null: not collected
  std::optional<NodeClockOffset> clock;
};

// Every inventory-phase check, in order: per node connect.reachable,
// inventory.collected and the node checks (EvaluateNode), then the
// cluster-wide clock.offset.
std::vector<v1::Finding> EvaluateInventoryChecks(const plan::Plan& plan,
                                                 const std::vector<NodeEvidence>& nodes);

}  // namespace clustercert::controller::checks
