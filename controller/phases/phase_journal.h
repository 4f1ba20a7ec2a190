#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/journal/run_journal.h"
#include "controller/phases/progress.h"

namespace clustercert::controller {

// The name a resumed run matches a journaled cell by: PairKey plus the GPUs
// of a cuda cell ("node1->node2 mlx5_0 write_bw cuda:3 gpus cuda:3/cuda:1").
std::string ResumeKey(const v1::PairResult& pair);

// The run's journal as the phases see it. Each pair cell, collective sweep
// and uplink run is appended as it completes (RecordPair, RecordSweep,
// RecordUplinkRun); on a resumed run, the ones the killed run completed are
// handed out instead of being measured again (TakePair, TakeSweep,
// TakeUplinkRun), marked carried with the journal as their source. A cell that was never measured
// (control_plane: its agent did not answer or was busy) is not handed out: it had not completed.
// Taken results are not appended again: the journal holds them already, so a second kill and resume
// finds them too. Thread-safe (the 1-node sweeps end on threads of their own).
class PhaseJournal {
 public:
  // `writer` may be null (nothing appended); `resumed` is null on a fresh
  // run. `carried` stamps every result taken over. A failed append is said
  // once on `progress`; the run goes on.
  PhaseJournal(journal::JournalWriter* writer, const journal::JournalContents* resumed,
               v1::Carried carried, Progress& progress);

  void RecordPair(const v1::PairResult& pair);
  void RecordSweep(const v1::CollectiveSweep& sweep);
  void RecordUplinkRun(const v1::UplinkThroughput& run);

  // The journaled cell named `key` (ResumeKey), marked carried; nullopt when
  // the killed run did not complete it, or it was handed out already.
  std::optional<v1::PairResult> TakePair(const std::string& key);
  // The journaled sweep of `operation` in `scope` over exactly `nodes`,
  // marked carried (a sweep without an operation is all_reduce's).
  std::optional<v1::CollectiveSweep> TakeSweep(const std::string& scope,
                                               const std::vector<std::string>& nodes,
                                               const std::string& operation = "all_reduce");
  // The journaled run of `node` to `target` with `flows` flows, marked
  // carried; nullopt when the killed run did not complete it or it failed
  // (a failure is measured again: it may have been the control plane's).
  std::optional<v1::UplinkThroughput> TakeUplinkRun(const std::string& node,
                                                    const std::string& target, int flows);

  bool resuming() const { return resuming_; }
  // The certificate's `resumed`: the journal, when its run started, what was
  // handed out and how many lines could not be read.
  v1::Resumed Taken() const;

 private:
  void Append(const v1::JournalRecord& record);

  journal::JournalWriter* const writer_;
  const bool resuming_;
  const v1::Carried carried_;
  const int ignored_lines_;
  Progress& progress_;

  mutable std::mutex mutex_;
  std::map<std::string, v1::PairResult> pairs_;             // guarded by mutex_: not yet taken
  std::vector<std::optional<v1::CollectiveSweep>> sweeps_;  // guarded by mutex_
  // Not yet taken, by "node\ttarget\tflows"; guarded by mutex_.
  std::map<std::string, v1::UplinkThroughput> uplink_runs_;
  int pairs_taken_ = 0;        // guarded by mutex_
  int uplink_runs_taken_ = 0;  // guarded by mutex_
  int sweeps_taken_ = 0;       // guarded by mutex_
  bool warned_ = false;        // guarded by mutex_
};

}  // namespace clustercert::controller
