#include "controller/collectives/mpirun_sweep.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/process/process_command_runner.h"
#include "controller/collectives/collective_scopes.h"
#include "controller/collectives/nccl_transport_record.h"
#include "controller/collectives/sweep_merge.h"
#include "sweep/nccl_tests_output.h"

namespace clustercert::controller {
namespace {

int TotalRanks(const plan::Plan& plan) {
  int ranks = 0;
  for (const plan::Node& node : plan.nodes) ranks += RanksOnNode(plan.collectives, node);
  return ranks;
}

// The last non-empty line of a tool's stderr, for the error sentence.
std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return lines.empty() ? "" : lines.back();
}

}  // namespace

std::vector<std::string> MpirunCommand(const plan::Plan& plan, int ranks) {
  const plan::Collectives& c = plan.collectives;
  std::vector<std::string> argv = {
      "mpirun", "--hostfile", c.hostfile, "-np", absl::StrCat(ranks), "--bind-to", "none"};
  if (c.env.count("NCCL_DEBUG") == 0) {
    argv.push_back("-x");
    argv.push_back("NCCL_DEBUG=INFO");
  }
  for (const auto& [name, value] : c.env) {
    argv.push_back("-x");
    argv.push_back(absl::StrCat(name, "=", value));
  }
  for (std::string arg :
       {c.nccl_tests_binary, std::string("-b"), absl::StrCat(c.sizes.min_bytes), std::string("-e"),
        absl::StrCat(c.sizes.max_bytes), std::string("-f"), absl::StrCat(c.sizes.factor),
        std::string("-g"), std::string("1"), std::string("-w"), absl::StrCat(c.warmup_iters),
        std::string("-n"), absl::StrCat(c.iters), std::string("-c"), std::string("1")}) {
    argv.push_back(std::move(arg));
  }
  return argv;
}

v1::CollectiveSweep MpirunSweepFrame(const plan::Plan& plan) {
  v1::CollectiveSweep sweep;
  sweep.set_scope("all-nodes");
  sweep.set_backend("nccl");
  sweep.set_launcher("mpirun");
  for (const plan::Node& node : plan.nodes) sweep.add_nodes(node.name);
  sweep.set_ranks(TotalRanks(plan));
  return sweep;
}

MpirunSweepResult RunMpirunSweep(const plan::Plan& plan, process::CommandRunner& runner) {
  MpirunSweepResult result;
  result.sweep = MpirunSweepFrame(plan);
  v1::CollectiveSweep& sweep = result.sweep;
  const int ranks = sweep.ranks();
  const absl::Time start = absl::Now();
  absl::StatusOr<process::CommandResult> ran =
      runner.Run(MpirunCommand(plan, ranks), plan.collectives.timeout);
  sweep.set_duration_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  if (!ran.ok()) {
    if (absl::IsNotFound(ran.status())) {
      result.not_run =
          absl::StrCat("skipped: collectives.launcher is mpirun but mpirun is not installed (",
                       ran.status().message(),
                       "); install OpenMPI (apt-get install openmpi-bin) or use "
                       "launcher: agents");
      return result;
    }
    sweep.set_ok(false);
    sweep.set_error(absl::StrCat(
        "mpirun ", plan.collectives.nccl_tests_binary, " failed: ", ran.status().message(),
        absl::IsDeadlineExceeded(ran.status()) ? "; raise collectives.timeout_s or lower sizes.max"
                                               : ""));
    return result;
  }
  result.output = ran->stdout_text;
  sweep::NcclTestsRun parsed = sweep::ParseNcclTestsOutput(ran->stdout_text);
  std::vector<v1::CollectiveRow> rows;
  for (const auto& row : parsed.rows) rows.push_back(ToCollectiveRow(row));
  SetSweepRows(rows, sweep);
  for (const std::string& error : parsed.errors) sweep.add_notes("unparsed: " + error);

  // NCCL's INFO lines come on stdout with the table under mpirun.
  std::vector<std::string> lines = absl::StrSplit(ran->stdout_text + ran->stderr_text, '\n');
  AddTransportLog(lines, "", *sweep.mutable_nccl_transport());
  sweep.set_transport(NcclTransportName(sweep.nccl_transport()));
  if (ran->exit_code != 0 || rows.empty()) {
    sweep.set_ok(false);
    const std::string last = LastLine(ran->stderr_text);
    sweep.set_error(absl::StrCat("mpirun ", plan.collectives.nccl_tests_binary,
                                 " exited with code ", ran->exit_code,
                                 rows.empty() ? " and printed no result row" : "",
                                 last.empty() ? "" : absl::StrCat(": ", last)));
  } else {
    sweep.set_ok(true);
  }
  return result;
}

MpirunSweepResult RunMpirunSweep(const plan::Plan& plan) {
  process::ProcessCommandRunner runner;
  return RunMpirunSweep(plan, runner);
}

}  // namespace clustercert::controller
