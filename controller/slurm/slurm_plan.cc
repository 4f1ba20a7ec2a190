#include "controller/slurm/slurm_plan.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/host_port.h"
#include "controller/plan/node_pattern.h"
#include "controller/plan/plan_parser.h"

namespace clustercert::controller::slurm {
namespace {

const plan::Node* PlanEntry(const plan::Plan& plan, const std::string& name) {
  for (const plan::Node& node : plan.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

absl::StatusOr<std::string> Expand(const std::string& key, const std::string& pattern,
                                   const plan::NodeFacts& facts) {
  absl::StatusOr<std::string> value = plan::ExpandNodePattern(pattern, facts);
  if (!value.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("slurm.", key, " \"", pattern,
                                                      "\" cannot be expanded for node ", facts.name,
                                                      ": ", value.status().message()));
  }
  return value;
}

// A top-level key starts its line with a character that is neither a space
// nor a comment's '#' ("nodes:", "slurm:", "---" does not occur in a plan).
bool StartsTopLevelKey(absl::string_view line) {
  return !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '\t' && line[0] != '\r';
}

std::string Quoted(const std::string& value) { return absl::StrCat("\"", value, "\""); }

}  // namespace

absl::StatusOr<plan::Node> PlanNodeFor(const plan::Plan& plan, const SlurmNode& node) {
  if (const plan::Node* entry = PlanEntry(plan, node.name)) return *entry;
  if (!plan.slurm.enabled) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Slurm lists node ", node.name,
        ", which the plan's nodes do not hold, and the plan has no slurm section to derive it "
        "from: add `slurm: {agent: \"{addr}:7070\"}` (docs/slurm.md) or a nodes entry for it"));
  }
  const plan::NodeFacts facts{node.name, node.addr, node.hostname, plan::TrailingNumber(node.name)};
  plan::Node out;
  out.name = node.name;
  absl::StatusOr<std::string> agent = Expand("agent", plan.slurm.agent, facts);
  if (!agent.ok()) return agent.status();
  if (absl::StatusOr<HostPort> endpoint = ParseHostPort(*agent); !endpoint.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "slurm.agent gives node ", node.name, " (NodeAddr ", node.addr, ") the agent ", *agent,
        ": ", endpoint.status().message(), "; for an IPv6 NodeAddr write \"[{addr}]:PORT\""));
  }
  out.agent = *agent;
  if (!plan.slurm.data_ip.empty()) {
    absl::StatusOr<std::string> data_ip = Expand("data_ip", plan.slurm.data_ip, facts);
    if (!data_ip.ok()) return data_ip.status();
    if (!IsIpAddress(*data_ip)) {
      return absl::FailedPreconditionError(
          absl::StrCat("slurm.data_ip gives node ", node.name, " the data address ", *data_ip,
                       ", which is not an IP address: fix the pattern or add a nodes entry"));
    }
    out.data_ip = *data_ip;
  }
  out.rails = plan.slurm.rails;
  out.gpus = plan.slurm.gpus;
  out.leaf = plan.slurm.leaf;
  return out;
}

std::string ReplaceNodesBlock(absl::string_view text, absl::string_view nodes_yaml) {
  std::string out;
  bool in_nodes = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (StartsTopLevelKey(line)) {
      in_nodes = absl::StartsWith(line, "nodes:") || absl::StartsWith(line, "nodes :");
    }
    if (in_nodes) continue;
    absl::StrAppend(&out, line, "\n");
  }
  while (absl::EndsWith(out, "\n\n")) out.pop_back();
  absl::StrAppend(&out, nodes_yaml);
  return out;
}

std::string NodesYaml(const std::vector<plan::Node>& nodes) {
  std::string yaml = "nodes:\n";
  for (const plan::Node& node : nodes) {
    std::vector<std::string> fields = {absl::StrCat("name: ", Quoted(node.name)),
                                       absl::StrCat("agent: ", Quoted(node.agent))};
    if (!node.data_ip.empty()) fields.push_back(absl::StrCat("data_ip: ", Quoted(node.data_ip)));
    if (!node.rails.empty()) {
      std::vector<std::string> rails;
      for (const std::string& rail : node.rails) rails.push_back(Quoted(rail));
      fields.push_back(absl::StrCat("rails: [", absl::StrJoin(rails, ", "), "]"));
    }
    fields.push_back(absl::StrCat("gpus: ", node.gpus));
    if (!node.leaf.empty()) fields.push_back(absl::StrCat("leaf: ", Quoted(node.leaf)));
    absl::StrAppend(&yaml, "  - {", absl::StrJoin(fields, ", "), "}\n");
  }
  return yaml;
}

absl::StatusOr<plan::Plan> PlanWithSlurmNodes(const plan::Plan& plan,
                                              const std::vector<SlurmNode>& nodes,
                                              absl::string_view origin) {
  std::vector<plan::Node> plan_nodes;
  plan_nodes.reserve(nodes.size());
  for (const SlurmNode& node : nodes) {
    absl::StatusOr<plan::Node> plan_node = PlanNodeFor(plan, node);
    if (!plan_node.ok()) return plan_node.status();
    plan_nodes.push_back(*std::move(plan_node));
  }
  // The comment keeps the run's origin in the certificate's embedded plan.
  const std::string generated =
      absl::StrCat("# nodes: from Slurm (", origin, "), replacing the file's nodes list\n",
                   NodesYaml(plan_nodes));
  absl::StatusOr<plan::Plan> resolved =
      plan::ParsePlan(ReplaceNodesBlock(plan.text, generated), plan.path);
  if (!resolved.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("with the nodes from Slurm (", origin,
                     ") the plan has errors; line numbers count the plan with its nodes list "
                     "replaced by Slurm's, at its end:\n",
                     resolved.status().message()));
  }
  return resolved;
}

}  // namespace clustercert::controller::slurm
