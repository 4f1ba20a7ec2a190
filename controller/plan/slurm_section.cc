#include "controller/plan/slurm_section.h"

#include <optional>
#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "controller/plan/node_pattern.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kAgentRule =
    "a pattern giving the node-agent's host:port from Slurm's facts about the node: {addr} "
    "(NodeAddr), {hostname} (NodeHostName), {name} (NodeName) or {n} (the digits ending the "
    "name), e.g. \"{addr}:7070\" or \"{name}.mgmt.example:7070\"";
constexpr absl::string_view kDataIpRule =
    "a pattern giving the node's data-plane IP address, e.g. \"10.10.1.{n}\" for gpu017 -> "
    "10.10.1.17";
constexpr absl::string_view kRailRule =
    "an RDMA device name of letters, digits, '.', '_' and '-' (e.g. mlx5_0)";
constexpr absl::string_view kLeafRule =
    "a name of letters, digits, '.', '_' and '-': the leaf switch of every node from Slurm";

// A node such as Slurm might list, to try a pattern on.
NodeFacts SampleNode() { return NodeFacts{"gpu017", "10.0.1.17", "gpu017", "17"}; }

std::optional<std::string> ReadPattern(FieldReader& reader, const YamlField& field,
                                       absl::string_view rule, bool want_endpoint) {
  std::optional<std::string> pattern = reader.String(field, rule);
  if (!pattern.has_value()) return std::nullopt;
  absl::StatusOr<std::string> sample = ExpandNodePattern(*pattern, SampleNode());
  if (!sample.ok()) {
    reader.Reject(field, rule, Sentence(absl::StrCat(sample.status().message(), ".")));
    return std::nullopt;
  }
  if (want_endpoint) {
    if (absl::StatusOr<HostPort> endpoint = ParseHostPort(*sample); !endpoint.ok()) {
      reader.Reject(field, rule,
                    absl::StrCat("For node gpu017 at 10.0.1.17 it gives ", *sample, ": ",
                                 endpoint.status().message(), "."));
      return std::nullopt;
    }
  } else if (!IsIpAddress(*sample)) {
    reader.Reject(field, rule,
                  absl::StrCat("For node gpu017 at 10.0.1.17 it gives ", *sample,
                               ", which is not an IP address."));
    return std::nullopt;
  }
  return pattern;
}

void ParseNodeDefaults(MapReader& section, SlurmSettings* slurm) {
  std::optional<MapReader> defaults =
      section.Map("node_defaults", "a map with rails, gpus and leaf");
  if (!defaults.has_value()) return;
  FieldReader& reader = *defaults->reader();
  if (std::optional<YamlField> rails = defaults->Get("rails")) {
    if (auto items = reader.Items(*rails, "a list of RDMA device names (e.g. [mlx5_0, mlx5_1])")) {
      std::unordered_set<std::string> seen;
      for (const YamlField& item : *items) {
        std::optional<std::string> rail = reader.Name(item, kRailRule);
        if (!rail.has_value()) continue;
        if (!seen.insert(*rail).second) {
          reader.Report(item, absl::StrCat(item.path, " is ", *rail,
                                           ", already listed; each rail may appear once."));
          continue;
        }
        slurm->rails.push_back(*rail);
      }
    }
  }
  defaults->Int("gpus", 0, 64, "an integer from 0 to 64 (GPUs on each node from Slurm)",
                &slurm->gpus);
  if (std::optional<YamlField> leaf = defaults->Get("leaf")) {
    if (std::optional<std::string> value = reader.Name(*leaf, kLeafRule)) slurm->leaf = *value;
  }
  defaults->Finish();
}

}  // namespace

void ParseSlurmSection(MapReader& top, SlurmSettings* slurm) {
  std::optional<MapReader> section =
      top.Map("slurm", "a map with agent, data_ip, node_defaults and timeout_s");
  if (!section.has_value()) return;
  slurm->enabled = true;
  FieldReader& reader = *section->reader();
  if (std::optional<YamlField> agent = section->Require("agent", kAgentRule)) {
    if (auto pattern = ReadPattern(reader, *agent, kAgentRule, /*want_endpoint=*/true)) {
      slurm->agent = *pattern;
    }
  }
  if (std::optional<YamlField> data_ip = section->Get("data_ip")) {
    if (auto pattern = ReadPattern(reader, *data_ip, kDataIpRule, /*want_endpoint=*/false)) {
      slurm->data_ip = *pattern;
    }
  }
  ParseNodeDefaults(*section, slurm);
  section->Duration("timeout_s", NumberRange::PositiveAtMost(300),
                    "a positive number of seconds, at most 300 (the deadline of each scontrol "
                    "call, e.g. 10)",
                    absl::Seconds(1), &slurm->timeout);
  section->Finish();
}

}  // namespace clustercert::controller::plan
