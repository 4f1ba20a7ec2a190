#include "controller/commands/inventory_command.h"

#include <cstdio>

#include "common/clock.h"
#include "controller/certificate/certificate_writer.h"
#include "controller/checks/node_checks.h"
#include "controller/commands/certification_run.h"
#include "controller/commands/diagnostics.h"
#include "controller/commands/finding_table.h"

namespace clustercert::controller {

int RunInventoryCommand(const std::vector<std::string>& args, const CommandOptions& options,
                        const ClientFactory* factory_override) {
  int exit_code = 0;
  auto prepared = PrepareRun(args, "usage: controller inventory PLAN.yaml [--json]",
                             factory_override, &exit_code);
  if (!prepared) return exit_code;
  std::vector<NodeState>& nodes = prepared->nodes;

  Progress progress(stderr, options.quiet);
  auto result =
      RunCertification(prepared->plan, nodes, progress, RealClock(), PhaseScope::kInventoryOnly);
  if (options.json) {
    // The certificate model is the machine-readable inventory: nodes with
    // inventories, then every check.
    v1::Certificate report = result.certificate;
    report.clear_verdict();
    report.clear_verdict_reasons();
    auto json = CertificateJson(report);
    if (!json.ok()) {
      DiagnoseError(json.status());
      return kExitCannotRun;
    }
    std::printf("%s\n", json->c_str());
  } else {
    std::printf("%s", RenderFindingTables(nodes, result.checks, options.color).c_str());
  }
  // Only the inventory is judged here: phases this command does not run
  // (pairwise, ...) do not change its exit status.
  if (!nodes.empty() && result.reachable == 0) return kExitCannotRun;
  bool clean = result.reachable == static_cast<int>(nodes.size());
  for (const auto& check : result.checks) clean = clean && !checks::BlocksCertification(check);
  return clean ? kExitCertified : kExitNotCertified;
}

}  // namespace clustercert::controller
