#include "controller/commands/run_command.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/text_escape.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/certificate_writer.h"
#include "controller/commands/baseline_rerun.h"
#include "controller/commands/certification_run.h"
#include "controller/commands/diagnostics.h"
#include "controller/commands/finding_table.h"
#include "controller/commands/interrupt_watcher.h"
#include "controller/commands/matrix_table.h"
#include "controller/commands/uplink_table.h"
#include "controller/report/report_files.h"

namespace clustercert::controller {

int RunRunCommand(const std::vector<std::string>& args, const CommandOptions& options,
                  const ClientFactory* factory_override) {
  // Before PrepareRun: gRPC's threads must inherit the blocked signals.
  RunStop stop;
  InterruptWatcher watcher(stop, [] { return absl::Now(); });
  int exit_code = 0;
  auto prepared =
      PrepareRun(args, "usage: controller run PLAN.yaml [--out DIR]", factory_override, &exit_code);
  if (!prepared) return exit_code;
  const plan::Plan& plan = prepared->plan;
  std::vector<NodeState>& nodes = prepared->nodes;

  std::optional<BaselineRerun> rerun;
  if (!options.baseline.empty()) {
    auto prepared_rerun = PrepareBaselineRerun(options.baseline, options.only, plan, absl::Now());
    if (!prepared_rerun.ok()) {
      DiagnoseError(prepared_rerun.status());
      return kExitUsage;
    }
    rerun = std::move(*prepared_rerun);
  } else if (!options.only.empty()) {
    Diagnostics().error(
        "--only needs --baseline OLD.json: the certificate whose other results are carried over");
    return kExitUsage;
  }

  Progress progress(stderr, options.quiet);
  if (rerun) {
    progress.Line("baseline", absl::StrCat("re-measuring ", absl::StrJoin(rerun->scope.only, ", "),
                                           "; carrying the rest over from ", options.baseline, " (",
                                           rerun->baseline.started_at(), ", ",
                                           rerun->scope.carried.age_s(), " s old)"));
  }
  auto result = RunCertification(
      plan, nodes, progress, [] { return absl::Now(); }, PhaseScope::kAll,
      rerun ? &rerun->scope : nullptr, rerun ? &rerun->baseline : nullptr, &prepared->sinks, &stop);

  int signing_failed = 0;
  if (!plan.certificate.signing_key.empty()) {
    if (auto status = SignCertificate(result.certificate, plan.certificate.signing_key);
        !status.ok()) {
      Diagnostics().error("the certificate is written unsigned: {}", std::string(status.message()));
      signing_failed = 1;
    } else {
      progress.Line("certify",
                    absl::StrCat("signed with Ed25519 key ",
                                 result.certificate.signature().public_key_fingerprint()));
    }
  }

  const std::string out_dir = options.out.empty() ? plan.certificate.out : options.out;
  auto path = WriteCertificate(result.certificate, out_dir, absl::Now());
  if (!path.ok()) {
    DiagnoseError(path.status());
    return kExitCannotRun;
  }

  int reports_failed = 0;
  const std::string certificate_dir = std::filesystem::path(*path).parent_path().string();
  if (auto reports = report::WriteReports(result.certificate, certificate_dir); !reports.ok()) {
    Diagnostics().error("the certificate is written, the reports are not: {}",
                        std::string(reports.status().message()));
    reports_failed = 1;
  }

  if (options.json) {
    std::printf("{\"verdict\": \"%s\", \"certificate\": \"%s\"}\n",
                result.certificate.verdict().c_str(), path->c_str());
  } else {
    std::printf("%s", RenderFindingTables(nodes, result.checks, options.color).c_str());
    std::vector<std::string> names;
    for (const auto& node : plan.nodes) names.push_back(node.name);
    const auto& certificate = result.certificate;
    std::printf("%s",
                RenderPairMatrices(names, {certificate.pairs().begin(), certificate.pairs().end()},
                                   {certificate.suspects().begin(), certificate.suspects().end()},
                                   options.color)
                    .c_str());
    if (certificate.has_uplink()) {
      std::printf("%s\n", RenderUplinkTables(certificate.uplink()).c_str());
    }
    std::printf("verdict: %s", result.certificate.verdict().c_str());
    if (result.certificate.verdict_reasons_size() > 0) {
      std::vector<std::string> reasons(result.certificate.verdict_reasons().begin(),
                                       result.certificate.verdict_reasons().end());
      // Reasons quote agents' errors and names.
      std::printf(" (%s)", TerminalText(absl::StrJoin(reasons, "; ")).c_str());
    }
    std::printf("\ncertificate: %s\n", path->c_str());
    if (!reports_failed) {
      std::printf("reports: %s/report.html, report.md, junit.xml\n", certificate_dir.c_str());
    }
  }
  // A stopped run ends as a stopped tool does (130 / 143), its partial
  // certificate written.
  if (watcher.exit_code() != 0) return watcher.exit_code();
  if (signing_failed || reports_failed) return kExitCannotRun;
  return ExitCodeFor(result, nodes.size());
}

}  // namespace clustercert::controller
