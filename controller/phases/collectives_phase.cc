#include "controller/phases/collectives_phase.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "controller/collectives/agent_collective_run.h"
#include "controller/collectives/collective_job_spec.h"
#include "controller/collectives/collective_scopes.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/collectives/mpirun_sweep.h"
#include "controller/collectives/nccl_transport_record.h"
#include "controller/collectives/sweep_merge.h"

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

// The gloo transport the ranks reported ("transport tcp 10.0.0.1"), when
// every rank reported the same one.
std::string ReportedGlooTransport(const std::vector<std::string>& notes) {
  std::string seen;
  for (const std::string& note : notes) {
    const size_t at = note.find(": transport ");
    if (at == std::string::npos) continue;
    std::string rest = note.substr(at + 12);
    std::string name = rest.substr(0, rest.find(' '));
    if (seen.empty()) {
      seen = name;
    } else if (seen != name) {
      return "mixed";
    }
  }
  return seen;
}

v1::CollectiveSweep RunScope(std::vector<NodeState>& nodes, const plan::Plan& plan,
                             const CollectiveScope& scope, Progress& progress) {
  const absl::Time start = absl::Now();
  v1::CollectiveSweep sweep;
  sweep.set_scope(scope.name);
  sweep.set_backend(plan.collectives.backend == plan::CollectiveBackend::kNccl ? "nccl" : "gloo");
  sweep.set_launcher("agents");
  int world = 0;
  std::vector<RankBlock> blocks;
  for (size_t index : scope.nodes) {
    const int count = RanksOnNode(plan.collectives, nodes[index].node);
    blocks.push_back({world, count});
    world += count;
    sweep.add_nodes(nodes[index].node.name);
  }
  sweep.set_ranks(world);

  std::vector<NodeState*> members;
  std::vector<v1::CollectiveJobSpec> specs;
  std::vector<std::string> spec_errors;
  for (size_t k = 0; k < scope.nodes.size(); ++k) {
    NodeState& node = nodes[scope.nodes[k]];
    absl::StatusOr<v1::CollectiveJobSpec> spec = BuildJobSpec(plan, node, blocks[k], world);
    if (!spec.ok()) {
      spec_errors.emplace_back(spec.status().message());
      continue;
    }
    members.push_back(&node);
    specs.push_back(*std::move(spec));
  }
  if (!spec_errors.empty()) {
    sweep.set_ok(false);
    sweep.set_error(spec_errors.front());
    for (auto& error : spec_errors) sweep.add_rank_errors(error);
    sweep.set_duration_ms(absl::ToInt64Milliseconds(absl::Now() - start));
    return sweep;
  }

  progress.Line("collectives",
                absl::StrCat(scope.name, ": ", world, " rank(s) on ",
                             absl::StrJoin(sweep.nodes(), ", "), ", ", sweep.backend(),
                             sweep.backend() == "gloo" ? absl::StrCat(" ", specs[0].transport()) : "",
                             ", sizes ", plan.collectives.sizes.min_bytes, "..",
                             plan.collectives.sizes.max_bytes, " B x", plan.collectives.sizes.factor));
  ScopeRunSettings settings;
  settings.job_name = absl::StrCat("collectives/", scope.name);
  settings.job_timeout = absl::Seconds(plan.collectives.timeout_s);
  settings.call_timeout = absl::Seconds(plan.agents.call_timeout_s);
  int sizes = 0;
  for (int64_t bytes = std::max<int64_t>(plan.collectives.sizes.min_bytes, 1);
       bytes <= plan.collectives.sizes.max_bytes && sizes < 64;
       bytes *= std::max<int64_t>(plan.collectives.sizes.factor, 2)) {
    ++sizes;
  }
  int done = 0;
  const std::string bar = absl::StrCat("collectives ", scope.name);
  progress.StartBar(bar, sizes, "sizes");
  ScopeRunResult run = RunScopeThroughAgents(members, specs, settings, [&](const RankRow& row) {
    if (row.rank != 0) return;
    progress.Advance(bar, std::min(++done, sizes), sizes, absl::StrCat(row.row.bytes, " B"));
    progress.Line("collectives",
                  absl::StrFormat("%s: %12d B  %9.2f us  busbw %.4g GB/s (rank 0)", scope.name,
                                  row.row.bytes, row.row.out_of_place.time_us,
                                  row.row.out_of_place.busbw_gbps));
  });
  progress.EndBar();
  sweep.set_ok(run.ok);
  sweep.set_error(run.error);
  for (auto& error : run.rank_errors) sweep.add_rank_errors(error);
  for (auto& note : run.notes) sweep.add_notes(note);
  SetSweepRows(MergeRankRows(run.rows, sweep.ranks()), sweep);
  if (sweep.backend() == "nccl") {
    for (const RankLog& log : run.logs) {
      AddTransportLog(log.lines, absl::StrCat(log.node, " rank ", log.rank),
                      *sweep.mutable_nccl_transport());
    }
    sweep.set_transport(NcclTransportName(sweep.nccl_transport()));
  } else {
    sweep.set_transport(ReportedGlooTransport(run.notes));
  }
  sweep.set_duration_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  return sweep;
}

void PrintSweep(const v1::CollectiveSweep& sweep, Progress& progress) {
  progress.Block(absl::StrCat("# clustercert allreduce ", sweep.scope(), ": ", sweep.ranks(),
                              " rank(s) on ", absl::StrJoin(sweep.nodes(), ", "), ", ",
                              sweep.backend(), sweep.transport().empty() ? "" : " ",
                              sweep.transport(), "\n", sweep.table(),
                              absl::StrFormat("# large-message busbw: %.4g GB/s (best from %d B up)\n",
                                              sweep.large_busbw_gbytes(),
                                              sweep.large_from_bytes()),
                              sweep.ok() ? "" : absl::StrCat("# not complete: ", sweep.error(), "\n")));
}


}  // namespace

CollectivesOutcome RunCollectivesPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                       Progress& progress, const RerunScope* rerun) {
  CollectivesOutcome outcome;
  std::vector<size_t> reachable;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].reachable && nodes[i].inventory) reachable.push_back(i);
  }

  if (plan.collectives.launcher == plan::CollectiveLauncher::kMpirun) {
    MpirunSweepResult external = RunMpirunSweep(plan);
    if (!external.not_run.empty()) {
      outcome.not_run = external.not_run;
      return outcome;
    }
    PrintSweep(external.sweep, progress);
    if (external.sweep.nodes_size() >= 2) {
      external.sweep.set_min_busbw_gbytes(plan.collectives.min_busbw_gbytes);
    }
    outcome.sweeps.push_back(std::move(external.sweep));
    outcome.checks = JudgeSweeps(plan, outcome.sweeps);
    return outcome;
  }

  if (plan.collectives.backend == plan::CollectiveBackend::kNccl) {
    std::vector<std::string> missing;
    for (size_t index : reachable) {
      std::string why = NcclUnavailable(nodes[index], RanksOnNode(plan.collectives, nodes[index].node));
      if (!why.empty()) missing.push_back(why);
    }
    if (!missing.empty()) {
      outcome.not_run = absl::StrCat("skipped: ", absl::StrJoin(missing, "; "),
                                     "; the nccl backend needs one GPU per rank (use backend: "
                                     "gloo on hosts without GPUs)");
      return outcome;
    }
  }

  ScopeChoice choice = ChooseScopes(plan.collectives.scopes, reachable);
  outcome.skipped = choice.skipped;
  std::vector<v1::CollectiveSweep> carried;
  if (rerun != nullptr) {
    // Scopes without a re-measured node keep the baseline's sweep.
    std::vector<CollectiveScope> measured;
    for (auto& scope : choice.scopes) {
      bool touches = false;
      for (size_t index : scope.nodes) touches = touches || rerun->Measures(nodes[index].node.name);
      const v1::CollectiveSweep* old = nullptr;
      if (rerun->baseline != nullptr) {
        for (const auto& sweep : rerun->baseline->collectives()) {
          if (sweep.scope() == scope.name) old = &sweep;
        }
      }
      if (touches || old == nullptr) {
        measured.push_back(std::move(scope));
      } else {
        v1::CollectiveSweep sweep = *old;
        *sweep.mutable_carried() = rerun->carried;
        progress.Line("collectives", absl::StrCat(scope.name, ": carried over from the baseline (",
                                                  rerun->carried.from_started_at(), ")"));
        carried.push_back(std::move(sweep));
      }
    }
    choice.scopes = std::move(measured);
  }
  for (const std::string& skipped : choice.skipped) progress.Line("collectives", "skipped " + skipped);
  for (const CollectiveScope& scope : choice.scopes) {
    v1::CollectiveSweep sweep = RunScope(nodes, plan, scope, progress);
    PrintSweep(sweep, progress);
    if (plan.collectives.backend == plan::CollectiveBackend::kGloo) {
      sweep.set_expected_transport(GlooTransportFor(plan, nodes[scope.nodes.front()]));
    }
    if (sweep.nodes_size() >= 2) sweep.set_min_busbw_gbytes(plan.collectives.min_busbw_gbytes);
    outcome.sweeps.push_back(std::move(sweep));
  }
  for (auto& sweep : carried) outcome.sweeps.push_back(std::move(sweep));
  outcome.checks = JudgeSweeps(plan, outcome.sweeps);
  return outcome;
}

}  // namespace clustercert::controller
