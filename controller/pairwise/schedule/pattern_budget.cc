#include "controller/pairwise/schedule/pattern_budget.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "controller/pairwise/schedule/pair_patterns.h"
#include "controller/pairwise/schedule/pair_schedule.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

using plan::PairwisePattern;

std::string Minutes(absl::Duration d) {
  const double minutes = absl::ToDoubleMinutes(d);
  return minutes < 10 ? absl::StrCat(std::round(minutes * 10) / 10, " min")
                      : absl::StrCat(std::llround(minutes), " min");
}

// Rails a pair is tested on at most: the verbs engine tests each rail in
// its own sub-round, the tcp engine the data plane once.
int RailRounds(const plan::Plan& plan) {
  size_t rails = 1;
  if (plan.pairwise.engine == plan::PairwiseEngine::kVerbs) {
    for (const plan::Node& node : plan.nodes) rails = std::max(rails, node.rails.size());
  }
  return static_cast<int>(rails);
}

// Sub-rounds a round of at most N/2 pairs runs as under
// pairwise.pairs_at_once (1 without it).
int PairSplits(const plan::Plan& plan) {
  const int pairs = std::max<int>(1, static_cast<int>(plan.nodes.size()) / 2);
  const int per_round = plan.pairwise.pairs_at_once;
  return per_round <= 0 ? 1 : (pairs + per_round - 1) / per_round;
}

// Rounds of `pattern` (k for k-batch: at most) as BuildSchedule runs them,
// from pair_patterns.h's counts: all-pairs N-1 node rounds (N odd: N), the
// ring 2 (N odd: 3; N = 2: 1), a k-batch's colouring at most 2k+1; each
// times the rail sub-rounds, the directions and pairs_at_once's splits. Counted, not built:
// colouring a wide k-batch over 1,000+ nodes takes seconds.
absl::StatusOr<int> RoundsOf(const plan::Plan& plan, PairwisePattern pattern, int k) {
  const int n = static_cast<int>(plan.nodes.size());
  if (n < 2) return absl::InvalidArgumentError("pairwise tests need at least two nodes.");
  int node_rounds = 0;
  switch (pattern) {
    case PairwisePattern::kAllPairs:
      node_rounds = n % 2 == 0 ? n - 1 : n;
      break;
    case PairwisePattern::kRing:
      node_rounds = n == 2 ? 1 : (n % 2 == 0 ? 2 : 3);
      break;
    case PairwisePattern::kKBatch:
      node_rounds = 2 * k + 1;
      break;
    case PairwisePattern::kLeaf: {
      auto pairs = LeafPairs(LeafIndices(plan));
      if (!pairs.ok()) return pairs.status();
      node_rounds = LargestDegree(n, *pairs) + 1;
      break;
    }
  }
  return node_rounds * RailRounds(plan) * DirectionsOf(plan) * PairSplits(plan);
}

absl::StatusOr<PatternChoice> Candidate(const plan::Plan& plan, PairwisePattern pattern, int k) {
  auto rounds = RoundsOf(plan, pattern, k);
  if (!rounds.ok()) return rounds.status();
  PatternChoice choice;
  choice.pattern = pattern;
  choice.k = pattern == PairwisePattern::kKBatch ? k : 0;
  choice.rounds = *rounds;
  choice.estimate = RoundTime(plan) * *rounds;
  return choice;
}

int KBatchRoundsBound(const plan::Plan& plan, int k) {
  return (2 * k + 1) * RailRounds(plan) * DirectionsOf(plan) * PairSplits(plan);
}

// The largest k in [2, high] whose bound fits (rounds and estimate are the
// bound's); nullopt when k = 2 does not fit.
absl::StatusOr<std::optional<PatternChoice>> WidestKBatch(const plan::Plan& plan, int high) {
  const absl::Duration round = RoundTime(plan);
  if (round * KBatchRoundsBound(plan, 2) > plan.pairwise.budget) return std::nullopt;
  int low = 2;
  while (low < high) {
    const int k = low + (high - low + 1) / 2;
    if (round * KBatchRoundsBound(plan, k) <= plan.pairwise.budget) {
      low = k;
    } else {
      high = k - 1;
    }
  }
  PatternChoice choice;
  choice.pattern = PairwisePattern::kKBatch;
  choice.k = low;
  choice.rounds = KBatchRoundsBound(plan, low);
  choice.estimate = round * choice.rounds;
  return std::optional<PatternChoice>(choice);
}

std::string Summary(const plan::Plan& plan, const PatternChoice& choice) {
  const size_t n = plan.nodes.size();
  std::string pattern = "all-pairs";
  std::string coverage = "every pair of nodes";
  std::string rounds = absl::StrCat(choice.rounds);
  if (choice.pattern == PairwisePattern::kKBatch) {
    pattern = absl::StrCat("k-batch with k = ", choice.k);
    rounds = absl::StrCat("at most ", choice.rounds);
    coverage = absl::StrCat("each node with the ", 2 * choice.k, " nearest around the ring");
  } else if (choice.pattern == PairwisePattern::kLeaf) {
    std::vector<int> leaf_of = LeafIndices(plan);
    const int leaves = leaf_of.empty() ? 0 : *std::max_element(leaf_of.begin(), leaf_of.end()) + 1;
    pattern = "leaf";
    rounds = absl::StrCat("at most ", choice.rounds);
    coverage = absl::StrCat("every pair inside each of the ", leaves,
                            " leaves, and each node with a node of the next and the previous "
                            "leaf across the spine");
  } else if (choice.pattern == PairwisePattern::kRing) {
    pattern = "ring";
    coverage = "each node with its two ring neighbours";
  }
  return absl::StrCat("pairwise.budget_minutes ", Minutes(plan.pairwise.budget), " for ", n,
                      " nodes: ", pattern, ", ", rounds, " rounds, about ",
                      Minutes(choice.estimate), " (", coverage,
                      ", so every node's send and receive path is tested)");
}

}  // namespace

absl::Duration RoundTime(const plan::Plan& plan) {
  const plan::Pairwise& p = plan.pairwise;
  size_t rails = 1;
  int gpus = 0;
  for (const plan::Node& node : plan.nodes) {
    rails = std::max(rails, node.rails.size());
    gpus = std::max(gpus, node.gpus);
  }
  if (p.cuda_gpus > 0) gpus = std::min(gpus, p.cuda_gpus);
  int cells_per_test = 0;
  for (const std::string& memory : p.memory) {
    // cuda: each GPU with its nearest rail, so a rail's round holds its share.
    cells_per_test += memory == "cuda" ? std::max<int>(1, (gpus + rails - 1) / rails) : 1;
  }
  const int cells = cells_per_test * static_cast<int>(p.tests.size());
  return (p.duration + kCellOverhead) * cells;
}

absl::StatusOr<PatternChoice> ChoosePattern(const plan::Plan& plan) {
  const plan::Pairwise& p = plan.pairwise;
  if (p.budget <= absl::ZeroDuration()) return Candidate(plan, p.pattern, p.k);
  auto all_pairs = Candidate(plan, PairwisePattern::kAllPairs, 0);
  if (!all_pairs.ok()) return all_pairs.status();
  std::optional<PatternChoice> choice;
  if (all_pairs->estimate <= p.budget) choice = *all_pairs;
  // Then every leaf's pairs and the spine, when the plan gives the leaves.
  std::vector<int> leaf_of = LeafIndices(plan);
  if (!choice.has_value() && !leaf_of.empty() &&
      *std::max_element(leaf_of.begin(), leaf_of.end()) >= 1) {
    auto leaf = Candidate(plan, PairwisePattern::kLeaf, 0);
    if (!leaf.ok()) return leaf.status();
    if (leaf->estimate <= p.budget) choice = *leaf;
  }
  // k-batch with 2k+1 >= N is all-pairs already.
  const int widest_k = (static_cast<int>(plan.nodes.size()) - 2) / 2;
  if (!choice.has_value() && widest_k >= 2) {
    auto k_batch = WidestKBatch(plan, widest_k);
    if (!k_batch.ok()) return k_batch.status();
    choice = *k_batch;
  }
  if (!choice.has_value()) {
    auto ring = Candidate(plan, PairwisePattern::kRing, 0);
    if (!ring.ok()) return ring.status();
    if (ring->estimate > p.budget) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pairwise.budget_minutes is ", Minutes(p.budget), " but even the ring, the narrowest ",
          "pattern that still tests every node's send and receive path, needs about ",
          Minutes(ring->estimate), " (", ring->rounds, " rounds of ",
          absl::FormatDuration(RoundTime(plan)),
          "); raise the budget, shorten duration_s, or test fewer tests or memory kinds."));
    }
    choice = *ring;
  }
  choice->summary = Summary(plan, *choice);
  return *choice;
}

}  // namespace clustercert::controller::pairwise::schedule
