#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// Checks that need more than one node's inventory, or the controller's own
// view of a node: reachability and the clock offset between nodes.

// connect.reachable: the node's agent answered (error) — `error` says why not.
v1::Finding ReachabilityFinding(const plan::Node& node, bool reachable, const std::string& error);

// inventory.collected: a reachable agent returned its inventory.
v1::Finding InventoryCollectedFinding(const plan::Node& node, const std::string& error);

struct NodeClockOffset {
  std::string node;
  absl::Duration offset;       // agent clock - controller clock
  absl::Duration uncertainty;  // half the round trip of the sample
};

// clock.offset: the spread of the agents' clocks (max - min offset against
// the controller) stays within expect.clock_offset_ms. It fails only when the
// spread exceeds the limit by more than the measurement's uncertainty; it is
// skipped for a one-node plan and unknown when fewer than two nodes answered.
v1::Finding ClockOffsetFinding(const plan::Plan& plan, const std::vector<NodeClockOffset>& samples);

}  // namespace clustercert::controller::checks
