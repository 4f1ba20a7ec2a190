#include "controller/commands/run_command.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
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

namespace {

// Signs the certificate when the plan names a key; 1 when signing failed
// (the certificate is then written unsigned), else 0.
int SignIfAsked(const plan::Plan& plan, v1::Certificate& certificate, Progress& progress) {
  if (plan.certificate.signing_key.empty()) return 0;
  if (auto status = SignCertificate(certificate, plan.certificate.signing_key); !status.ok()) {
    Diagnostics().error("the certificate is written unsigned: {}", std::string(status.message()));
    return 1;
  }
  progress.Line("certify", absl::StrCat("signed with Ed25519 key ",
                                        certificate.signature().public_key_fingerprint()));
  return 0;
}

// What the engineer reads at the end: the JSON line, or the finding tables,
// the pair matrices, the uplink table, the verdict and where the files are.
// `reports_dir` is empty when the reports could not be written.
void PrintRunSummary(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                     const CertificationResult& result, const std::string& path,
                     const std::string& reports_dir, const CommandOptions& options) {
  const v1::Certificate& certificate = result.certificate;
  if (options.json) {
    std::printf("{\"verdict\": \"%s\", \"certificate\": \"%s\"}\n", certificate.verdict().c_str(),
                path.c_str());
    return;
  }
  std::printf("%s", RenderFindingTables(nodes, result.checks, options.color).c_str());
  std::vector<std::string> names;
  for (const auto& node : plan.nodes) names.push_back(node.name);
  std::printf("%s",
              RenderPairMatrices(names, {certificate.pairs().begin(), certificate.pairs().end()},
                                 {certificate.suspects().begin(), certificate.suspects().end()},
                                 options.color)
                  .c_str());
  if (certificate.has_uplink()) {
    std::printf("%s\n", RenderUplinkTables(certificate.uplink()).c_str());
  }
  std::printf("verdict: %s", certificate.verdict().c_str());
  if (certificate.verdict_reasons_size() > 0) {
    std::vector<std::string> reasons(certificate.verdict_reasons().begin(),
                                     certificate.verdict_reasons().end());
    // Reasons quote agents' errors and names.
    std::printf(" (%s)", TerminalText(absl::StrJoin(reasons, "; ")).c_str());
  }
  std::printf("\ncertificate: %s\n", path.c_str());
  if (!reports_dir.empty()) {
    std::printf("reports: %s/report.html, report.md, junit.xml\n", reports_dir.c_str());
  }
}

}  // namespace

int RunRunCommand(const std::vector<std::string>& args, const CommandOptions& options,
                  const ClientFactory* factory_override) {
  // Before PrepareRun: gRPC's threads must inherit the blocked signals.
  Clock& clock = RealClock();
  RunStop stop;
  InterruptWatcher watcher(stop, clock.NowFunction());
  int exit_code = 0;
  auto prepared =
      PrepareRun(args, "usage: controller run PLAN.yaml [--out DIR]", factory_override, &exit_code);
  if (!prepared) return exit_code;
  const plan::Plan& plan = prepared->plan;
  std::vector<NodeState>& nodes = prepared->nodes;

  std::optional<BaselineRerun> rerun;
  if (!options.baseline.empty()) {
    auto prepared_rerun = PrepareBaselineRerun(options.baseline, options.only, plan, clock.Now());
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
  auto result = RunCertification(plan, nodes, progress, clock, PhaseScope::kAll,
                                 rerun ? &rerun->scope : nullptr,
                                 rerun ? &rerun->baseline : nullptr, &prepared->sinks, &stop);

  const int signing_failed = SignIfAsked(plan, result.certificate, progress);

  const std::string out_dir = options.out.empty() ? plan.certificate.out : options.out;
  auto path = WriteCertificate(result.certificate, out_dir, clock.Now());
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

  PrintRunSummary(plan, nodes, result, *path, reports_failed ? "" : certificate_dir, options);
  // A stopped run ends as a stopped tool does (130 / 143), its partial
  // certificate written.
  if (watcher.exit_code() != 0) return watcher.exit_code();
  if (signing_failed || reports_failed) return kExitCannotRun;
  return ExitCodeFor(result, nodes.size());
}

}  // namespace clustercert::controller
