#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::pairwise::schedule {

// One point-to-point test: `client` drives traffic to `server` (node indices
// into plan.nodes) over rail `rail`. Rails pair by position — rail i of the
// client with rail i of the server — and a pair tests min(client rails,
// server rails) of them. rail == kDataPlane (-1) means no RDMA rail: the tcp
// engine over the nodes' data plane.
struct PairTest {
  int client = 0;
  int server = 0;
  int rail = 0;

  friend bool operator==(const PairTest&, const PairTest&) = default;
};

inline constexpr int kDataPlane = -1;

// Tests that run at the same time; no node is in two of them. `idle` lists
// the nodes with nothing to do in this round, ascending.
struct Round {
  std::vector<PairTest> tests;
  std::vector<int> idle;
};

// The pairwise phase's schedule for a plan: its pattern (and k for k-batch)
// over plan.nodes; the verbs engine tests each node's rails one at a time,
// the tcp engine uses the data plane (rail -1). Every ordered pair is a cell
// (directions = 2: each node sends and receives) unless the plan says
// pairwise.directions: one, or bidirectional: true (both ways at once in one
// cell, the lower-indexed node as client). Errors name the plan's nodes.
absl::StatusOr<std::vector<Round>> BuildSchedule(const plan::Plan& plan);

// The shape BuildSchedule gives a plan: each node's rail count (empty for
// the tcp engine; an error for a verbs node without rails) and the number
// of directions (2: every ordered pair a cell; 1: one direction, or
// bidirectional cells). A plan with pairwise.budget_minutes runs the
// pattern ChoosePattern picks (pattern_budget.h).
absl::StatusOr<std::vector<int>> RailsPerNode(const plan::Plan& plan);
// Each node's leaf as a number (leaves numbered by first appearance in
// plan.nodes); empty unless every node has one.
std::vector<int> LeafIndices(const plan::Plan& plan);
int DirectionsOf(const plan::Plan& plan);

// The same from plain numbers, for tests and callers without a plan.
//   nodes           node count, 2 or more.
//   pattern / k     the pairs (pair_patterns.h); k is read for k-batch only.
//   directions      1: each unordered pair once, lower index as client;
//                   2: then a second pass of the same rounds reversed.
//   rails_per_node  empty: every test is on the data plane (rail -1);
//                   otherwise one count (>= 1) per node.
// Every node-level round expands into rail sub-rounds — rail 0 for all its
// pairs, then rail 1, ... — because a node may be in one test at a time; a
// pair with fewer rails idles in the later sub-rounds. So all-pairs takes
// (N−1 or N) × directions × (largest rail count of a pair) rounds when the
// rail counts are equal.
//   leaf_of         pattern leaf only: each node's leaf number (LeafPairs).
absl::StatusOr<std::vector<Round>> BuildSchedule(int nodes, plan::PairwisePattern pattern, int k,
                                                 int directions,
                                                 const std::vector<int>& rails_per_node);
absl::StatusOr<std::vector<Round>> BuildSchedule(int nodes, plan::PairwisePattern pattern, int k,
                                                 int directions,
                                                 const std::vector<int>& rails_per_node,
                                                 const std::vector<int>& leaf_of);

// `rounds` with at most `per_round` tests in each (0: unchanged): a round
// with more runs as consecutive sub-rounds of `per_round` tests in its
// order; every node outside a sub-round's tests is idle in it.
// (pairwise.pairs_at_once: BuildSchedule(plan) applies it.)
std::vector<Round> LimitTestsPerRound(const std::vector<Round>& rounds, int per_round, int nodes);

// One line per round for progress output, e.g.
//   round 1/6: node1->node2 (mlx5_0), node3->node4 (mlx5_0); idle: —
// The client is written first (client->server); a rail shows as the device name, or
// "mlx5_0<->mlx5_2" when the two ends' names differ, and "data plane" for -1.
// Each line ends with '\n'. Without a plan, nodes are "#0", "#1", ... and
// rails "rail 0", "rail 1", ...
std::string DescribeSchedule(const plan::Plan& plan, const std::vector<Round>& rounds);
std::string DescribeSchedule(const std::vector<Round>& rounds);

}  // namespace clustercert::controller::pairwise::schedule
