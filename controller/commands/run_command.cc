#include "controller/commands/run_command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/process/process_command_runner.h"
#include "common/text_escape.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/certificate_writer.h"
#include "controller/commands/baseline_rerun.h"
#include "controller/commands/certification_run.h"
#include "controller/commands/diagnostics.h"
#include "controller/commands/finding_table.h"
#include "controller/commands/interrupt_watcher.h"
#include "controller/commands/matrix_table.h"
#include "controller/commands/run_output.h"
#include "controller/commands/slurm_support.h"
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
  std::printf("%s",
              RenderFindingTables(nodes, result.checks, options.color, options.verbose).c_str());
  std::vector<std::string> names;
  for (const auto& node : plan.nodes) names.push_back(node.name);
  const std::string csv_path =
      reports_dir.empty() ? ""
                          : (std::filesystem::path(reports_dir) / report::kPairCsvName).string();
  std::printf("%s",
              RenderPairMatrices(names, {certificate.pairs().begin(), certificate.pairs().end()},
                                 {certificate.suspects().begin(), certificate.suspects().end()},
                                 options.color, csv_path)
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
    std::printf("reports: %s/report.html, report.md, junit.xml, %s\n", reports_dir.c_str(),
                report::kPairCsvName);
  }
}

}  // namespace

namespace {

// --baseline / --only: `rerun` is left empty for a full run; false, the
// refusal diagnosed, when the flags cannot be used.
bool PrepareRerun(const CommandOptions& options, const plan::Plan& plan, absl::Time now,
                  std::optional<BaselineRerun>& rerun) {
  if (!options.baseline.empty()) {
    auto prepared = PrepareBaselineRerun(options.baseline, options.only, plan, now);
    if (!prepared.ok()) {
      DiagnoseError(prepared.status());
      return false;
    }
    rerun = std::move(*prepared);
  } else if (!options.only.empty()) {
    Diagnostics().error(
        "--only needs --baseline OLD.json: the certificate whose other results are carried over");
    return false;
  }
  return true;
}

// The run's directory and journal: made now for a new run, read back for
// --resume. Says what it did on `progress`; nullopt once the refusal is
// diagnosed, with *exit_code set.
std::optional<RunOutput> OpenRunOutput(const plan::Plan& plan, const CommandOptions& options,
                                       bool baseline, absl::Time now, Progress& progress,
                                       int* exit_code) {
  *exit_code = kExitUsage;
  if (!options.resume.empty() && (baseline || !options.out.empty())) {
    Diagnostics().error(
        "--resume continues the run in its directory; it takes neither --out (it writes into "
        "that directory) nor --baseline (a partial run is started afresh): drop them");
    return std::nullopt;
  }
  auto output =
      options.resume.empty()
          ? StartRunOutput(plan, options.out.empty() ? plan.certificate.out : options.out, now)
          : ResumeRunOutput(plan, options.resume, now);
  if (!output.ok()) {
    DiagnoseError(output.status());
    if (options.resume.empty()) *exit_code = kExitCannotRun;
    return std::nullopt;
  }
  if (output->resumed) {
    const journal::JournalContents& resumed = *output->resumed;
    progress.Line(
        "resume",
        absl::StrCat("taking over what the run started ", resumed.header.started(), " completed (",
                     resumed.pairs.size(), " cell record(s), ", resumed.sweeps.size(),
                     " sweep(s)) from ", output->journal->path(), "; measuring the rest"));
    for (const std::string& warning : resumed.warnings) progress.Line("resume", warning);
    if (resumed.ignored_lines > 0) {
      progress.Line("resume",
                    absl::StrCat(resumed.ignored_lines,
                                 " journal line(s) ignored (torn by the kill, or failing their "
                                 "MAC): what they held is measured again, never taken over"));
    }
  } else {
    progress.Line("output", absl::StrCat(output->dir,
                                         " (if this run is killed, continue it with "
                                         "`controller run PLAN --resume ",
                                         output->dir, "`)"));
  }
  return std::move(*output);
}

}  // namespace

int RunRunCommand(const std::vector<std::string>& args, const CommandOptions& options,
                  const ClientFactory* factory_override) {
  // Before PrepareRun: gRPC's threads must inherit the blocked signals.
  Clock& clock = RealClock();
  RunStop stop;
  InterruptWatcher watcher(stop, clock.NowFunction());
  int exit_code = 0;
  process::ProcessCommandRunner slurm_runner;  // scontrol, for --slurm-nodes / --slurm-drain
  auto prepared =
      PrepareRun(args,
                 "usage: controller run PLAN.yaml [--out DIR | --resume DIR] [--slurm-nodes "
                 "PARTITION|NODELIST] [--slurm-drain]",
                 factory_override, &exit_code,
                 options.slurm_nodes.empty() ? nullptr : SlurmPlanResolver(options, slurm_runner));
  if (!prepared) return exit_code;
  const plan::Plan& plan = prepared->plan;
  std::vector<NodeState>& nodes = prepared->nodes;

  std::optional<BaselineRerun> rerun;
  if (!PrepareRerun(options, plan, clock.Now(), rerun)) return kExitUsage;

  Progress progress(stderr, options.quiet);
  std::optional<RunOutput> output =
      OpenRunOutput(plan, options, rerun.has_value(), clock.Now(), progress, &exit_code);
  if (!output) return exit_code;
  if (rerun) {
    progress.Line("baseline", absl::StrCat("re-measuring ", absl::StrJoin(rerun->scope.only, ", "),
                                           "; carrying the rest over from ", options.baseline, " (",
                                           rerun->baseline.started_at(), ", ",
                                           rerun->scope.carried.age_s(), " s old)"));
  }
  PhaseJournal journal(output->journal.get(), output->resumed ? &*output->resumed : nullptr,
                       output->carried, progress);
  auto result = RunCertification(
      plan, nodes, progress, clock, PhaseScope::kAll, rerun ? &rerun->scope : nullptr,
      rerun ? &rerun->baseline : nullptr, &prepared->sinks, &stop, &journal);

  const int signing_failed = SignIfAsked(plan, result.certificate, progress);

  auto path = WriteCertificateIn(result.certificate, output->dir);
  if (!path.ok()) {
    DiagnoseError(path.status());
    return kExitCannotRun;
  }
  if (!result.certificate.has_interrupted()) MarkRunFinished(*output, clock.Now());

  int reports_failed = 0;
  if (auto reports = report::WriteReports(result.certificate, output->dir); !reports.ok()) {
    Diagnostics().error("the certificate is written, the reports are not: {}",
                        std::string(reports.status().message()));
    reports_failed = 1;
  }

  PrintRunSummary(plan, nodes, result, *path, reports_failed ? "" : output->dir, options);
  const int slurm_failed =
      options.slurm_drain && watcher.exit_code() == 0
          ? UpdateSlurm(plan, result.certificate, slurm_runner, options.json ? stderr : stdout)
          : 0;
  // A stopped run ends as a stopped tool does (130 / 143), its partial
  // certificate written.
  if (watcher.exit_code() != 0) return watcher.exit_code();
  if (signing_failed || reports_failed) return kExitCannotRun;
  if (slurm_failed != 0) return kExitSlurmFailed;
  return ExitCodeFor(result, nodes.size());
}

}  // namespace clustercert::controller
