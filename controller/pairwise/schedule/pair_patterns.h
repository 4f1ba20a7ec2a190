#pragma once

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/pairwise/schedule/edge_colouring.h"

namespace clustercert::controller::pairwise::schedule {

// The node-level building blocks of the pairwise schedule: which unordered
// node pairs a pattern tests, grouped into rounds in which no node appears
// twice. Pairs are (lower, higher) node index and rounds are sorted; rails and
// directions are added on top by BuildSchedule (pair_schedule.h).

// All pairs by the circle method (a round-robin 1-factorisation): node 0
// stays put while 1..N-1 rotate, and for odd N a dummy node gives one node a
// bye per round. N−1 rounds of N/2 pairs for even N, N rounds of (N−1)/2
// pairs for odd N; both are the fewest possible. Needs nodes >= 2.
absl::StatusOr<std::vector<PairRound>> AllPairsRounds(int nodes);

// Each node with the next around the ring (i, i+1 mod N): N pairs for N >= 3,
// one pair for N = 2. Two rounds for even N, three for odd N (an odd cycle
// cannot be split into two matchings). Needs nodes >= 2.
absl::StatusOr<std::vector<PairRound>> RingRounds(int nodes);

// The k-batch pairs: each node with the nodes at offsets 1..k around the ring
// (i, i+d mod N for d = 1..k), deduplicated. That is a circulant graph in
// which every node has up to 2k partners, so the cluster costs O(k·N) tests
// instead of N(N−1)/2 — the scale path beyond ~64 nodes — while every node
// still meets 2k others and a fault shows up in several pairs that share it.
// When 2k+1 >= N every node meets every other: it is all-pairs.
// Needs nodes >= 2 and k >= 1.
absl::StatusOr<std::vector<std::pair<int, int>>> KBatchPairs(int nodes, int k);

// KBatchPairs in rounds: k = 1 is the ring; when 2k+1 >= N it is all-pairs
// (N−1 or N rounds, both <= 2k+1); otherwise a proper edge colouring of the
// 2k-regular circulant, in at most 2k+1 rounds (ColourEdges).
absl::StatusOr<std::vector<PairRound>> KBatchRounds(int nodes, int k);

// The leaf pattern, from each node's leaf (leaf_of[i], 0..M-1; every leaf
// in use): every pair inside a leaf (each node's path through its own leaf
// switch), and across the spine each node with one node of the next leaf
// and one of the previous (leaves taken as a ring in index order; member j
// of leaf a with member j of leaf a+1, the smaller leaf's members reused
// round-robin), so every node's path through the spine is tested too. One
// leaf is all-pairs. Deduplicated (lower, higher) pairs; needs two nodes.
absl::StatusOr<std::vector<std::pair<int, int>>> LeafPairs(const std::vector<int>& leaf_of);

// LeafPairs in rounds: a proper edge colouring, at most (largest degree + 1)
// rounds, where a node's degree is its leaf's size - 1 plus its spine
// partners.
absl::StatusOr<std::vector<PairRound>> LeafRounds(const std::vector<int>& leaf_of);

// The largest number of pairs any one node is in, for counting rounds
// without colouring (at most that + 1).
int LargestDegree(int nodes, const std::vector<std::pair<int, int>>& pairs);

}  // namespace clustercert::controller::pairwise::schedule
