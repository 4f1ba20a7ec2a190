#include "controller/slurm/slurm_client.h"

#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace clustercert::controller::slurm {
namespace {

constexpr char kScontrol[] = "scontrol";
// Names per `scontrol show node` call: its output stays far below the
// runner's 1 MiB capture (a node's line is about 900 bytes).
constexpr size_t kNodesPerCall = 128;
constexpr size_t kMaxOutputBytes = (1 << 20) - 1;

std::string Shown(absl::string_view text) {
  return std::string(absl::StripAsciiWhitespace(text.substr(0, 300)));
}

absl::Status InvalidNodeName(const std::string& node) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", node.substr(0, kMaxNameLength),
      "' is not a Slurm node name (letters, digits, '.', '_' and '-'); nothing was sent to Slurm"));
}

}  // namespace

SlurmClient::SlurmClient(process::CommandRunner& runner, absl::Duration timeout)
    : runner_(runner), timeout_(timeout) {}

absl::StatusOr<std::string> SlurmClient::Scontrol(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kScontrol};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string command = absl::StrJoin(argv, " ");
  absl::StatusOr<process::CommandResult> result = runner_.Run(argv, timeout_);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat("`", command, "` failed: ", result.status().message(),
                                     absl::IsNotFound(result.status())
                                         ? " (install slurm-client, or put scontrol on PATH)"
                                         : ""));
  }
  if (result->exit_code != 0) {
    const std::string said =
        Shown(result->stderr_text.empty() ? result->stdout_text : result->stderr_text);
    return absl::UnavailableError(absl::StrCat("`", command, "` exited with ", result->exit_code,
                                               ": ", said.empty() ? "(no message)" : said));
  }
  if (result->stdout_text.size() >= kMaxOutputBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("`", command, "` printed over 1 MiB; its output was cut and is not used"));
  }
  return std::move(result->stdout_text);
}

absl::StatusOr<std::string> SlurmClient::PartitionNodeList(const std::string& partition) {
  absl::StatusOr<std::string> shown = Scontrol({"--oneliner", "show", "partition", partition});
  if (!shown.ok()) {
    // Slurm 22.05 says "Partition NAME not found" and exits 1.
    if (absl::StrContains(shown.status().message(), "not found")) {
      return absl::NotFoundError(shown.status().message());
    }
    return shown.status();
  }
  absl::StatusOr<std::string> list = ParsePartitionNodeList(*shown);
  if (!list.ok()) {
    return absl::Status(list.status().code(),
                        absl::StrCat("partition ", partition, ": ", list.status().message()));
  }
  return list;
}

absl::StatusOr<NodeSelection> SlurmClient::ListNodes(absl::string_view selector) {
  NodeSelection selection;
  std::string list;
  if (IsSlurmName(selector)) {
    absl::StatusOr<std::string> partition = PartitionNodeList(std::string(selector));
    if (partition.ok()) {
      selection.source = absl::StrCat("partition ", selector);
      list = *partition;
    } else if (!absl::IsNotFound(partition.status())) {
      return partition.status();
    }
  }
  if (list.empty()) {
    if (absl::Status valid = ValidateNodeList(selector); !valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--slurm-nodes is '", selector.substr(0, 80),
                       "', neither a partition name nor a node list: ", valid.message(),
                       ". Give a partition (gpu) or a hostlist (node[1-4],node7)"));
    }
    selection.source = absl::StrCat("node list ", selector);
    list = std::string(selector);
  }
  absl::StatusOr<std::string> expanded = Scontrol({"show", "hostnames", list});
  if (!expanded.ok()) return expanded.status();
  absl::StatusOr<std::vector<std::string>> names = ParseHostnames(*expanded, kMaxNodes);
  if (!names.ok()) {
    return absl::Status(names.status().code(),
                        absl::StrCat(selection.source, ": ", names.status().message()));
  }
  absl::StatusOr<std::vector<SlurmNode>> nodes = ShowNodes(*names);
  if (!nodes.ok()) return nodes.status();
  selection.nodes = *std::move(nodes);
  return selection;
}

absl::StatusOr<std::vector<SlurmNode>> SlurmClient::ShowNodes(
    const std::vector<std::string>& names) {
  std::unordered_map<std::string, SlurmNode> by_name;
  for (size_t first = 0; first < names.size(); first += kNodesPerCall) {
    const size_t count = std::min(kNodesPerCall, names.size() - first);
    std::vector<std::string> chunk(names.begin() + first, names.begin() + first + count);
    for (const std::string& name : chunk) {
      if (!IsSlurmName(name)) return InvalidNodeName(name);
    }
    absl::StatusOr<std::string> shown =
        Scontrol({"--oneliner", "show", "node", absl::StrJoin(chunk, ",")});
    if (!shown.ok()) return shown.status();
    absl::StatusOr<std::vector<SlurmNode>> parsed = ParseNodeLines(*shown, count);
    if (!parsed.ok()) return parsed.status();
    for (SlurmNode& node : *parsed) by_name.emplace(node.name, std::move(node));
  }
  std::vector<SlurmNode> nodes;
  nodes.reserve(names.size());
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::NotFoundError(absl::StrCat("scontrol show node did not describe node ", name,
                                              ": check that slurm.conf defines it"));
    }
    nodes.push_back(it->second);
  }
  return nodes;
}

absl::Status SlurmClient::Drain(const std::string& node, absl::string_view finding) {
  if (!IsSlurmName(node)) return InvalidNodeName(node);
  return Scontrol({"update", absl::StrCat("NodeName=", node), "State=DRAIN",
                   absl::StrCat("Reason=", ClustercertReason(finding))})
      .status();
}

absl::Status SlurmClient::Resume(const std::string& node) {
  if (!IsSlurmName(node)) return InvalidNodeName(node);
  return Scontrol({"update", absl::StrCat("NodeName=", node), "State=RESUME"}).status();
}

}  // namespace clustercert::controller::slurm
