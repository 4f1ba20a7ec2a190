#include "controller/pairwise/phase/retest_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/pairwise/phase/matrix_judgement.h"

namespace clustercert::controller {

std::vector<int> RetestPartners(const std::vector<NodeState>& nodes,
                                const std::vector<v1::PairResult>& pairs) {
  std::map<std::string, std::pair<int, int>> record;  // node -> (passed, judged)
  for (const auto& pair : pairs) {
    const auto status = pair.verdict().status();
    if (status == v1::Finding::skipped || status == v1::Finding::unknown) continue;
    for (const std::string& end : {pair.client(), pair.server()}) {
      record[end].second += 1;
      record[end].first += status == v1::Finding::pass ? 1 : 0;
    }
  }
  std::vector<int> partners;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = record.find(nodes[i].node.name);
    if (nodes[i].reachable && nodes[i].Answering() && it != record.end() &&
        2 * it->second.first > it->second.second) {
      partners.push_back(static_cast<int>(i));
    }
  }
  std::sort(partners.begin(), partners.end(), [&](int a, int b) {
    const auto& ra = record[nodes[a].node.name];
    const auto& rb = record[nodes[b].node.name];
    return ra.first * rb.second > rb.first * ra.second;  // best pass fraction first
  });
  return partners;
}

namespace {

// The retest of `node`, an end of `original`, if one can run: the end
// answers, it has the cell's rail, and a partner (not the cell's other end)
// has it too.
std::optional<PlannedRetest> PlanRetest(const std::vector<NodeState>& nodes, bool tcp,
                                        const std::vector<int>& partners, int node,
                                        const v1::PairResult& original) {
  if (!nodes[node].reachable || !nodes[node].Answering()) return std::nullopt;
  PlannedRetest retest;
  retest.node = node;
  if (!tcp) {
    const auto& rails = nodes[node].node.rails;
    for (size_t k = 0; k < rails.size(); ++k) {
      if (rails[k] == original.rail()) retest.rail = static_cast<int>(k);
    }
    if (retest.rail < 0) return std::nullopt;
  }
  for (int candidate : partners) {
    const std::string& name = nodes[candidate].node.name;
    if (name == original.client() || name == original.server()) continue;
    if (!tcp && static_cast<size_t>(retest.rail) >= nodes[candidate].node.rails.size()) continue;
    retest.partner = candidate;
    retest.item = {original.test(), original.memory(), ""};
    retest.retest_of = absl::StrCat(original.client(), "->", original.server());
    return retest;
  }
  return std::nullopt;
}

}  // namespace

std::vector<PlannedRetest> PlanRetests(const std::vector<NodeState>& nodes, bool tcp,
                                       const std::vector<v1::PairResult>& pairs) {
  const std::vector<int> partners = RetestPartners(nodes, pairs);
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i].node.name] = static_cast<int>(i);
  std::set<std::string> retested;  // end, rail, test, memory
  std::vector<PlannedRetest> planned;
  for (const v1::PairResult& original : pairs) {
    if (!CellFails(original.verdict())) continue;
    for (const std::string& end : {original.client(), original.server()}) {
      if (planned.size() >= kMaxRetests) return planned;
      const std::string key =
          absl::StrCat(end, "|", original.rail(), "|", original.test(), "|", original.memory());
      auto node = index_of.find(end);
      if (node == index_of.end() || retested.count(key)) continue;
      std::optional<PlannedRetest> retest =
          PlanRetest(nodes, tcp, partners, node->second, original);
      if (!retest.has_value()) continue;
      retested.insert(key);
      planned.push_back(std::move(*retest));
    }
  }
  return planned;
}

}  // namespace clustercert::controller
