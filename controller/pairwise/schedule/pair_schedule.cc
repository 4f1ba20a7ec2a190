#include "controller/pairwise/schedule/pair_schedule.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/pairwise/schedule/pair_patterns.h"
#include "controller/pairwise/schedule/pattern_budget.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

absl::StatusOr<std::vector<PairRound>> NodeRounds(int nodes, plan::PairwisePattern pattern, int k,
                                                  const std::vector<int>& leaf_of) {
  switch (pattern) {
    case plan::PairwisePattern::kLeaf:
      if (static_cast<int>(leaf_of.size()) != nodes) {
        return absl::InvalidArgumentError(
            absl::StrCat("pairwise.pattern is leaf but ", leaf_of.size(), " of the ", nodes,
                         " nodes have a leaf; give every node its leaf (nodes[].leaf)."));
      }
      return LeafRounds(leaf_of);
    case plan::PairwisePattern::kAllPairs:
      return AllPairsRounds(nodes);
    case plan::PairwisePattern::kRing:
      return RingRounds(nodes);
    case plan::PairwisePattern::kKBatch:
      return KBatchRounds(nodes, k);
  }
  return absl::InvalidArgumentError(absl::StrCat("pairwise.pattern ", static_cast<int>(pattern),
                                                 " is not all-pairs, ring, k-batch or leaf."));
}

absl::Status CheckRails(int nodes, const std::vector<int>& rails_per_node) {
  if (rails_per_node.empty()) return absl::OkStatus();
  if (static_cast<int>(rails_per_node.size()) != nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("rail counts are given for ", rails_per_node.size(), " nodes but there are ",
                     nodes, "; give one count per node, or none to test the data plane."));
  }
  for (int i = 0; i < nodes; ++i) {
    if (rails_per_node[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node #", i, " has ", rails_per_node[i],
          " rails to test; every node needs at least one, or give no rail counts to test the data "
          "plane."));
    }
  }
  return absl::OkStatus();
}

// Adds one round per rail of `pairs` (oriented by `reversed`) to `out`.
void ExpandRails(int nodes, const PairRound& pairs, bool reversed,
                 const std::vector<int>& rails_per_node, std::vector<Round>* out) {
  auto rails_of = [&](const std::pair<int, int>& pair) {
    if (rails_per_node.empty()) return 1;
    return std::min(rails_per_node[pair.first], rails_per_node[pair.second]);
  };
  int sub_rounds = 0;
  for (const auto& pair : pairs) sub_rounds = std::max(sub_rounds, rails_of(pair));
  for (int rail = 0; rail < sub_rounds; ++rail) {
    Round round;
    std::vector<bool> busy(nodes, false);
    for (const auto& pair : pairs) {
      if (rail >= rails_of(pair)) continue;
      const auto [client, server] =
          reversed ? std::pair(pair.second, pair.first) : std::pair(pair.first, pair.second);
      round.tests.push_back({client, server, rails_per_node.empty() ? kDataPlane : rail});
      busy[client] = busy[server] = true;
    }
    for (int node = 0; node < nodes; ++node) {
      if (!busy[node]) round.idle.push_back(node);
    }
    out->push_back(std::move(round));
  }
}

std::string Describe(const std::vector<Round>& rounds, const plan::Plan* plan) {
  auto node_name = [&](int node) {
    if (plan != nullptr && node >= 0 && node < static_cast<int>(plan->nodes.size())) {
      return plan->nodes[node].name;
    }
    return absl::StrCat("#", node);
  };
  auto rail_name = [&](int node, int rail) {
    if (plan != nullptr && node >= 0 && node < static_cast<int>(plan->nodes.size()) &&
        rail < static_cast<int>(plan->nodes[node].rails.size())) {
      return plan->nodes[node].rails[rail];
    }
    return absl::StrCat("rail ", rail);
  };
  std::string out;
  for (size_t r = 0; r < rounds.size(); ++r) {
    std::vector<std::string> tests;
    for (const PairTest& test : rounds[r].tests) {
      std::string rail = "data plane";
      if (test.rail != kDataPlane) {
        rail = rail_name(test.client, test.rail);
        const std::string server_rail = rail_name(test.server, test.rail);
        if (server_rail != rail) absl::StrAppend(&rail, "<->", server_rail);
      }
      tests.push_back(
          absl::StrCat(node_name(test.client), "->", node_name(test.server), " (", rail, ")"));
    }
    std::vector<std::string> idle;
    for (int node : rounds[r].idle) idle.push_back(node_name(node));
    absl::StrAppend(&out, "round ", r + 1, "/", rounds.size(), ": ",
                    tests.empty() ? "—" : absl::StrJoin(tests, ", "),
                    "; idle: ", idle.empty() ? "—" : absl::StrJoin(idle, ", "), "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Round>> BuildSchedule(int nodes, plan::PairwisePattern pattern, int k,
                                                 int directions,
                                                 const std::vector<int>& rails_per_node) {
  return BuildSchedule(nodes, pattern, k, directions, rails_per_node, {});
}

absl::StatusOr<std::vector<Round>> BuildSchedule(int nodes, plan::PairwisePattern pattern, int k,
                                                 int directions,
                                                 const std::vector<int>& rails_per_node,
                                                 const std::vector<int>& leaf_of) {
  if (directions != 1 && directions != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "directions is ", directions, "; use 1 (each pair once) or 2 (each pair both ways)."));
  }
  absl::StatusOr<std::vector<PairRound>> pairs = NodeRounds(nodes, pattern, k, leaf_of);
  if (!pairs.ok()) return pairs.status();
  if (absl::Status status = CheckRails(nodes, rails_per_node); !status.ok()) return status;
  std::vector<Round> rounds;
  for (int pass = 0; pass < directions; ++pass) {
    for (const PairRound& round : *pairs) {
      ExpandRails(nodes, round, /*reversed=*/pass == 1, rails_per_node, &rounds);
    }
  }
  return rounds;
}

std::vector<Round> LimitTestsPerRound(const std::vector<Round>& rounds, int per_round, int nodes) {
  if (per_round <= 0) return rounds;
  std::vector<Round> limited;
  for (const Round& round : rounds) {
    for (size_t first = 0; first == 0 || first < round.tests.size();
         first += static_cast<size_t>(per_round)) {
      Round part;
      const size_t end = std::min(round.tests.size(), first + static_cast<size_t>(per_round));
      part.tests.assign(round.tests.begin() + static_cast<std::ptrdiff_t>(first),
                        round.tests.begin() + static_cast<std::ptrdiff_t>(end));
      std::vector<bool> busy(static_cast<size_t>(nodes), false);
      for (const PairTest& test : part.tests) {
        busy[static_cast<size_t>(test.client)] = busy[static_cast<size_t>(test.server)] = true;
      }
      for (int node = 0; node < nodes; ++node) {
        if (!busy[static_cast<size_t>(node)]) part.idle.push_back(node);
      }
      limited.push_back(std::move(part));
    }
  }
  return limited;
}

absl::StatusOr<std::vector<int>> RailsPerNode(const plan::Plan& plan) {
  std::vector<int> rails_per_node;
  if (plan.pairwise.engine != plan::PairwiseEngine::kVerbs) return rails_per_node;
  for (const plan::Node& node : plan.nodes) {
    if (node.rails.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", node.name,
          " has no rails but pairwise.engine is verbs; list its RDMA devices under rails, or "
          "use engine: tcp to test the data plane."));
    }
    rails_per_node.push_back(static_cast<int>(node.rails.size()));
  }
  return rails_per_node;
}

std::vector<int> LeafIndices(const plan::Plan& plan) {
  std::vector<int> leaf_of;
  std::map<std::string, int> index;  // leaf name -> its number, first seen first
  for (const plan::Node& node : plan.nodes) {
    if (node.leaf.empty()) return {};
    leaf_of.push_back(index.try_emplace(node.leaf, static_cast<int>(index.size())).first->second);
  }
  return leaf_of;
}

int DirectionsOf(const plan::Plan& plan) {
  // Both directions as separate cells unless the plan asks for one, or for
  // bidirectional tests (both ways at once in one cell).
  return plan.pairwise.both_directions && !plan.pairwise.bidirectional ? 2 : 1;
}

absl::StatusOr<std::vector<Round>> BuildSchedule(const plan::Plan& plan) {
  auto rails_per_node = RailsPerNode(plan);
  if (!rails_per_node.ok()) return rails_per_node.status();
  plan::PairwisePattern pattern = plan.pairwise.pattern;
  int k = plan.pairwise.k;
  if (plan.pairwise.budget > absl::ZeroDuration()) {
    auto choice = ChoosePattern(plan);
    if (!choice.ok()) return choice.status();
    pattern = choice->pattern;
    k = choice->k;
  }
  const int nodes = static_cast<int>(plan.nodes.size());
  auto rounds =
      BuildSchedule(nodes, pattern, k, DirectionsOf(plan), *rails_per_node, LeafIndices(plan));
  if (!rounds.ok()) return rounds.status();
  return LimitTestsPerRound(*rounds, plan.pairwise.pairs_at_once, nodes);
}

std::string DescribeSchedule(const plan::Plan& plan, const std::vector<Round>& rounds) {
  return Describe(rounds, &plan);
}

std::string DescribeSchedule(const std::vector<Round>& rounds) { return Describe(rounds, nullptr); }

}  // namespace clustercert::controller::pairwise::schedule
