#include "controller/pairwise/schedule/pair_patterns.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

absl::Status CheckNodes(int nodes) {
  if (nodes >= 2) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("pairwise needs at least two nodes; the plan has ", nodes,
                   ". Add nodes to the plan, or remove the pairwise section to skip the phase."));
}

absl::Status CheckK(int k) {
  if (k >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("pairwise.k is ", k,
                   " but k-batch needs k of 1 or more (each node is tested against the next k "
                   "nodes around the ring); set pairwise.k to 2 or more."));
}

// Members of each leaf in node order; an error for a leaf index out of range
// or a leaf with no member.
absl::StatusOr<std::vector<std::vector<int>>> LeafMembers(const std::vector<int>& leaf_of) {
  const int nodes = static_cast<int>(leaf_of.size());
  if (absl::Status status = CheckNodes(nodes); !status.ok()) return status;
  int leaves = 0;
  for (int leaf : leaf_of) leaves = std::max(leaves, leaf + 1);
  std::vector<std::vector<int>> members(leaves);
  for (int node = 0; node < nodes; ++node) {
    if (leaf_of[node] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("node #", node, " has leaf index ",
                                                     leaf_of[node], "; leaves count from 0."));
    }
    members[leaf_of[node]].push_back(node);
  }
  for (int leaf = 0; leaf < leaves; ++leaf) {
    if (members[leaf].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "leaf #", leaf, " has no node; number the leaves 0..", leaves - 1, " without gaps."));
    }
  }
  return members;
}

void AddPair(int a, int b, std::vector<std::pair<int, int>>* pairs) {
  if (a != b) pairs->emplace_back(std::min(a, b), std::max(a, b));
}

}  // namespace

absl::StatusOr<std::vector<PairRound>> AllPairsRounds(int nodes) {
  if (absl::Status status = CheckNodes(nodes); !status.ok()) return status;
  // For odd N the slot `nodes` is a dummy: whoever meets it sits the round out.
  const int slots = nodes % 2 == 0 ? nodes : nodes + 1;
  const int rotating = slots - 1;
  std::vector<PairRound> rounds;
  rounds.reserve(rotating);
  std::vector<int> order(slots);
  for (int r = 0; r < rotating; ++r) {
    order[0] = 0;
    for (int j = 1; j < slots; ++j) order[j] = 1 + (j - 1 + r) % rotating;
    PairRound round;
    round.reserve(slots / 2);
    for (int j = 0; j < slots / 2; ++j) {
      const int a = order[j];
      const int b = order[slots - 1 - j];
      if (a == nodes || b == nodes) continue;  // the bye
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
  }
  return rounds;
}

absl::StatusOr<std::vector<PairRound>> RingRounds(int nodes) {
  if (absl::Status status = CheckNodes(nodes); !status.ok()) return status;
  if (nodes == 2) return std::vector<PairRound>{{{0, 1}}};
  // Even N: the even edges, then the odd ones (the wrap edge N-1–0 is odd).
  // Odd N: the same, except the wrap edge would meet node 0 again in the
  // first round, so it gets a third round of its own.
  std::vector<PairRound> rounds(nodes % 2 == 0 ? 2 : 3);
  for (int i = 0; i + 1 < nodes; ++i) rounds[i % 2].emplace_back(i, i + 1);
  rounds[nodes % 2 == 0 ? 1 : 2].emplace_back(0, nodes - 1);
  for (PairRound& round : rounds) std::sort(round.begin(), round.end());
  return rounds;
}

absl::StatusOr<std::vector<std::pair<int, int>>> KBatchPairs(int nodes, int k) {
  if (absl::Status status = CheckNodes(nodes); !status.ok()) return status;
  if (absl::Status status = CheckK(k); !status.ok()) return status;
  // Offsets d and N−d name the same pairs, so offsets past N/2 add nothing.
  const int reach = std::min(k, nodes / 2);
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(static_cast<size_t>(nodes) * reach);
  for (int d = 1; d <= reach; ++d) {
    for (int i = 0; i < nodes; ++i) {
      const int j = (i + d) % nodes;
      pairs.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

absl::StatusOr<std::vector<std::pair<int, int>>> LeafPairs(const std::vector<int>& leaf_of) {
  auto members = LeafMembers(leaf_of);
  if (!members.ok()) return members.status();
  const int leaves = static_cast<int>(members->size());
  std::vector<std::pair<int, int>> pairs;
  for (const std::vector<int>& leaf : *members) {
    for (size_t i = 0; i < leaf.size(); ++i) {
      for (size_t j = i + 1; j < leaf.size(); ++j) AddPair(leaf[i], leaf[j], &pairs);
    }
  }
  // Two leaves are one neighbourship, not two: a ring of two is one link.
  const int spine_links = leaves == 2 ? 1 : (leaves > 2 ? leaves : 0);
  for (int a = 0; a < spine_links; ++a) {
    const std::vector<int>& from = (*members)[a];
    const std::vector<int>& to = (*members)[(a + 1) % leaves];
    const size_t span = std::max(from.size(), to.size());
    for (size_t j = 0; j < span; ++j) AddPair(from[j % from.size()], to[j % to.size()], &pairs);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

absl::StatusOr<std::vector<PairRound>> LeafRounds(const std::vector<int>& leaf_of) {
  auto pairs = LeafPairs(leaf_of);
  if (!pairs.ok()) return pairs.status();
  return ColourEdges(static_cast<int>(leaf_of.size()), *pairs);
}

int LargestDegree(int nodes, const std::vector<std::pair<int, int>>& pairs) {
  std::vector<int> degree(std::max(nodes, 0), 0);
  int largest = 0;
  for (const auto& [a, b] : pairs) {
    largest = std::max({largest, ++degree[a], ++degree[b]});
  }
  return largest;
}

absl::StatusOr<std::vector<PairRound>> KBatchRounds(int nodes, int k) {
  if (absl::Status status = CheckNodes(nodes); !status.ok()) return status;
  if (absl::Status status = CheckK(k); !status.ok()) return status;
  if (2 * static_cast<int64_t>(k) + 1 >= nodes) return AllPairsRounds(nodes);
  if (k == 1) return RingRounds(nodes);
  // Offset order: the greedy pass in ColourEdges then lays whole offsets into
  // shared rounds and Misra–Gries only mends the few edges left over.
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(static_cast<size_t>(nodes) * k);
  for (int d = 1; d <= k; ++d) {
    for (int i = 0; i < nodes; ++i) pairs.emplace_back(i, (i + d) % nodes);
  }
  return ColourEdges(nodes, pairs);
}

}  // namespace clustercert::controller::pairwise::schedule
