#include "controller/commands/health_command.h"

#include <unistd.h>

#include <cstdio>

#include "common/clock.h"
#include "common/process/process_command_runner.h"
#include "common/text_escape.h"
#include "controller/commands/certification_run.h"
#include "controller/commands/diagnostics.h"
#include "controller/commands/slurm_support.h"
#include "controller/slurm/slurm_client.h"
#include "controller/slurm/slurm_drain.h"
#include "controller/slurm/slurm_plan.h"

namespace clustercert::controller {
namespace {

constexpr char kUsage[] =
    "usage: controller health PLAN.yaml --local | --node NAME [--slurm-drain]";

// This host's name up to the first dot: Slurm's NodeName by default.
std::string ShortHostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  std::string host(name);
  return host.substr(0, host.find('.'));
}

// The plan cut down to `name`: its own entry, or one derived from Slurm.
PlanResolver OneNodeResolver(const std::string& name, process::CommandRunner& runner) {
  return [name, &runner](plan::Plan plan, int* exit_code) -> std::optional<plan::Plan> {
    for (const plan::Node& node : plan.nodes) {
      if (node.name != name) continue;
      plan.nodes = {node};
      return plan;
    }
    if (!plan.slurm.enabled) {
      Diagnostics().error(
          "the plan has no node {} and no slurm section to derive it from: give --node with a "
          "name from its nodes list, or add a slurm section (docs/slurm.md)",
          name);
      return std::nullopt;
    }
    slurm::SlurmClient client(runner, plan.slurm.timeout);
    absl::StatusOr<std::vector<slurm::SlurmNode>> shown = client.ShowNodes({name});
    absl::StatusOr<plan::Node> node =
        shown.ok() ? slurm::PlanNodeFor(plan, shown->front()) : shown.status();
    if (!node.ok()) {
      DiagnoseError(node.status());
      *exit_code = shown.ok() ? kExitUsage : kExitCannotRun;
      return std::nullopt;
    }
    plan.nodes = {*std::move(node)};
    return plan;
  };
}

}  // namespace

int RunHealthCommand(const std::vector<std::string>& args, const CommandOptions& options,
                     const ClientFactory* factory_override) {
  std::string name = options.node;
  if (name.empty() && options.local) name = ShortHostname();
  if (name.empty() || (options.local && !options.node.empty())) {
    std::fprintf(stderr, "%s\n  (--local: this host's short name; --node NAME: that node)\n",
                 kUsage);
    return kExitUsage;
  }
  if (!slurm::IsSlurmName(name)) {
    Diagnostics().error("the node name '{}' is not letters, digits, '.', '_' and '-'; give --node",
                        TerminalText(name.substr(0, 64)));
    return kExitUsage;
  }
  process::ProcessCommandRunner runner;
  int exit_code = 0;
  auto prepared =
      PrepareRun(args, kUsage, factory_override, &exit_code, OneNodeResolver(name, runner));
  if (!prepared) return exit_code;
  Progress progress(stderr, /*quiet=*/true);
  auto result = RunCertification(prepared->plan, prepared->nodes, progress, RealClock(),
                                 PhaseScope::kInventoryOnly);
  const std::vector<slurm::NodeVerdict> verdicts = slurm::NodeVerdicts(result.certificate);
  const slurm::NodeVerdict verdict =
      verdicts.empty() ? slurm::NodeVerdict{name, false, "the run recorded no result for it"}
                       : verdicts.front();
  if (verdict.passed) {
    std::printf("%s: ok\n", name.c_str());
  } else {
    std::printf("%s: FAIL: %s\n", name.c_str(), TerminalText(verdict.first_finding).c_str());
  }
  if (options.slurm_drain && UpdateSlurm(prepared->plan, result.certificate, runner, stdout) != 0) {
    return kExitSlurmFailed;
  }
  return verdict.passed ? kExitCertified : kExitNotCertified;
}

}  // namespace clustercert::controller
