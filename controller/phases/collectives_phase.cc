#include "controller/phases/collectives_phase.h"

#include <algorithm>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "controller/collectives/agent_collective_run.h"
#include "controller/collectives/collective_job_spec.h"
#include "controller/collectives/collective_scopes.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/collectives/gloo_devices.h"
#include "controller/collectives/mpirun_sweep.h"
#include "controller/collectives/nccl_transport_record.h"
#include "controller/collectives/sweep_merge.h"
#include "sweep/sweep_row.h"

namespace clustercert::controller {
namespace {

// Why the nccl backend cannot run on this node, or "".
std::string NcclUnavailable(const NodeState& node, int ranks) {
  if (!node.inventory) return absl::StrCat(node.node.name, " has no inventory");
  const v1::GpuRuntime& runtime = node.inventory->gpu_runtime();
  if (runtime.gpus_size() >= ranks && ranks > 0) return "";
  return absl::StrCat(node.node.name, " has ", runtime.gpus_size(), " usable GPU(s) for ", ranks,
                      " NCCL rank(s)",
                      runtime.reason().empty() ? "" : absl::StrCat(" (", runtime.reason(), ")"));
}

// A sweep of `scope` with its nodes and the block of ranks each node runs.
v1::CollectiveSweep NewSweep(const std::vector<NodeState>& nodes, const plan::Plan& plan,
                             const CollectiveScope& scope, std::vector<RankBlock>& blocks) {
  v1::CollectiveSweep sweep;
  sweep.set_scope(scope.name);
  // Left empty for all_reduce: such a sweep reads as it did before operations.
  if (scope.operation != "all_reduce") sweep.set_operation(scope.operation);
  sweep.set_backend(plan.collectives.backend == plan::CollectiveBackend::kNccl ? "nccl" : "gloo");
  sweep.set_launcher("agents");
  int world = 0;
  for (size_t index : scope.nodes) {
    const int count = RanksOnNode(plan.collectives, nodes[index].node);
    blocks.push_back({world, count});
    world += count;
    sweep.add_nodes(nodes[index].node.name);
  }
  sweep.set_ranks(world);
  return sweep;
}

// The scope's nodes with their job specs, or why some spec could not be built.
struct ScopeJobs {
  std::vector<NodeState*> members;
  std::vector<v1::CollectiveJobSpec> specs;
  std::vector<std::string> errors;
};

ScopeJobs BuildScopeJobs(std::vector<NodeState>& nodes, const plan::Plan& plan,
                         const CollectiveScope& scope, const std::vector<RankBlock>& blocks,
                         int world) {
  ScopeJobs jobs;
  for (size_t k = 0; k < scope.nodes.size(); ++k) {
    NodeState& node = nodes[scope.nodes[k]];
    absl::StatusOr<v1::CollectiveJobSpec> spec =
        BuildJobSpec(plan, node, blocks[k], world, scope.operation);
    if (!spec.ok()) {
      jobs.errors.emplace_back(spec.status().message());
      continue;
    }
    jobs.members.push_back(&node);
    jobs.specs.push_back(*std::move(spec));
  }
  return jobs;
}

void AnnounceScope(const plan::Plan& plan, const std::string& label,
                   const v1::CollectiveSweep& sweep, const v1::CollectiveJobSpec& first_spec,
                   Progress& progress) {
  progress.Line(
      "collectives",
      absl::StrCat(label, ": ", OperationOf(sweep), ", ", sweep.ranks(), " rank(s) on ",
                   absl::StrJoin(sweep.nodes(), ", "), ", ", sweep.backend(),
                   sweep.backend() == "gloo" ? absl::StrCat(" ", first_spec.transport()) : "",
                   ", sizes ", plan.collectives.sizes.min_bytes, "..",
                   plan.collectives.sizes.max_bytes, " B x", plan.collectives.sizes.factor));
}

// How many sizes the sweep steps through: the length of the progress bar.
int CountSizes(const plan::SizeSweep& sizes) {
  int count = 0;
  for (int64_t bytes = std::max<int64_t>(sizes.min_bytes, 1);
       bytes <= sizes.max_bytes && count < 64; bytes *= std::max<int64_t>(sizes.factor, 2)) {
    ++count;
  }
  return count;
}

// Runs the jobs through the agents, printing rank 0's rows as they arrive.
ScopeRunResult RunJobsWithProgress(const ScopeJobs& jobs, const ScopeRunSettings& settings,
                                   const std::string& label, int sizes, Progress& progress,
                                   bool bar) {
  int done = 0;
  const std::string bar_name = absl::StrCat("collectives ", label);
  if (bar) progress.StartBar(bar_name, sizes, "sizes");
  ScopeRunResult run =
      RunScopeThroughAgents(jobs.members, jobs.specs, settings, [&](const RankRow& row) {
        if (row.rank != 0) return;
        if (bar) {
          progress.Advance(bar_name, std::min(++done, sizes), sizes,
                           absl::StrCat(row.row.bytes, " B"));
        }
        progress.Line(
            "collectives",
            absl::StrFormat("%s: %12d B  %9.2f us  busbw %.4g GB/s (rank 0)", label, row.row.bytes,
                            row.row.out_of_place.time_us, row.row.out_of_place.busbw_gbps));
      });
  if (bar) progress.EndBar();
  return run;
}

// Copies the run's outcome, rows and transport into the sweep.
void RecordRun(const ScopeRunResult& run, v1::CollectiveSweep& sweep) {
  sweep.set_ok(run.ok);
  sweep.set_error(run.error);
  if (std::string foreign = ForeignOperation(run.rows, OperationOf(sweep)); !foreign.empty()) {
    sweep.set_ok(false);
    sweep.set_error(foreign);
  }
  for (auto& error : run.rank_errors) sweep.add_rank_errors(error);
  for (auto& note : run.notes) sweep.add_notes(note);
  SetSweepRows(MergeRankRows(run.rows, sweep.ranks(), OperationOf(sweep)), sweep);
  if (sweep.backend() == "nccl") {
    for (const RankLog& log : run.logs) {
      AddTransportLog(log.lines, absl::StrCat(log.node, " rank ", log.rank),
                      *sweep.mutable_nccl_transport());
    }
    sweep.set_transport(NcclTransportName(sweep.nccl_transport()));
  } else {
    // What each rank's gloo device said it was, not its arguments.
    RecordGlooDevices(run.notes, sweep);
  }
}

// `bar`: whether this sweep draws the progress bar (one sweep at a time
// may; the per-node 1-node sweeps run together and print lines only).
v1::CollectiveSweep RunScope(std::vector<NodeState>& nodes, const plan::Plan& plan,
                             const CollectiveScope& scope, Progress& progress, Clock& clock,
                             bool bar = true) {
  const absl::Time start = clock.Now();
  std::vector<RankBlock> blocks;
  v1::CollectiveSweep sweep = NewSweep(nodes, plan, scope, blocks);
  const ScopeJobs jobs = BuildScopeJobs(nodes, plan, scope, blocks, sweep.ranks());
  if (!jobs.errors.empty()) {
    sweep.set_ok(false);
    sweep.set_error(jobs.errors.front());
    for (auto& error : jobs.errors) sweep.add_rank_errors(error);
    sweep.set_duration_ms(absl::ToInt64Milliseconds(clock.Now() - start));
    return sweep;
  }

  const std::string label = SweepName(sweep);
  AnnounceScope(plan, label, sweep, jobs.specs[0], progress);
  ScopeRunSettings settings;
  settings.job_name = absl::StrCat("collectives/", scope.name, "/", scope.operation);
  settings.job_timeout = plan.collectives.timeout;
  settings.call_timeout = plan.agents.call_timeout;
  settings.clock = &clock;
  const ScopeRunResult run =
      RunJobsWithProgress(jobs, settings, label, CountSizes(plan.collectives.sizes), progress, bar);
  RecordRun(run, sweep);
  sweep.set_duration_ms(absl::ToInt64Milliseconds(clock.Now() - start));
  return sweep;
}

// Records the floor the sweep is judged against and what its rails carry.
void SetFloor(const plan::Plan& plan, v1::CollectiveSweep& sweep) {
  const BusbwFloor floor = SweepFloor(plan, sweep);
  if (sweep.nodes_size() >= 2) {
    sweep.set_min_busbw_gbytes(floor.gbytes);
    sweep.set_floor_basis(floor.basis);
  }
  sweep.set_fabric_gbytes(floor.fabric_gbytes);
}

// On a resumed run, takes over the sweeps the journal holds, each into its
// scope's slot of `sweeps`; returns which scopes were taken.
std::vector<bool> TakeJournaledSweeps(const std::vector<NodeState>& nodes,
                                      const std::vector<CollectiveScope>& scopes,
                                      PhaseJournal* journal, Progress& progress,
                                      std::vector<std::optional<v1::CollectiveSweep>>& sweeps) {
  std::vector<bool> taken(scopes.size(), false);
  if (journal == nullptr || !journal->resuming()) return taken;
  for (size_t i = 0; i < scopes.size(); ++i) {
    std::vector<std::string> names;
    for (size_t index : scopes[i].nodes) names.push_back(nodes[index].node.name);
    sweeps[i] = journal->TakeSweep(scopes[i].name, names, scopes[i].operation);
    if (!sweeps[i]) continue;
    taken[i] = true;
    progress.Line("collectives",
                  absl::StrCat(scopes[i].name, " ", scopes[i].operation, " on ",
                               absl::StrJoin(names, ", "), ": taken over from the journal"));
  }
  return taken;
}

// Runs the scopes of one kind together (the 1-node sweeps, one per node,
// share nothing) or one after the other. A scope left out because the run
// is stopping stays nullopt. Each sweep goes to the journal as it ends
// (once the stop is requested it may be cut short: not then); on a resumed
// run the ones the journal holds are taken over instead.
std::vector<std::optional<v1::CollectiveSweep>> RunScopes(
    std::vector<NodeState>& nodes, const plan::Plan& plan,
    const std::vector<CollectiveScope>& scopes, Progress& progress, Clock& clock,
    const RunStop* stop, PhaseJournal* journal) {
  auto stopping = [stop] { return stop != nullptr && stop->requested(); };
  std::vector<std::optional<v1::CollectiveSweep>> sweeps(scopes.size());
  const std::vector<bool> taken = TakeJournaledSweeps(nodes, scopes, journal, progress, sweeps);
  auto sweep = [&](size_t i, bool bar) {
    sweeps[i] = RunScope(nodes, plan, scopes[i], progress, clock, bar);
    if (journal != nullptr && !stopping()) journal->RecordSweep(*sweeps[i]);
  };
  // The 1-node sweeps of one operation run together, one per node; the
  // operations one after another (two on one node would share its links).
  std::map<std::string, std::vector<size_t>> one_node;
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (scopes[i].name == "1-node" && !taken[i]) one_node[scopes[i].operation].push_back(i);
  }
  auto together = [&](const CollectiveScope& scope) {
    return scope.name == "1-node" && one_node[scope.operation].size() > 1;
  };
  for (const auto& [operation, indexes] : one_node) {
    if (indexes.size() <= 1 || stopping()) continue;
    progress.Line("collectives", absl::StrCat("1-node ", operation, " sweeps on ", indexes.size(),
                                              " nodes at once (each runs on its own node only)"));
    std::vector<std::thread> threads;
    threads.reserve(indexes.size());
    for (size_t i : indexes) threads.emplace_back([&, i] { sweep(i, false); });
    for (auto& thread : threads) thread.join();
  }
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (taken[i] || together(scopes[i])) continue;
    if (stopping()) break;
    sweep(i, true);
  }
  return sweeps;
}

void PrintSweep(const v1::CollectiveSweep& sweep, Progress& progress) {
  // The table of an operation other than all_reduce starts with its title already.
  const bool titled = sweep.table().rfind("# Collective test starting", 0) == 0;
  progress.Block(
      absl::StrCat(titled ? "" : sweep::NcclTestsTitle(OperationOf(sweep)), "# clustercert ",
                   OperationOf(sweep), " ", sweep.scope(), ": ", sweep.ranks(), " rank(s) on ",
                   absl::StrJoin(sweep.nodes(), ", "), ", ", sweep.backend(),
                   sweep.transport().empty() ? "" : " ", sweep.transport(), "\n", sweep.table(),
                   absl::StrFormat("# large-message busbw: %.4g GB/s (best from %d B up)\n",
                                   sweep.large_busbw_gbytes(), sweep.large_from_bytes()),
                   sweep.ok() ? "" : absl::StrCat("# not complete: ", sweep.error(), "\n")));
}

// A partial re-certification: the scopes without a re-measured node keep
// the baseline's sweep, which is returned (marked carried) and taken out of
// `scopes`.
std::vector<v1::CollectiveSweep> CarryBaselineSweeps(const std::vector<NodeState>& nodes,
                                                     const RerunScope& rerun,
                                                     std::vector<CollectiveScope>& scopes,
                                                     Progress& progress) {
  std::vector<v1::CollectiveSweep> carried;
  std::vector<CollectiveScope> measured;
  for (auto& scope : scopes) {
    bool touches = false;
    for (size_t index : scope.nodes) touches = touches || rerun.Measures(nodes[index].node.name);
    const v1::CollectiveSweep* old = nullptr;
    if (rerun.baseline != nullptr) {
      for (const auto& sweep : rerun.baseline->collectives()) {
        const bool same_nodes =
            scope.name != "1-node" ||
            (sweep.nodes_size() == 1 && sweep.nodes(0) == nodes[scope.nodes[0]].node.name);
        if (sweep.scope() == scope.name && same_nodes && OperationOf(sweep) == scope.operation) {
          old = &sweep;
        }
      }
    }
    if (touches || old == nullptr) {
      measured.push_back(std::move(scope));
      continue;
    }
    v1::CollectiveSweep sweep = *old;
    *sweep.mutable_carried() = rerun.carried;
    progress.Line("collectives", absl::StrCat(scope.name, " ", scope.operation,
                                              ": carried over from the baseline (",
                                              rerun.carried.from_started_at(), ")"));
    carried.push_back(std::move(sweep));
  }
  scopes = std::move(measured);
  return carried;
}

// The external launcher: the agents take no part. One mpirun per scope and
// operation over the nodes that answered (the scopes the agents would run),
// one after another; on a resumed run the sweeps the journal holds instead,
// and each completed launch goes to the journal.
CollectivesOutcome RunThroughMpirun(const std::vector<NodeState>& nodes, const plan::Plan& plan,
                                    const std::vector<size_t>& reachable, Progress& progress,
                                    const RerunScope* rerun, const RunStop* stop,
                                    PhaseJournal* journal) {
  auto stopping = [stop] { return stop != nullptr && stop->requested(); };
  CollectivesOutcome outcome;
  ScopeChoice choice =
      ChooseScopes(plan.collectives.scopes, reachable, plan.collectives.one_node_every_node);
  outcome.skipped = choice.skipped;
  for (const std::string& skipped : choice.skipped) {
    progress.Line("collectives", "skipped " + skipped);
  }
  choice.scopes = ScopesPerOperation(choice.scopes, plan.collectives.operations);
  std::vector<v1::CollectiveSweep> carried;
  if (rerun != nullptr) carried = CarryBaselineSweeps(nodes, *rerun, choice.scopes, progress);
  for (const CollectiveScope& scope : choice.scopes) {
    if (stopping()) {
      outcome.skipped.push_back(
          absl::StrCat(scope.name, " ", scope.operation, ": not run: the run was interrupted"));
      continue;
    }
    const v1::CollectiveSweep frame = MpirunSweepFrame(plan, nodes, scope);
    std::optional<v1::CollectiveSweep> taken;
    if (journal != nullptr && journal->resuming()) {
      taken = journal->TakeSweep(frame.scope(), {frame.nodes().begin(), frame.nodes().end()},
                                 scope.operation);
    }
    if (taken) {
      progress.Line("collectives", absl::StrCat(scope.name, " ", scope.operation, " (mpirun) on ",
                                                absl::StrJoin(frame.nodes(), ", "),
                                                ": taken over from the journal"));
    } else {
      MpirunSweepResult external = RunMpirunSweep(plan, nodes, scope);
      if (!external.not_run.empty()) {
        outcome.not_run = external.not_run;
        return outcome;
      }
      if (journal != nullptr && !stopping()) journal->RecordSweep(external.sweep);
      taken = std::move(external.sweep);
    }
    PrintSweep(*taken, progress);
    SetFloor(plan, *taken);
    outcome.sweeps.push_back(std::move(*taken));
  }
  for (auto& sweep : carried) outcome.sweeps.push_back(std::move(sweep));
  outcome.checks = JudgeSweeps(plan, outcome.sweeps);
  return outcome;
}

// Why the nccl backend cannot run on the reachable nodes, or "" when it can.
std::string NcclNotRunnable(const std::vector<NodeState>& nodes, const plan::Plan& plan,
                            const std::vector<size_t>& reachable) {
  std::vector<std::string> missing;
  for (size_t index : reachable) {
    std::string why =
        NcclUnavailable(nodes[index], RanksOnNode(plan.collectives, nodes[index].node));
    if (!why.empty()) missing.push_back(why);
  }
  if (missing.empty()) return "";
  return absl::StrCat("skipped: ", absl::StrJoin(missing, "; "),
                      "; the nccl backend needs one GPU per rank (use backend: "
                      "gloo on hosts without GPUs)");
}

// Prints and records each swept scope; a scope the stop left out is skipped.
void RecordSweeps(std::vector<std::optional<v1::CollectiveSweep>>& swept,
                  const std::vector<CollectiveScope>& scopes, const std::vector<NodeState>& nodes,
                  const plan::Plan& plan, const RunStop* stop, Progress& progress,
                  CollectivesOutcome& outcome) {
  for (size_t i = 0; i < swept.size(); ++i) {
    if (!swept[i]) {
      const std::optional<StopRequest> request = stop->request();
      outcome.skipped.push_back(absl::StrCat(scopes[i].name,
                                             ": not run: the run was interrupted by ",
                                             request ? request->signal : "a signal"));
      continue;
    }
    v1::CollectiveSweep& sweep = *swept[i];
    PrintSweep(sweep, progress);
    if (plan.collectives.backend == plan::CollectiveBackend::kGloo) {
      sweep.set_expected_transport(GlooTransportFor(plan, nodes[scopes[i].nodes.front()]));
    }
    SetFloor(plan, sweep);
    outcome.sweeps.push_back(std::move(sweep));
  }
}

}  // namespace

CollectivesOutcome RunCollectivesPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                       Progress& progress, Clock& clock, const RerunScope* rerun,
                                       const RunStop* stop, PhaseJournal* journal) {
  CollectivesOutcome outcome;
  std::vector<size_t> reachable;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].reachable && nodes[i].inventory) reachable.push_back(i);
  }
  if (plan.collectives.launcher == plan::CollectiveLauncher::kMpirun) {
    return RunThroughMpirun(nodes, plan, reachable, progress, rerun, stop, journal);
  }
  if (plan.collectives.backend == plan::CollectiveBackend::kNccl) {
    outcome.not_run = NcclNotRunnable(nodes, plan, reachable);
    if (!outcome.not_run.empty()) return outcome;
  }

  ScopeChoice choice =
      ChooseScopes(plan.collectives.scopes, reachable, plan.collectives.one_node_every_node);
  outcome.skipped = choice.skipped;
  choice.scopes = ScopesPerOperation(choice.scopes, plan.collectives.operations);
  std::vector<v1::CollectiveSweep> carried;
  if (rerun != nullptr) carried = CarryBaselineSweeps(nodes, *rerun, choice.scopes, progress);
  for (const std::string& skipped : choice.skipped) {
    progress.Line("collectives", "skipped " + skipped);
  }
  std::vector<std::optional<v1::CollectiveSweep>> swept =
      RunScopes(nodes, plan, choice.scopes, progress, clock, stop, journal);
  RecordSweeps(swept, choice.scopes, nodes, plan, stop, progress, outcome);
  for (auto& sweep : carried) outcome.sweeps.push_back(std::move(sweep));
  outcome.checks = JudgeSweeps(plan, outcome.sweeps);
  return outcome;
}

}  // namespace clustercert::controller
