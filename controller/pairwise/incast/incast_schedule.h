#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::pairwise::incast {

// One incast round: every node of `senders` writes to `receiver` at once,
// each over its rail `rail` (rails pair by position, as in the pairwise
// schedule: rail i of a sender into rail i of the receiver); rail -1
// (schedule::kDataPlane) is the tcp engine's data plane. Node indices are
// into plan.nodes.
struct IncastRound {
  int receiver = 0;
  std::vector<int> senders;
  int rail = 0;

  friend bool operator==(const IncastRound&, const IncastRound&) = default;
};

// The rounds of pairwise.incast, pure arithmetic over the plan's node order:
// receivers are taken in node order, at most `max_receivers` of them; each
// receiver's k = min(`senders`, nodes - 1) senders are the nodes that follow
// it around the ring (receiver 3 of 5 with k = 3: 4, 0, 1), so each node
// sends in about k rounds and no two rounds of a small cluster pick the same
// group; one round per rail index the receiver and all its senders have
// (the smallest of their rail counts), rail 0 first. `rails_per_node` empty:
// the data plane, one round per receiver. Fewer than 2 nodes: no round.
std::vector<IncastRound> BuildIncastRounds(int nodes, int senders, int max_receivers,
                                           const std::vector<int>& rails_per_node);

// The same for a plan: its node count, pairwise.incast's senders and
// max_rounds, and each node's rail count for the verbs engine (the data
// plane for tcp). Errors as schedule::RailsPerNode (a verbs node without
// rails).
absl::StatusOr<std::vector<IncastRound>> BuildIncastRounds(const plan::Plan& plan);

// "node3, node4, node1 -> node2" for progress and messages; "#3" for a node
// index the plan does not have.
std::string DescribeIncastRound(const plan::Plan& plan, const IncastRound& round);

}  // namespace clustercert::controller::pairwise::incast
