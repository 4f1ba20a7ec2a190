#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "clustercert/v1/node_agent.pb.h"
#include "controller/client/agent_client.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The agent's clock against the controller's: offset = agent - controller,
// the true offset within +/- uncertainty. From the lowest-delay of several
// NTP-style exchanges (clock_estimator.h), or from the GetVersion round trip
// alone (exchanges 1) for an agent that cannot exchange.
struct ClockSample {
  absl::Duration offset;
  absl::Duration uncertainty;
  absl::Duration delay;
  int exchanges = 1;
  absl::Duration injected_offset;  // the agent's test-only clock offset flag
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
};

}  // namespace clustercert::controller
