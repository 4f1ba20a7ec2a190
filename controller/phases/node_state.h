#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "clustercert/v1/node_agent.pb.h"
#include "controller/client/agent_client.h"
#include "controller/client/node_health.h"
#include "controller/phases/clock_estimator.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The agent's clock against the controller's: the lowest-delay of several
// NTP-style exchanges (clock_estimator.h), or the GetVersion round trip alone
// (one exchange) for an agent that cannot exchange.
struct ClockSample {
  ClockEstimate estimate;
};

// Everything the phases learn about one plan node, in order.
struct NodeState {
  plan::Node node;
  std::unique_ptr<AgentClient> client;

  bool reachable = false;
  std::string error;  // why connect or inventory failed
  v1::GetVersionResponse version;
  std::optional<ClockSample> clock;

  std::optional<v1::Inventory> inventory;

  // Set while a run guards the node's calls (RunCertification): which nodes
  // stopped answering in the phase under way, e.g. so that a retest never
  // picks a silent partner.
  const NodeHealth* health = nullptr;

  bool Answering() const { return health == nullptr || !health->Stalled(node.name); }
};

}  // namespace clustercert::controller
