#include "controller/pairwise/incast/incast_phase.h"

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/pairwise/incast/incast_run.h"
#include "controller/pairwise/incast/incast_schedule.h"
#include "controller/pairwise/incast_verdict.h"
#include "controller/pairwise/phase/cell_plan.h"

namespace clustercert::controller {
namespace {

using pairwise::incast::IncastRound;

bool TouchesMeasured(const RerunScope& rerun, const std::string& receiver,
                     const std::vector<std::string>& senders) {
  if (rerun.Measures(receiver)) return true;
  for (const std::string& sender : senders) {
    if (rerun.Measures(sender)) return true;
  }
  return false;
}

std::vector<std::string> Names(const std::vector<NodeState>& nodes, const IncastRound& round) {
  std::vector<std::string> names;
  for (int sender : round.senders) names.push_back(nodes[static_cast<size_t>(sender)].node.name);
  return names;
}

std::vector<IncastJob> Jobs(const std::vector<IncastRound>& rounds, const CellPlanner& cells) {
  std::vector<IncastJob> jobs;
  for (const IncastRound& round : rounds) {
    IncastJob job;
    job.receiver = cells.SideOf(round.receiver, round.rail);
    for (int sender : round.senders) job.senders.push_back(cells.SideOf(sender, round.rail));
    // The receiver's port is the congestion point: its rate (or the plan's).
    job.line_rate_gbps = cells.LineRate(job.receiver, job.receiver);
    job.round = static_cast<int>(jobs.size()) + 1;
    job.rounds = static_cast<int>(rounds.size());
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// The baseline's rounds that touch no re-measured node, marked carried.
void CarryBaselineRounds(const plan::Plan& plan, const RerunScope* rerun, IncastOutcome& outcome) {
  if (rerun == nullptr || rerun->baseline == nullptr) return;
  for (const v1::IncastResult& old : rerun->baseline->incast()) {
    std::vector<std::string> senders;
    for (const auto& sender : old.senders()) senders.push_back(sender.node());
    if (TouchesMeasured(*rerun, old.receiver(), senders)) continue;
    v1::IncastResult carried = old;
    *carried.mutable_carried() = rerun->carried;
    for (auto& finding : pairwise::JudgeIncast(plan, carried)) {
      outcome.checks.push_back(std::move(finding));
    }
    outcome.rounds.push_back(std::move(carried));
  }
}

}  // namespace

IncastOutcome RunIncastPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                             Progress& progress, const RerunScope* rerun, const RunStop* stop) {
  IncastOutcome outcome;
  if (!plan.pairwise.incast.enabled) return outcome;
  const std::function<bool()> stopping = [stop] { return stop != nullptr && stop->requested(); };
  absl::StatusOr<std::vector<IncastRound>> scheduled = pairwise::incast::BuildIncastRounds(plan);
  if (!scheduled.ok()) {
    outcome.skipped = absl::StrCat("not run: ", scheduled.status().message());
  } else if (scheduled->empty()) {
    outcome.skipped =
        "not run: the plan has fewer than two nodes, so no receiver has a sender; add nodes or "
        "remove pairwise.incast";
  }
  if (!outcome.skipped.empty()) {
    progress.Line("pairwise", absl::StrCat("incast ", outcome.skipped));
    return outcome;
  }
  std::vector<IncastRound> rounds;
  for (IncastRound& round : *scheduled) {
    if (rerun == nullptr ||
        TouchesMeasured(*rerun, nodes[static_cast<size_t>(round.receiver)].node.name,
                        Names(nodes, round))) {
      rounds.push_back(std::move(round));
    }
  }
  if (stopping()) {
    outcome.skipped = "not run: the run was stopped before the incast rounds";
  } else if (!rounds.empty()) {
    const CellPlanner cells(plan, nodes);
    progress.Line("pairwise", absl::StrCat("incast: ", rounds.size(), " round(s), ",
                                           rounds.front().senders.size(),
                                           " sender(s) into each receiver at once"));
    IncastRoundsOutcome measured = RunIncastRounds(plan, progress, Jobs(rounds, cells), stopping);
    outcome.rounds = std::move(measured.rounds);
    outcome.checks = std::move(measured.checks);
  }
  CarryBaselineRounds(plan, rerun, outcome);
  return outcome;
}

}  // namespace clustercert::controller
