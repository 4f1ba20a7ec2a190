#include "controller/plan/plan_validator.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/host_port.h"
#include "controller/plan/closest_key.h"

namespace clustercert::controller::plan {
namespace {

std::string NodePath(size_t index) { return absl::StrCat("nodes[", index, "]"); }

// Shows at most this many node names in one message.
constexpr size_t kMaxNamesShown = 8;

// The position of the first of `paths` present in the file; the top of the
// file when none is (a default value).
SourceLocation LocationOf(const Plan& plan, std::initializer_list<std::string> paths) {
  for (const std::string& path : paths) {
    auto it = plan.locations.find(path);
    if (it != plan.locations.end()) return it->second;
  }
  return SourceLocation{1, 1};
}

std::string NodeLabel(const Plan& plan, size_t index) {
  const std::string& name = plan.nodes[index].name;
  return name.empty() ? NodePath(index) : name;
}

// "node local1 has" / "nodes local1, local2 have".
std::string NodesPhrase(const std::vector<std::string>& names, absl::string_view singular,
                        absl::string_view plural) {
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + std::min(names.size(), kMaxNamesShown));
  std::string list = absl::StrJoin(shown, ", ");
  if (names.size() > kMaxNamesShown) {
    absl::StrAppend(&list, " and ", names.size() - kMaxNamesShown, " more");
  }
  return names.size() == 1 ? absl::StrCat("node ", list, " ", singular)
                           : absl::StrCat("nodes ", list, " ", plural);
}

// The nodes whose gpus value may not be what the engineer meant: gpus
// itself was wrong, or an unknown key such as a misspelt "gpu:" left it at its
// default (both already reported). One pass over the errors, so the callers
// stay linear in the number of nodes.
std::vector<bool> NodesWithUncertainGpus(const Plan& plan, const PlanErrorList& errors) {
  std::vector<bool> uncertain(plan.nodes.size(), false);
  errors.AnyErrorPath([&uncertain](absl::string_view path) {
    if (!absl::ConsumePrefix(&path, "nodes[")) return false;
    const size_t close = path.find(']');
    size_t index = 0;
    if (close == absl::string_view::npos || !absl::SimpleAtoi(path.substr(0, close), &index) ||
        index >= uncertain.size()) {
      return false;
    }
    absl::string_view rest = path.substr(close + 1);
    if (rest.empty()) {
      uncertain[index] = true;
      return false;
    }
    for (absl::string_view known : {".name", ".agent", ".data_ip", ".rails"}) {
      if (absl::StartsWith(rest, known)) return false;
    }
    if (rest.front() == '.') uncertain[index] = true;
    return false;  // visit every error
  });
  return uncertain;
}

// Nodes whose gpus value is certain and below `gpus`.
std::vector<std::string> NodesWithFewerGpus(const Plan& plan, const PlanErrorList& errors,
                                            int gpus) {
  const std::vector<bool> uncertain = NodesWithUncertainGpus(plan, errors);
  std::vector<std::string> names;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (plan.nodes[i].gpus < gpus && !uncertain[i]) names.push_back(NodeLabel(plan, i));
  }
  return names;
}

std::vector<std::string> NodesWithoutGpus(const Plan& plan, const PlanErrorList& errors) {
  return NodesWithFewerGpus(plan, errors, 1);
}

// True when some node may be missing from plan.nodes or misnamed: the nodes
// list, an entry or a name was reported as wrong.
bool NodeNamesUncertain(const PlanErrorList& errors) {
  return errors.AnyErrorPath([](absl::string_view path) {
    if (path == "nodes") return true;
    if (!absl::StartsWith(path, "nodes[")) return false;
    const size_t dot = path.find('.');
    return dot == absl::string_view::npos || path.substr(dot) == ".name";
  });
}

// Linear in the number of nodes: a plan may hold 100,000 of them.
void CheckUniqueNodes(const Plan& plan, PlanErrorList* errors) {
  std::unordered_map<std::string, size_t> first_with_name;
  std::unordered_map<std::string, size_t> first_with_agent;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = plan.nodes[i];
    if (!node.name.empty()) {
      const auto [it, inserted] = first_with_name.try_emplace(node.name, i);
      if (!inserted) {
        const size_t j = it->second;
        const std::string path = NodePath(i) + ".name";
        errors->Add(
            LocationOf(plan, {path}), path,
            absl::StrCat(path, " is ", node.name, ", already the name of ", NodePath(j), " (line ",
                         plan.nodes[j].location.line, "); node names must be unique."));
      }
    }
    const absl::StatusOr<HostPort> agent = ParseHostPort(node.agent);
    if (node.agent.empty() || !agent.ok()) continue;
    const auto [it, inserted] = first_with_agent.try_emplace(agent->ToString(), i);
    if (!inserted) {
      const size_t j = it->second;
      const std::string path = NodePath(i) + ".agent";
      errors->Add(LocationOf(plan, {path}), path,
                  absl::StrCat(path, " is ", node.agent, ", already the agent of ",
                               NodeLabel(plan, j), " (line ", plan.nodes[j].location.line,
                               "); each node needs its own agent address."));
    }
  }
}

// True when the file's nodes[index] was not a map (already reported); the
// Plan holds a placeholder there.
bool EntryFailed(const PlanErrorList& errors, size_t index) {
  return errors.HasErrorExactlyAt(NodePath(index));
}

void CheckFabric(const Plan& plan, PlanErrorList* errors) {
  if (errors->HasErrorAt("fabric.type")) return;
  const std::string type = FabricTypeName(plan.fabric.type);
  if (plan.fabric.type != FabricType::kRoce && plan.locations.count("fabric.roce") != 0) {
    errors->Add(LocationOf(plan, {"fabric.roce"}), "fabric.roce",
                absl::StrCat("fabric.roce is set but fabric.type is ", type,
                             "; RoCE settings apply only to type roce (remove fabric.roce)."));
  }
  if (plan.fabric.type != FabricType::kInfiniband &&
      plan.locations.count("fabric.infiniband") != 0) {
    errors->Add(LocationOf(plan, {"fabric.infiniband"}), "fabric.infiniband",
                absl::StrCat("fabric.infiniband is set but fabric.type is ", type,
                             "; InfiniBand settings apply only to type infiniband (remove "
                             "fabric.infiniband)."));
  }
  if (plan.fabric.type == FabricType::kEthernet) return;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const std::string path = NodePath(i) + ".rails";
    if (!plan.nodes[i].rails.empty() || errors->HasErrorAt(path) || EntryFailed(*errors, i)) {
      continue;
    }
    errors->Add(
        LocationOf(plan, {path, NodePath(i)}), path,
        absl::StrCat(NodePath(i), " (", NodeLabel(plan, i), ") has no rails; fabric.type is ", type,
                     ", so each node must list the RDMA devices to test (e.g. "
                     "rails: [mlx5_0, mlx5_1])."));
  }
}

// nodes[].leaf: every node or none (a node left out would be scheduled as a
// leaf of its own, and its switch never tested as the others'), and pattern
// leaf needs them.
void CheckLeaves(const Plan& plan, PlanErrorList* errors) {
  std::vector<std::string> without_leaf;
  std::string with_leaf;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (EntryFailed(*errors, i) || errors->HasErrorAt(NodePath(i) + ".leaf")) continue;
    if (plan.nodes[i].leaf.empty()) {
      without_leaf.push_back(NodeLabel(plan, i));
    } else if (with_leaf.empty()) {
      with_leaf = NodeLabel(plan, i);
    }
  }
  if (!with_leaf.empty() && !without_leaf.empty()) {
    errors->Add(
        LocationOf(plan, {"nodes"}), "nodes",
        absl::StrCat(NodesPhrase(without_leaf, "has", "have"), " no leaf but node ", with_leaf,
                     " has one; give every node its leaf switch (or rail group), or "
                     "none."));
  }
  if (plan.pairwise.pattern == PairwisePattern::kLeaf && with_leaf.empty() &&
      !errors->HasErrorAt("pairwise.pattern")) {
    errors->Add(LocationOf(plan, {"pairwise.pattern", "pairwise"}), "pairwise.pattern",
                "pairwise.pattern is leaf but no node has a leaf; give each node its leaf "
                "switch or rail group (nodes[].leaf), or choose another pattern.");
  }
}

void CheckPairwise(const Plan& plan, PlanErrorList* errors) {
  const Pairwise& pairwise = plan.pairwise;
  if (!pairwise.enabled) return;
  if (pairwise.engine == PairwiseEngine::kVerbs && plan.fabric.type == FabricType::kEthernet &&
      !errors->HasErrorAt("fabric.type") && !errors->HasErrorAt("pairwise.engine")) {
    std::vector<std::string> without_rails;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
      if (plan.nodes[i].rails.empty() && !errors->HasErrorAt(NodePath(i) + ".rails") &&
          !EntryFailed(*errors, i)) {
        without_rails.push_back(NodeLabel(plan, i));
      }
    }
    if (!without_rails.empty()) {
      const bool set = plan.locations.count("pairwise.engine") != 0;
      errors->Add(LocationOf(plan, {"pairwise.engine", "pairwise"}), "pairwise.engine",
                  absl::StrCat("pairwise.engine is verbs", set ? "" : " (the default)", " but ",
                               NodesPhrase(without_rails, "has", "have"),
                               " no rails (fabric.type is ethernet); use engine: tcp, or list "
                               "each node's RDMA devices under rails."));
    }
  }
  if (plan.locations.count("pairwise.budget_minutes") != 0) {
    for (const char* key : {"pairwise.pattern", "pairwise.k"}) {
      if (plan.locations.count(key) == 0) continue;
      errors->Add(LocationOf(plan, {key}), key,
                  absl::StrCat(key,
                               " is set but so is pairwise.budget_minutes, which picks the "
                               "pattern itself; remove one of them (",
                               key,
                               " to let the budget choose, budget_minutes to keep your "
                               "pattern)."));
    }
  } else if (!errors->HasErrorAt("pairwise.pattern") && !errors->HasErrorAt("pairwise.k")) {
    const bool k_batch = pairwise.pattern == PairwisePattern::kKBatch;
    if (k_batch && plan.locations.count("pairwise.k") == 0) {
      errors->Add(LocationOf(plan, {"pairwise.pattern", "pairwise"}), "pairwise.k",
                  "pairwise.pattern is k-batch but pairwise.k is missing; k-batch needs k, how "
                  "many nodes after each node around the ring it is paired with (2 or more).");
    }
    if (!k_batch && plan.locations.count("pairwise.k") != 0) {
      errors->Add(LocationOf(plan, {"pairwise.k"}), "pairwise.k",
                  absl::StrCat("pairwise.k is ", pairwise.k, " but pairwise.pattern is ",
                               PairwisePatternName(pairwise.pattern),
                               "; k applies only to pattern k-batch (remove k or set pattern: "
                               "k-batch)."));
    }
  }
  CheckLeaves(plan, errors);
  if (errors->HasErrorAt("pairwise.memory")) return;
  for (size_t i = 0; i < pairwise.memory.size(); ++i) {
    if (pairwise.memory[i] != "cuda") continue;
    const std::vector<std::string> without_gpus = NodesWithoutGpus(plan, *errors);
    if (without_gpus.empty()) break;
    const std::string path = absl::StrCat("pairwise.memory[", i, "]");
    errors->Add(
        LocationOf(plan, {path, "pairwise.memory"}), path,
        absl::StrCat("pairwise.memory includes cuda but ", NodesPhrase(without_gpus, "has", "have"),
                     " gpus: 0; cuda tests need a GPU on every node (set the node's "
                     "gpus, or remove cuda)."));
  }
}

// Operations the launcher or gloo's transport cannot run.
void CheckOperations(const Plan& plan, PlanErrorList* errors) {
  const Collectives& collectives = plan.collectives;
  if (errors->HasErrorAt("collectives.operations")) return;
  const auto& operations = collectives.operations;
  const bool alltoall =
      std::find(operations.begin(), operations.end(), "alltoall") != operations.end();
  if (alltoall && collectives.backend == CollectiveBackend::kGloo &&
      collectives.transport == GlooTransport::kIbverbs) {
    errors->Add(LocationOf(plan, {"collectives.operations"}), "collectives.operations",
                "collectives.operations lists alltoall but gloo's ibverbs transport has no "
                "alltoall (it needs unbound buffers, which gloo's ibverbs transport lacks); use "
                "transport: tcp, backend: nccl, or leave alltoall out.");
  }
}

// launcher mpirun names each node to OpenMPI as its agent's host
// (--host <host>:<ranks>, each scope its own launch). An IPv6 literal does
// not survive that host:slots syntax, and a host starting with '-' would
// reach ssh as an option: both are refused here, at the node.
void CheckMpirunHosts(const Plan& plan, PlanErrorList* errors) {
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = plan.nodes[i];
    const std::string path = absl::StrCat("nodes[", i, "].agent");
    if (errors->HasErrorAt(path)) continue;
    absl::StatusOr<HostPort> agent = ParseHostPort(node.agent);
    if (!agent.ok()) continue;
    std::string why;
    if (agent->host.find(':') != std::string::npos) {
      why = "is an IPv6 address, which mpirun's --host <host>:<slots> cannot carry";
    } else if (agent->host.empty() || agent->host[0] == '-') {
      why = "starts with '-', which ssh would read as an option";
    }
    if (why.empty()) continue;
    errors->Add(LocationOf(plan, {path, absl::StrCat("nodes[", i, "]")}), path,
                absl::StrCat("collectives.launcher is mpirun, which starts ", node.name,
                             "'s ranks on its agent's host, but ", agent->host, " ", why,
                             "; give the node's agent as a host name or IPv4 address, or use "
                             "launcher: agents."));
  }
}

// Keys that belong to one backend or launcher only.
void CheckCollectiveModes(const Plan& plan, PlanErrorList* errors) {
  const Collectives& collectives = plan.collectives;
  if (!collectives.enabled) return;
  const bool nccl = collectives.backend == CollectiveBackend::kNccl;
  if (nccl && plan.locations.count("collectives.transport") != 0 &&
      !errors->HasErrorAt("collectives.transport")) {
    errors->Add(LocationOf(plan, {"collectives.transport"}), "collectives.transport",
                "collectives.transport picks gloo's transport, but the backend is nccl, which "
                "picks its own (steer it with env NCCL_IB_HCA / NCCL_SOCKET_IFNAME); remove "
                "transport or set backend: gloo.");
  }
  CheckOperations(plan, errors);
  if (collectives.launcher != CollectiveLauncher::kMpirun ||
      errors->HasErrorAt("collectives.launcher")) {
    return;
  }
  if (!nccl) {
    errors->Add(LocationOf(plan, {"collectives.launcher"}), "collectives.launcher",
                "collectives.launcher is mpirun, which runs nccl-tests' binaries, but the "
                "backend is gloo; use launcher: agents with gloo, or backend: nccl.");
  }
  CheckMpirunHosts(plan, errors);
}

void CheckCollectives(const Plan& plan, PlanErrorList* errors) {
  CheckCollectiveModes(plan, errors);
  const Collectives& collectives = plan.collectives;
  if (!collectives.enabled || collectives.backend != CollectiveBackend::kNccl ||
      errors->HasErrorAt("collectives.backend")) {
    return;
  }
  const bool set = plan.locations.count("collectives.backend") != 0;
  const std::vector<std::string> without_gpus = NodesWithoutGpus(plan, *errors);
  if (!without_gpus.empty()) {
    errors->Add(LocationOf(plan, {"collectives.backend", "collectives"}), "collectives.backend",
                absl::StrCat("collectives.backend is nccl", set ? "" : " (the default)", " but ",
                             NodesPhrase(without_gpus, "has", "have"),
                             " gpus: 0; NCCL needs a GPU per rank (use backend: gloo on "
                             "CPU-only nodes)."));
    return;
  }
  if (collectives.ranks_per_node == 0 || errors->HasErrorAt("collectives.ranks_per_node")) return;
  const std::vector<std::string> short_of_gpus =
      NodesWithFewerGpus(plan, *errors, collectives.ranks_per_node);
  if (short_of_gpus.empty()) return;
  errors->Add(LocationOf(plan, {"collectives.ranks_per_node"}), "collectives.ranks_per_node",
              absl::StrCat("collectives.ranks_per_node is ", collectives.ranks_per_node, " but ",
                           NodesPhrase(short_of_gpus, "has", "have"),
                           " fewer GPUs; NCCL runs one rank per GPU (lower ranks_per_node, or "
                           "0 for one rank per GPU)."));
}

// A workload states its read rate one way: a profile, a per-GPU rate or a
// cluster-wide rate.
void CheckUplinkWorkload(const Plan& plan, PlanErrorList* errors) {
  const UplinkWorkload& workload = plan.uplink.workload;
  std::vector<std::string> given;
  if (!workload.profile.empty()) given.push_back("profile");
  if (workload.ingest_gbytes_per_gpu > 0) given.push_back("ingest_gbytes_per_gpu");
  if (workload.cluster_ingest_gbps > 0) given.push_back("cluster_ingest_gbps");
  if (given.size() < 2) return;
  const std::string path = absl::StrCat("uplink.workload.", given[1]);
  errors->Add(LocationOf(plan, {path, "uplink.workload"}), path,
              absl::StrCat("uplink.workload gives both ", given[0], " and ", given[1],
                           "; state the read rate one way (a profile, a per-GPU rate or a "
                           "cluster-wide rate) so the sizing says which it used."));
}

void CheckUplink(const Plan& plan, PlanErrorList* errors) {
  if (!plan.uplink.enabled) return;
  CheckUplinkWorkload(plan, errors);
  if (NodeNamesUncertain(*errors)) return;
  std::vector<std::string> names;
  for (const Node& node : plan.nodes) {
    if (!node.name.empty()) names.push_back(node.name);
  }
  bool agent_targets = false;
  for (size_t i = 0; i < plan.uplink.targets.size(); ++i) {
    const UplinkTarget& target = plan.uplink.targets[i];
    if (target.type != "agent") continue;
    agent_targets = true;
    if (target.node.empty()) continue;
    const std::string path = absl::StrCat("uplink.targets[", i, "].node");
    auto node = std::find_if(plan.nodes.begin(), plan.nodes.end(),
                             [&](const Node& n) { return n.name == target.node; });
    if (node != plan.nodes.end()) {
      if (node->data_ip.empty()) {
        errors->Add(LocationOf(plan, {path}), path,
                    absl::StrCat(path, " is ", target.node,
                                 ", which has no data_ip; an agent target receives its flows "
                                 "on its data_ip (add data_ip to that node)."));
      }
      continue;
    }
    std::string message = absl::StrCat(path, " is ", target.node,
                                       ", which is not a node of this plan; an agent target "
                                       "names one of the plan's nodes, or gives agent and "
                                       "data_ip for a node-agent outside them");
    const std::string suggestion = ClosestKey(target.node, names);
    absl::StrAppend(&message,
                    suggestion.empty() ? "." : absl::StrCat(" (did you mean ", suggestion, "?)."));
    errors->Add(LocationOf(plan, {path}), path, std::move(message));
  }
  if (!agent_targets) return;
  // The flows to an agent sink are tcp peer tests: each node sends from its
  // data_ip.
  std::vector<std::string> without;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = plan.nodes[i];
    // A data_ip already reported as wrong is not reported again as missing.
    if (errors->HasErrorAt(absl::StrCat("nodes[", i, "].data_ip"))) continue;
    if (node.data_ip.empty() && !node.name.empty()) without.push_back(node.name);
  }
  if (without.empty()) return;
  errors->Add(
      LocationOf(plan, {"uplink.targets"}), "uplink.targets",
      absl::StrCat("uplink.targets has an agent target but ", NodesPhrase(without, "has", "have"),
                   " no data_ip; the flows to an agent sink leave from each node's "
                   "data_ip (add data_ip to every node, or use an http or tcp target)."));
}

}  // namespace

void ValidatePlan(const Plan& plan, PlanErrorList* errors) {
  CheckUniqueNodes(plan, errors);
  CheckFabric(plan, errors);
  CheckPairwise(plan, errors);
  CheckCollectives(plan, errors);
  CheckUplink(plan, errors);
}

}  // namespace clustercert::controller::plan
