#include "controller/collectives/collective_scopes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace clustercert::controller {

ScopeChoice ChooseScopes(const std::vector<std::string>& wanted,
                         const std::vector<size_t>& reachable, bool every_node) {
  ScopeChoice choice;
  auto want = [&](const char* name) {
    return std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  };
  const size_t count = reachable.size();
  if (want("1-node")) {
    if (count >= 1) {
      for (size_t i = 0; i < (every_node ? count : 1); ++i) {
        choice.scopes.push_back({"1-node", {reachable[i]}});
      }
    } else {
      choice.skipped.push_back("1-node: no node answered");
    }
  }
  if (want("2-node")) {
    if (count >= 2) {
      choice.scopes.push_back({"2-node", {reachable[0], reachable[1]}});
    } else {
      choice.skipped.push_back(
          absl::StrCat("2-node: ", count, " node(s) answered, the scope needs 2"));
    }
  }
  if (want("all-nodes")) {
    auto same =
        std::find_if(choice.scopes.begin(), choice.scopes.end(),
                     [&](const CollectiveScope& scope) { return scope.nodes == reachable; });
    if (count == 0) {
      choice.skipped.push_back("all-nodes: no node answered");
    } else if (same != choice.scopes.end()) {
      choice.skipped.push_back(absl::StrCat("all-nodes: the ", count,
                                            " node(s) that answered are the ", same->name,
                                            " scope already"));
    } else {
      choice.scopes.push_back({"all-nodes", reachable});
    }
  }
  return choice;
}

int RanksOnNode(const plan::Collectives& collectives, const plan::Node& node) {
  if (collectives.ranks_per_node > 0) return collectives.ranks_per_node;
  if (collectives.backend == plan::CollectiveBackend::kNccl) return node.gpus;
  return 1;
}

std::vector<CollectiveScope> ScopesPerOperation(const std::vector<CollectiveScope>& scopes,
                                                const std::vector<std::string>& operations) {
  std::vector<CollectiveScope> expanded;
  for (const CollectiveScope& scope : scopes) {
    for (const std::string& operation : operations) {
      expanded.push_back(scope);
      expanded.back().operation = operation;
    }
  }
  return expanded;
}

}  // namespace clustercert::controller
