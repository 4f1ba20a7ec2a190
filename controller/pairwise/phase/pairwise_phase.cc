#include "controller/pairwise/phase/pairwise_phase.h"

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/checks/status_text.h"
#include "controller/pairwise/phase/cell_plan.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/pairwise/phase/pair_executor.h"
#include "controller/pairwise/phase/retest_plan.h"
#include "controller/phases/peer_broker.h"

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

// How long a cell waits for a busy device: on a resumed run, one lease and
// a little, so that an endpoint the killed controller left prepared (held
// by its lease, not by a call the agent could see cancelled) is waited out
// rather than turning the cell into a "not measured" one.
absl::Duration BusyWait(const PhaseJournal* journal) {
  return journal != nullptr && journal->resuming() ? kEndpointLease + absl::Seconds(2)
                                                   : absl::ZeroDuration();
}

// One chain per pair of the round, its cells on the pair's rail.
std::vector<CellChain> RoundChains(const pairwise::schedule::Round& round, const CellPlanner& cells,
                                   int round_number, const std::string& label,
                                   absl::Duration busy_wait) {
  std::vector<CellChain> chains;
  for (const pairwise::schedule::PairTest& test : round.tests) {
    CellJob job;
    job.client = cells.SideOf(test.client, test.rail);
    job.server = cells.SideOf(test.server, test.rail);
    job.line_rate_gbps = cells.LineRate(job.client, job.server);
    job.round = round_number;
    job.label = label;
    job.busy_wait = busy_wait;
    CellChain chain;
    for (TestItem& item : cells.Cells(test.client, test.server, test.rail)) {
      job.item = std::move(item);
      chain.push_back(job);
    }
    chains.push_back(std::move(chain));
  }
  return chains;
}

// A round's chains less the cells the journal holds, which are taken over
// (keyed by ResumeKey) instead of being measured again.
struct RoundWork {
  std::vector<CellChain> to_run;
  std::map<std::string, v1::PairResult> taken;
};

RoundWork TakeJournaled(const plan::Plan& plan, const std::vector<CellChain>& chains,
                        PhaseJournal* journal) {
  if (journal == nullptr || !journal->resuming()) return {chains, {}};
  RoundWork work;
  for (const CellChain& chain : chains) {
    CellChain rest;
    for (const CellJob& job : chain) {
      const std::string key = ResumeKey(CellIdentity(plan, job));
      if (auto pair = journal->TakePair(key)) {
        work.taken.emplace(key, *std::move(pair));
      } else {
        rest.push_back(job);
      }
    }
    if (!rest.empty()) work.to_run.push_back(std::move(rest));
  }
  return work;
}

// The round's cells in the schedule's order, taken over or measured now, so
// a resumed run lists them as an uninterrupted one does; a cell the stop
// left out is absent. Two cells of a round never share a key (one pair's
// cells differ in test, memory or GPU; a round holds a pair once).
void AppendInOrder(const plan::Plan& plan, const std::vector<CellChain>& chains, RoundWork& work,
                   std::vector<v1::PairResult> measured, std::vector<v1::PairResult>& pairs) {
  std::map<std::string, v1::PairResult> by_key;
  for (v1::PairResult& pair : measured) {
    const std::string key = ResumeKey(pair);
    by_key.emplace(key, std::move(pair));
  }
  for (const CellChain& chain : chains) {
    for (const CellJob& job : chain) {
      const std::string key = ResumeKey(CellIdentity(plan, job));
      for (auto* from : {&work.taken, &by_key}) {
        auto found = from->find(key);
        if (found == from->end()) continue;
        pairs.push_back(std::move(found->second));
        from->erase(found);
        break;
      }
    }
  }
  // Never drop a measurement, whatever its name.
  for (auto& [key, pair] : by_key) pairs.push_back(std::move(pair));
}

// Runs the rounds in order, the pairs of a round side by side, until done
// or stopped; appends the cells to `pairs`. Each round's cells are planned
// just before it runs, so a large cluster's matrix is never held as jobs.
// Each judged cell goes to the journal as it ends; on a resumed run the
// cells the journal holds are taken over and only the rest run.
void RunRounds(const std::vector<pairwise::schedule::Round>& rounds, const CellPlanner& cells,
               const plan::Plan& plan, Progress& progress, const std::function<bool()>& stopping,
               PhaseJournal* journal, std::vector<v1::PairResult>& pairs) {
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
    const std::vector<CellChain> chains =
        RoundChains(rounds[r], cells, static_cast<int>(r + 1), label, BusyWait(journal));
    RoundWork work = TakeJournaled(plan, chains, journal);
    const std::string round_name = absl::StrCat("round ", r + 1, "/", rounds.size());
    if (!work.to_run.empty()) {
      progress.Line("pairwise",
                    absl::StrCat(round_name, ": ", work.to_run.size(), " pair(s) at once"));
    }
    if (!work.taken.empty()) {
      finished_cells += static_cast<int>(work.taken.size());
      progress.Line("pairwise", absl::StrCat(round_name, ": ", work.taken.size(),
                                             " cell(s) taken over from the journal"));
      progress.Advance("pairwise", finished_cells, total_cells, "taken over");
    }
    auto cell_done = [&](const v1::PairResult& pair) {
      progress.Line("pairwise", label + CellLine(pair));
      progress.Advance("pairwise", ++finished_cells, total_cells,
                       absl::StrCat(pair.client(), "->", pair.server(), " ", pair.test()));
      // A cell the stop cut short is not a result to take over.
      if (journal != nullptr && !stopping()) journal->RecordPair(pair);
    };
    std::vector<v1::PairResult> measured;
    if (!work.to_run.empty()) {
      measured = RunCellChains(plan, progress, work.to_run, stopping, cell_done);
    }
    AppendInOrder(plan, chains, work, std::move(measured), pairs);
  }
  progress.EndBar();
}

// Runs the retests PlanRetests chose, one at a time (a partner may be in
// several), until done or stopped; appends them to `pairs`. Failing cells
// taken over from the journal count as if measured now, so a resumed run
// plans the same retests; those the journal holds are taken over too.
void RunRetests(const std::vector<NodeState>& nodes, const CellPlanner& cells,
                const plan::Plan& plan, Progress& progress, const std::function<bool()>& stopping,
                PhaseJournal* journal, std::vector<v1::PairResult>& pairs) {
  for (const PlannedRetest& retest : PlanRetests(nodes, cells.tcp(), pairs)) {
    if (stopping()) return;
    CellJob job;
    job.client = cells.SideOf(retest.node, retest.rail);
    job.server = cells.SideOf(retest.partner, retest.rail);
    job.line_rate_gbps = cells.LineRate(job.client, job.server);
    job.item = retest.item;
    job.label = "retest ";
    job.retest_of = retest.retest_of;
    job.busy_wait = BusyWait(journal);
    if (journal != nullptr && journal->resuming()) {
      if (auto taken = journal->TakePair(ResumeKey(CellIdentity(plan, job)))) {
        progress.Line("pairwise", absl::StrCat("retest ", CellLine(*taken), " (from the journal)"));
        pairs.push_back(*std::move(taken));
        continue;
      }
    }
    auto cell_done = [&](const v1::PairResult& pair) {
      progress.Line("pairwise", absl::StrCat("retest ", CellLine(pair)));
      if (journal != nullptr && !stopping()) journal->RecordPair(pair);
    };
    for (v1::PairResult& pair : RunCellChains(plan, progress, {{job}}, stopping, cell_done)) {
      pairs.push_back(std::move(pair));
    }
  }
}

}  // namespace

PairwiseOutcome RunPairwisePhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                 const std::vector<v1::Finding>& inventory_checks,
                                 Progress& progress, const RerunScope* rerun, const RunStop* stop,
                                 PhaseJournal* journal) {
  PairwiseOutcome outcome;
  const std::function<bool()> stopping = [stop] { return stop != nullptr && stop->requested(); };
  auto rounds = ScheduleRounds(plan, nodes, rerun);
  if (!rounds.ok()) {
    progress.Line("pairwise", absl::StrCat("cannot schedule: ", rounds.status().message()));
    return outcome;
  }
  outcome.rounds = static_cast<int>(rounds->size());
  const CellPlanner cells(plan, nodes);
  RunRounds(*rounds, cells, plan, progress, stopping, journal, outcome.pairs);
  RunRetests(nodes, cells, plan, progress, stopping, journal, outcome.pairs);
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
