#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/pairwise/schedule/edge_colouring.h"
#include "controller/pairwise/schedule/pair_schedule.h"

namespace clustercert::controller::pairwise::schedule::testing {

// "" when no node appears twice in any round, else which round and node.
inline std::string NodeTwice(const std::vector<PairRound>& rounds) {
  for (size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> seen;
    for (const auto& [a, b] : rounds[r]) {
      for (int node : {a, b}) {
        if (!seen.insert(node).second) return absl::StrCat("round ", r, " node ", node);
      }
    }
  }
  return "";
}

inline std::string NodeTwice(const std::vector<Round>& rounds) {
  for (size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> seen;
    for (const PairTest& test : rounds[r].tests) {
      for (int node : {test.client, test.server}) {
        if (!seen.insert(node).second) return absl::StrCat("round ", r, " node ", node);
      }
    }
  }
  return "";
}

// How many times each unordered pair appears, over all rounds.
inline std::map<std::pair<int, int>, int> PairCounts(const std::vector<PairRound>& rounds) {
  std::map<std::pair<int, int>, int> counts;
  for (const PairRound& round : rounds) {
    for (const auto& [a, b] : round) ++counts[{std::min(a, b), std::max(a, b)}];
  }
  return counts;
}

// Every unordered pair of 0..nodes-1.
inline std::set<std::pair<int, int>> AllPairsOf(int nodes) {
  std::set<std::pair<int, int>> pairs;
  for (int a = 0; a < nodes; ++a) {
    for (int b = a + 1; b < nodes; ++b) pairs.insert({a, b});
  }
  return pairs;
}

// The pairs at offsets 1..k around a ring of `nodes`, deduplicated.
inline std::set<std::pair<int, int>> CirculantPairs(int nodes, int k) {
  std::set<std::pair<int, int>> pairs;
  for (int d = 1; d <= k; ++d) {
    for (int i = 0; i < nodes; ++i) {
      const int j = (i + d) % nodes;
      if (i != j) pairs.insert({std::min(i, j), std::max(i, j)});
    }
  }
  return pairs;
}

// True when every pair in `counts` appears exactly once and the set is `expected`.
inline bool EachOnce(const std::map<std::pair<int, int>, int>& counts,
                     const std::set<std::pair<int, int>>& expected) {
  if (counts.size() != expected.size()) return false;
  for (const auto& [pair, count] : counts) {
    if (count != 1 || expected.count(pair) == 0) return false;
  }
  return true;
}

}  // namespace clustercert::controller::pairwise::schedule::testing
