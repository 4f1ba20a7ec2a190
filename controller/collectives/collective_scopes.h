#pragma once

#include <string>
#include <vector>

#include "controller/plan/plan.h"

namespace clustercert::controller {

// One allreduce sweep's share of the cluster: "1-node", "2-node" or
// "all-nodes", over plan nodes by index.
struct CollectiveScope {
  std::string name;
  std::vector<size_t> nodes;
  std::string operation = "all_reduce";  // what this scope's sweep times
};

// The scopes the plan asks for (`wanted`, in plan order), over the nodes that
// answered (`reachable`, plan indices in order). 1-node takes the first
// reachable node, 2-node the first two, all-nodes every reachable node; a
// scope that cannot be formed (2-node with one node) or that would repeat the
// one before it (all-nodes on a 2-node cluster) is left out and explained in
// `skipped` as "scope: reason".
struct ScopeChoice {
  std::vector<CollectiveScope> scopes;
  std::vector<std::string> skipped;
};
ScopeChoice ChooseScopes(const std::vector<std::string>& wanted,
                         const std::vector<size_t>& reachable, bool every_node = false);

// Every scope once per operation, scope by scope in plan order (1-node
// all_reduce, 1-node alltoall, 2-node all_reduce, ...).
std::vector<CollectiveScope> ScopesPerOperation(const std::vector<CollectiveScope>& scopes,
                                                const std::vector<std::string>& operations);

// Ranks started on `node`: the plan's ranks_per_node, else one per GPU for
// nccl and one for gloo.
int RanksOnNode(const plan::Collectives& collectives, const plan::Node& node);

}  // namespace clustercert::controller
