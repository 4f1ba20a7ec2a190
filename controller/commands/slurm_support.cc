#include "controller/commands/slurm_support.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text_escape.h"
#include "controller/commands/diagnostics.h"
#include "controller/slurm/slurm_client.h"
#include "controller/slurm/slurm_drain.h"
#include "controller/slurm/slurm_plan.h"

namespace clustercert::controller {
namespace {

// Shows at most this many node names in the listing line.
constexpr size_t kNamesShown = 16;

std::string NameList(const std::vector<slurm::SlurmNode>& nodes) {
  std::vector<std::string> names;
  for (size_t i = 0; i < nodes.size() && i < kNamesShown; ++i) names.push_back(nodes[i].name);
  std::string list = absl::StrJoin(names, ", ");
  if (nodes.size() > kNamesShown)
    absl::StrAppend(&list, " and ", nodes.size() - kNamesShown, " more");
  return list;
}

bool AnyNodeReachable(const v1::Certificate& certificate) {
  for (const v1::NodeResult& node : certificate.nodes()) {
    if (node.reachable()) return true;
  }
  return false;
}

}  // namespace

PlanResolver SlurmPlanResolver(const CommandOptions& options, process::CommandRunner& runner) {
  const std::string selector = options.slurm_nodes;
  return [selector, &runner](const plan::Plan& plan, int* exit_code) -> std::optional<plan::Plan> {
    slurm::SlurmClient client(runner, plan.slurm.timeout);
    absl::StatusOr<slurm::NodeSelection> selection = client.ListNodes(selector);
    if (!selection.ok()) {
      DiagnoseError(selection.status());
      *exit_code = absl::IsInvalidArgument(selection.status()) ? kExitUsage : kExitCannotRun;
      return std::nullopt;
    }
    std::fprintf(stderr, "slurm: %s: %zu node(s): %s\n", selection->source.c_str(),
                 selection->nodes.size(), NameList(selection->nodes).c_str());
    absl::StatusOr<plan::Plan> resolved =
        slurm::PlanWithSlurmNodes(plan, selection->nodes, selection->source);
    if (!resolved.ok()) {
      DiagnoseError(resolved.status());
      *exit_code = kExitUsage;
      return std::nullopt;
    }
    return *std::move(resolved);
  };
}

int UpdateSlurm(const plan::Plan& plan, const v1::Certificate& certificate,
                process::CommandRunner& runner, std::FILE* out) {
  if (certificate.has_interrupted() || !AnyNodeReachable(certificate)) {
    std::fprintf(out,
                 "slurm: no node drained or resumed: the run %s, so its verdicts do not say "
                 "which nodes are at fault\n",
                 certificate.has_interrupted() ? "was interrupted" : "reached no node");
    return 0;
  }
  const std::vector<slurm::NodeVerdict> verdicts = slurm::NodeVerdicts(certificate);
  std::vector<std::string> names;
  for (const slurm::NodeVerdict& verdict : verdicts) {
    if (slurm::IsSlurmName(verdict.node)) names.push_back(verdict.node);
  }
  slurm::SlurmClient client(runner, plan.slurm.timeout);
  // Read now, not before the run: someone may have drained a node meanwhile.
  absl::StatusOr<std::vector<slurm::SlurmNode>> nodes = client.ShowNodes(names);
  if (!nodes.ok()) {
    Diagnostics().error("Slurm was not updated (the certificate is written and stands): {}",
                        std::string(nodes.status().message()));
    return kExitSlurmFailed;
  }
  const int refused = slurm::ApplyDrainActions(
      client, slurm::PlanDrainActions(verdicts, *nodes), [out](const std::string& line) {
        std::fprintf(out, "slurm: %s\n", TerminalText(line).c_str());
      });
  if (refused == 0) return 0;
  Diagnostics().error(
      "Slurm refused {} drain/resume action(s) (above); the certificate is written and its "
      "verdict stands: check `scontrol ping` and that the controller runs as root or SlurmUser",
      refused);
  return kExitSlurmFailed;
}

}  // namespace clustercert::controller
