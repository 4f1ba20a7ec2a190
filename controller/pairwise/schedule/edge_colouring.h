#pragma once

#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace clustercert::controller::pairwise::schedule {

// Node pairs that can be tested at the same time: no node appears twice.
using PairRound = std::vector<std::pair<int, int>>;

// Splits the edges of a simple graph on nodes 0..nodes-1 into rounds in which
// no node appears twice (a proper edge colouring), using at most Δ+1 rounds,
// where Δ is the largest number of edges at one node. Vizing's theorem says
// Δ+1 always suffices; the Misra–Gries construction used here finds such a
// colouring in polynomial time. Edges are first coloured greedily (the
// smallest round free at both ends); only an edge that finds no free round
// goes through Misra–Gries's fan rotation, so typical graphs cost O(E·Δ/64).
//
// Each returned pair is (lower, higher) node index, each round is sorted, and
// empty rounds are dropped. Self-loops, repeated edges and indices out of
// range are InvalidArgument.
absl::StatusOr<std::vector<PairRound>> ColourEdges(int nodes,
                                                   const std::vector<std::pair<int, int>>& edges);

}  // namespace clustercert::controller::pairwise::schedule
