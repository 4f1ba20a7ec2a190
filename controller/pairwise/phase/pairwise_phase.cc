#include "controller/pairwise/phase/pairwise_phase.h"

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/checks/status_text.h"
#include "controller/pairwise/phase/cell_plan.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/pairwise/phase/pair_executor.h"
#include "controller/pairwise/phase/retest_plan.h"

namespace clustercert::controller {
namespace {

std::string CellLine(const v1::PairResult& pair) {
  std::string where = absl::StrCat(pair.client(), " -> ", pair.server());
  if (!pair.rail().empty()) absl::StrAppend(&where, " ", pair.rail());
  absl::StrAppend(&where, " ", pair.test(), " ", pair.memory());
  if (!pair.ok()) return absl::StrCat(where, ": error: ", pair.error());
  return absl::StrCat(where, ": ", absl::StrFormat("%.2f", pair.value()), " ", pair.unit(), " (",
                      checks::StatusText(pair.verdict().status()), ")");
}

// One chain per pair of the round, its cells on the pair's rail.
std::vector<CellChain> RoundChains(const pairwise::schedule::Round& round, const CellPlanner& cells,
                                   int round_number, const std::string& label) {
  std::vector<CellChain> chains;
  for (const pairwise::schedule::PairTest& test : round.tests) {
    CellJob job;
    job.client = cells.SideOf(test.client, test.rail);
    job.server = cells.SideOf(test.server, test.rail);
    job.line_rate_gbps = cells.LineRate(job.client, job.server);
    job.round = round_number;
    job.label = label;
    CellChain chain;
    for (TestItem& item : cells.Cells(test.client, test.server, test.rail)) {
      job.item = std::move(item);
      chain.push_back(job);
    }
    chains.push_back(std::move(chain));
  }
  return chains;
}

// Runs the rounds in order, the pairs of a round side by side, until done
// or stopped; appends the cells to `pairs`. Each round's cells are planned
// just before it runs, so a large cluster's matrix is never held as jobs.
void RunRounds(const std::vector<pairwise::schedule::Round>& rounds, const CellPlanner& cells,
               const plan::Plan& plan, Progress& progress, const std::function<bool()>& stopping,
               std::vector<v1::PairResult>& pairs) {
  int total_cells = 0;
  for (const auto& round : rounds) {
    for (const auto& test : round.tests) {
      total_cells += static_cast<int>(cells.Cells(test.client, test.server, test.rail).size());
    }
  }
  int finished_cells = 0;
  if (total_cells > 0) progress.StartBar("pairwise", total_cells, "cells");
  for (size_t r = 0; r < rounds.size() && !stopping(); ++r) {
    const std::string label = absl::StrCat("round ", r + 1, "/", rounds.size(), " ");
    progress.Line("pairwise", absl::StrCat("round ", r + 1, "/", rounds.size(), ": ",
                                           rounds[r].tests.size(), " pair(s) at once"));
    auto cell_done = [&](const v1::PairResult& pair) {
      progress.Line("pairwise", label + CellLine(pair));
      progress.Advance("pairwise", ++finished_cells, total_cells,
                       absl::StrCat(pair.client(), "->", pair.server(), " ", pair.test()));
    };
    const std::vector<CellChain> chains =
        RoundChains(rounds[r], cells, static_cast<int>(r + 1), label);
    for (v1::PairResult& pair : RunCellChains(plan, progress, chains, stopping, cell_done)) {
      pairs.push_back(std::move(pair));
    }
  }
  progress.EndBar();
}

// Runs the retests PlanRetests chose, one at a time (a partner may be in
// several), until done or stopped; appends them to `pairs`.
void RunRetests(const std::vector<NodeState>& nodes, const CellPlanner& cells,
                const plan::Plan& plan, Progress& progress, const std::function<bool()>& stopping,
                std::vector<v1::PairResult>& pairs) {
  for (const PlannedRetest& retest : PlanRetests(nodes, cells.tcp(), pairs)) {
    if (stopping()) return;
    CellJob job;
    job.client = cells.SideOf(retest.node, retest.rail);
    job.server = cells.SideOf(retest.partner, retest.rail);
    job.line_rate_gbps = cells.LineRate(job.client, job.server);
    job.item = retest.item;
    job.label = "retest ";
    job.retest_of = retest.retest_of;
    auto cell_done = [&](const v1::PairResult& pair) {
      progress.Line("pairwise", absl::StrCat("retest ", CellLine(pair)));
    };
    for (v1::PairResult& pair : RunCellChains(plan, progress, {{job}}, stopping, cell_done)) {
      pairs.push_back(std::move(pair));
    }
  }
}

}  // namespace

PairwiseOutcome RunPairwisePhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                 const std::vector<v1::Finding>& inventory_checks,
                                 Progress& progress, const RerunScope* rerun, const RunStop* stop) {
  PairwiseOutcome outcome;
  const std::function<bool()> stopping = [stop] { return stop != nullptr && stop->requested(); };
  auto rounds = ScheduleRounds(plan, nodes, rerun);
  if (!rounds.ok()) {
    progress.Line("pairwise", absl::StrCat("cannot schedule: ", rounds.status().message()));
    return outcome;
  }
  outcome.rounds = static_cast<int>(rounds->size());
  const CellPlanner cells(plan, nodes);
  RunRounds(*rounds, cells, plan, progress, stopping, outcome.pairs);
  RunRetests(nodes, cells, plan, progress, stopping, outcome.pairs);
  CarryBaselineCells(rerun, outcome.pairs);

  MatrixJudgement judgement = JudgeMatrix(plan, outcome.pairs, inventory_checks);
  outcome.checks = std::move(judgement.checks);
  outcome.failing = judgement.failing;
  for (auto& suspect : judgement.suspects) {
    progress.Line("pairwise", absl::StrCat("suspect: ", suspect.node(),
                                           suspect.rail().empty() ? "" : "/" + suspect.rail(), ": ",
                                           suspect.reason()));
    outcome.suspects.push_back(std::move(suspect));
  }
  return outcome;
}

}  // namespace clustercert::controller
