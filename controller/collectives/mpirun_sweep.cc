#include "controller/collectives/mpirun_sweep.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/host_port.h"
#include "common/process/process_command_runner.h"
#include "common/worker_env.h"
#include "controller/collectives/collective_job_spec.h"
#include "controller/collectives/nccl_transport_record.h"
#include "controller/collectives/sweep_merge.h"
#include "sweep/collective_operation.h"
#include "sweep/nccl_tests_output.h"

namespace clustercert::controller {
namespace {

int ScopeRanks(const plan::Plan& plan, const std::vector<NodeState>& nodes,
               const CollectiveScope& scope) {
  int ranks = 0;
  for (size_t index : scope.nodes) ranks += RanksOnNode(plan.collectives, nodes[index].node);
  return ranks;
}

// The last non-empty line of a tool's stderr, for the error sentence.
std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return lines.empty() ? "" : lines.back();
}

// "-x NAME=VALUE" for each variable of the node's NCCL environment, each
// checked against the workers' allow-list: mpirun hands them to ranks that
// run as the controller does, and a derived value (a netdev name from the
// agent's inventory) is as untrusted as a plan's.
absl::Status AppendEnv(const plan::Plan& plan, const NodeState& node,
                       std::vector<std::string>& argv) {
  for (const auto& [name, value] : NcclEnvFor(plan, node)) {
    if (absl::Status allowed = CheckWorkerEnv(name, value); !allowed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.node.name, "'s NCCL environment: ", allowed.message()));
    }
    argv.emplace_back("-x");
    argv.push_back(absl::StrCat(name, "=", value));
  }
  return absl::OkStatus();
}

std::vector<std::string> NcclTestsArgs(const plan::Collectives& c) {
  return {"-b", absl::StrCat(c.sizes.min_bytes),
          "-e", absl::StrCat(c.sizes.max_bytes),
          "-f", absl::StrCat(c.sizes.factor),
          "-g", "1",
          "-w", absl::StrCat(c.warmup_iters),
          "-n", absl::StrCat(c.iters),
          "-c", "1"};
}

}  // namespace

std::string NcclTestsBinaryPath(const plan::Plan& plan, const std::string& operation) {
  const std::optional<sweep::Operation> parsed = sweep::ParseOperation(operation);
  // The plan check admits only the known names; all_reduce is the default.
  const std::string name = sweep::NcclTestsBinary(parsed.value_or(sweep::Operation::kAllReduce));
  const std::string& dir = plan.collectives.nccl_tests_dir;
  return dir.empty() ? name : absl::StrCat(dir, "/", name);
}

absl::StatusOr<std::string> MpirunHost(const plan::Node& node) {
  absl::StatusOr<HostPort> agent = ParseHostPort(node.agent);
  if (!agent.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(node.name, "'s agent ", node.agent, ": ",
                                                   agent.status().message(),
                                                   "; mpirun needs the node's host"));
  }
  if (agent->host.find(':') != std::string::npos || agent->host[0] == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat(node.name, "'s agent host ", agent->host,
                     " cannot be given to mpirun's --host; use a host name or IPv4 address"));
  }
  return agent->host;
}

absl::StatusOr<std::vector<std::string>> MpirunCommand(const plan::Plan& plan,
                                                       const std::vector<NodeState>& nodes,
                                                       const CollectiveScope& scope, bool as_root) {
  const plan::Collectives& c = plan.collectives;
  std::vector<std::string> hosts;
  for (size_t index : scope.nodes) {
    absl::StatusOr<std::string> host = MpirunHost(nodes[index].node);
    if (!host.ok()) return host.status();
    hosts.push_back(absl::StrCat(*host, ":", RanksOnNode(c, nodes[index].node)));
  }
  std::vector<std::string> argv = {"mpirun"};
  if (as_root) argv.emplace_back("--allow-run-as-root");
  if (!c.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", c.hostfile});
  argv.insert(argv.end(), {"--host", absl::StrJoin(hosts, ","), "--bind-to", "none"});
  const std::string binary = NcclTestsBinaryPath(plan, scope.operation);
  const std::vector<std::string> args = NcclTestsArgs(c);
  for (size_t i = 0; i < scope.nodes.size(); ++i) {
    const NodeState& node = nodes[scope.nodes[i]];
    if (i > 0) argv.emplace_back(":");
    argv.insert(argv.end(), {"-np", absl::StrCat(RanksOnNode(c, node.node))});
    if (absl::Status env = AppendEnv(plan, node, argv); !env.ok()) return env;
    argv.push_back(binary);
    argv.insert(argv.end(), args.begin(), args.end());
  }
  return argv;
}

v1::CollectiveSweep MpirunSweepFrame(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                     const CollectiveScope& scope) {
  v1::CollectiveSweep sweep;
  sweep.set_scope(scope.name);
  // Empty for all_reduce, as the agents' sweeps leave it.
  if (scope.operation != "all_reduce") sweep.set_operation(scope.operation);
  sweep.set_backend("nccl");
  sweep.set_launcher("mpirun");
  for (size_t index : scope.nodes) sweep.add_nodes(nodes[index].node.name);
  sweep.set_ranks(ScopeRanks(plan, nodes, scope));
  return sweep;
}

namespace {

// The parsed table, NCCL's transport lines and the verdict on the launch.
void ReadOutput(const process::CommandResult& ran, const std::string& binary,
                v1::CollectiveSweep& sweep) {
  sweep::NcclTestsRun parsed = sweep::ParseNcclTestsOutput(ran.stdout_text);
  std::vector<v1::CollectiveRow> rows;
  for (const auto& row : parsed.rows) rows.push_back(ToCollectiveRow(row));
  SetSweepRows(rows, sweep);
  for (const std::string& error : parsed.errors) sweep.add_notes("unparsed: " + error);
  if (parsed.ranks > 0 && parsed.ranks != sweep.ranks()) {
    sweep.add_notes(absl::StrCat(binary, "'s table lists ", parsed.ranks,
                                 " rank(s) but mpirun started ", sweep.ranks()));
  }
  // NCCL's INFO lines come on stdout with the table under mpirun.
  std::vector<std::string> lines = absl::StrSplit(ran.stdout_text + ran.stderr_text, '\n');
  AddTransportLog(lines, "", *sweep.mutable_nccl_transport());
  sweep.set_transport(NcclTransportName(sweep.nccl_transport()));
  if (ran.exit_code == 0 && !rows.empty()) {
    sweep.set_ok(true);
    return;
  }
  sweep.set_ok(false);
  const std::string last = LastLine(ran.stderr_text);
  sweep.set_error(absl::StrCat("mpirun ", binary, " exited with code ", ran.exit_code,
                               rows.empty() ? " and printed no result row" : "",
                               last.empty() ? "" : absl::StrCat(": ", last)));
}

}  // namespace

MpirunSweepResult RunMpirunSweep(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const CollectiveScope& scope, process::CommandRunner& runner,
                                 bool as_root) {
  MpirunSweepResult result;
  result.sweep = MpirunSweepFrame(plan, nodes, scope);
  v1::CollectiveSweep& sweep = result.sweep;
  const std::string binary = NcclTestsBinaryPath(plan, scope.operation);
  absl::StatusOr<std::vector<std::string>> command = MpirunCommand(plan, nodes, scope, as_root);
  if (!command.ok()) {
    sweep.set_ok(false);
    sweep.set_error(
        absl::StrCat("mpirun ", binary, " was not started: ", command.status().message()));
    return result;
  }
  result.command = *command;
  const absl::Time start = absl::Now();
  absl::StatusOr<process::CommandResult> ran = runner.Run(*command, plan.collectives.timeout);
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
    sweep.set_error(absl::StrCat("mpirun ", binary, " failed: ", ran.status().message(),
                                 absl::IsDeadlineExceeded(ran.status())
                                     ? "; raise collectives.timeout_s or lower sizes.max"
                                     : ""));
    return result;
  }
  result.output = ran->stdout_text;
  result.error_output = ran->stderr_text;
  ReadOutput(*ran, binary, sweep);
  return result;
}

MpirunSweepResult RunMpirunSweep(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const CollectiveScope& scope) {
  process::ProcessCommandRunner runner;
  return RunMpirunSweep(plan, nodes, scope, runner, ::geteuid() == 0);
}

}  // namespace clustercert::controller
