#include "controller/phases/phase_journal.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/certificate/result_keys.h"

namespace clustercert::controller {
namespace {

std::string UplinkRunKey(const std::string& node, const std::string& target, int flows) {
  return absl::StrCat(node, "\t", target, "\t", flows);
}

}  // namespace

std::string ResumeKey(const v1::PairResult& pair) {
  std::string key = PairKey(pair);
  if (!pair.gpu().empty() || !pair.server_gpu().empty()) {
    absl::StrAppend(&key, " gpus ", pair.gpu(), "/", pair.server_gpu());
  }
  return key;
}

PhaseJournal::PhaseJournal(journal::JournalWriter* writer, const journal::JournalContents* resumed,
                           v1::Carried carried, Progress& progress)
    : writer_(writer),
      resuming_(resumed != nullptr),
      carried_(std::move(carried)),
      ignored_lines_(resumed != nullptr ? resumed->ignored_lines : 0),
      progress_(progress) {
  if (resumed == nullptr) return;
  for (const v1::PairResult& pair : resumed->pairs) {
    // Not measured, so not completed: such a cell runs again.
    if (pair.control_plane()) continue;
    pairs_.emplace(ResumeKey(pair), pair);  // the first record of a cell counts
  }
  for (const v1::CollectiveSweep& sweep : resumed->sweeps) sweeps_.emplace_back(sweep);
  for (const v1::UplinkThroughput& run : resumed->uplink_runs) {
    // A failed run is measured again: its error may be the control plane's
    // (an agent that did not answer in time), which says nothing of the
    // uplink, and a run that fails again fails with today's reason.
    if (!run.ok()) continue;
    uplink_runs_.emplace(UplinkRunKey(run.node(), run.target(), run.flows()), run);
  }
}

void PhaseJournal::RecordPair(const v1::PairResult& pair) {
  v1::JournalRecord record;
  *record.mutable_pair() = pair;
  Append(record);
}

void PhaseJournal::RecordSweep(const v1::CollectiveSweep& sweep) {
  v1::JournalRecord record;
  *record.mutable_sweep() = sweep;
  Append(record);
}

void PhaseJournal::RecordUplinkRun(const v1::UplinkThroughput& run) {
  v1::JournalRecord record;
  *record.mutable_uplink_run() = run;
  Append(record);
}

void PhaseJournal::Append(const v1::JournalRecord& record) {
  if (writer_ == nullptr) return;
  const absl::Status written = writer_->Append(record);
  if (written.ok()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (warned_) return;
  warned_ = true;
  progress_.Line("journal", std::string(written.message()));
}

std::optional<v1::PairResult> PhaseJournal::TakePair(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = pairs_.find(key);
  if (found == pairs_.end()) return std::nullopt;
  v1::PairResult pair = std::move(found->second);
  pairs_.erase(found);
  *pair.mutable_carried() = carried_;
  ++pairs_taken_;
  return pair;
}

std::optional<v1::CollectiveSweep> PhaseJournal::TakeSweep(const std::string& scope,
                                                           const std::vector<std::string>& nodes,
                                                           const std::string& operation) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& held : sweeps_) {
    if (!held || held->scope() != scope) continue;
    const std::string held_operation = held->operation().empty() ? "all_reduce" : held->operation();
    if (held_operation != operation) continue;
    if (std::vector<std::string>(held->nodes().begin(), held->nodes().end()) != nodes) continue;
    v1::CollectiveSweep sweep = std::move(*held);
    held.reset();
    *sweep.mutable_carried() = carried_;
    ++sweeps_taken_;
    return sweep;
  }
  return std::nullopt;
}

std::optional<v1::UplinkThroughput> PhaseJournal::TakeUplinkRun(const std::string& node,
                                                                const std::string& target,
                                                                int flows) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = uplink_runs_.find(UplinkRunKey(node, target, flows));
  if (found == uplink_runs_.end()) return std::nullopt;
  v1::UplinkThroughput run = std::move(found->second);
  uplink_runs_.erase(found);
  *run.mutable_carried() = carried_;
  ++uplink_runs_taken_;
  return run;
}

v1::Resumed PhaseJournal::Taken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  v1::Resumed resumed;
  resumed.set_journal(carried_.from_journal());
  resumed.set_from_started_at(carried_.from_started_at());
  resumed.set_ignored_lines(ignored_lines_);
  resumed.set_pairs(pairs_taken_);
  resumed.set_sweeps(sweeps_taken_);
  resumed.set_uplink_runs(uplink_runs_taken_);
  return resumed;
}

}  // namespace clustercert::controller
