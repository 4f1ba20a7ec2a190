#pragma once

// CollectiveRegistry holds this node's collective jobs by id ("coll-1", ...),
// each under a lease the controller renews by polling. The controller drives
// the run (it relays store keys between nodes and collects rows); if it
// vanishes, nothing it started may outlive it: a job not polled for its lease
// is cancelled (its workers are killed) and removed, whether it still ran or
// had finished. One job runs at a time: a Start while another job's workers
// still run is refused. A finished job stays until Stop or its lease runs
// out, so the Poll that reports finished=true can be retried.
//
// Expiry is checked on every call and by Sweep(), which the agent calls on a
// timer or hands to StartSweeper(). Time comes from the injected clock. Jobs
// are destroyed (which joins their loop and reaps their workers, both quick
// after SIGKILL) outside the registry's lock.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/collective/collective_job.h"

namespace clustercert::agent::collective {

// What one Poll hands the controller.
struct CollectivePoll {
  std::vector<StoreEntry> published;  // keys this node's workers set since the last Poll
  std::vector<RowReport> rows;        // rows reported since the last Poll
  std::vector<RankReport> ranks;      // every local rank, as it stands
  bool finished = false;              // every worker exited; nothing more will come
};

class CollectiveRegistry {
 public:
  explicit CollectiveRegistry(std::function<absl::Time()> now);
  ~CollectiveRegistry();  // stops the sweeper, then cancels and destroys every job
  CollectiveRegistry(const CollectiveRegistry&) = delete;
  CollectiveRegistry& operator=(const CollectiveRegistry&) = delete;

  // Starts the job's workers; returns its id. `lease` is how long the job
  // lives without a Poll. Refused (FailedPrecondition) while another job's
  // workers run; errors from CollectiveJob::Start pass through.
  absl::StatusOr<std::string> Start(JobLaunch launch, absl::Duration lease);
  // Renews the lease, delivers keys from other nodes, and returns what the
  // job reported since the last Poll. `finished` is read before the rest, so
  // the Poll that says finished=true carries the last rows.
  absl::StatusOr<CollectivePoll> Poll(const std::string& job_id,
                                      const std::vector<StoreEntry>& deliveries);
  // Cancels the job (killing what still runs) and removes it.
  absl::Status Stop(const std::string& job_id);

  // Cancels and removes every job whose lease has run out; returns how many.
  int Sweep();
  // Runs Sweep every `period` on a thread of its own until destroyed. Call once.
  void StartSweeper(absl::Duration period);

  size_t jobs() const;

 private:
  struct Entry {
    std::unique_ptr<CollectiveJob> job;
    std::string name;
    absl::Duration lease;
    absl::Time expires;
  };
  using Expired = std::vector<std::unique_ptr<CollectiveJob>>;

  // Under mutex_: cancels expired jobs and moves them into `expired`, for the
  // caller to destroy after unlocking.
  void ExpireLocked(absl::Time now, Expired& expired);
  void Remember(const std::string& job_id, std::string why_gone);
  absl::Status NotFound(const std::string& job_id) const;

  std::function<absl::Time()> now_;

  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  // Why recently removed jobs are gone, so a late Poll gets the reason.
  std::deque<std::pair<std::string, std::string>> gone_;
  uint64_t next_id_ = 1;

  std::mutex sweeper_mutex_;
  std::condition_variable sweeper_wake_;
  bool stopping_ = false;
  std::thread sweeper_;
};

}  // namespace clustercert::agent::collective
