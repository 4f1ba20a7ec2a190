#pragma once

// CollectiveRegistry holds this node's collective jobs by id ("coll-" and 128
// random bits in hex, common/random_id.h), each under a lease the controller
// renews by polling and each bound to the caller that started it: another
// caller's Poll or Stop gets the same NotFound as an id that never existed.
// The controller drives the run (it relays store keys between nodes and
// collects rows); if it vanishes, nothing it started may outlive it: a job
// not polled for its lease is cancelled (its workers are killed) and removed,
// whether it still ran or had finished. One job runs at a time: a Start while
// another job's workers still run (or are being spawned) is refused. A
// finished job stays until Stop or its lease runs out, so the Poll that
// reports finished=true can be retried; at most kMaxJobs are held.
//
// Bounded: leases up to kMaxLease, kMaxJobs jobs, each job's store under its
// StoreLimits and all jobs' together under kMaxTotalStoreBytes.
//
// Expiry is checked on every call and by Sweep(), which the agent calls on a
// timer or hands to StartSweeper(). Time comes from the injected clock.
// Workers are spawned (fork and exec of every rank, which can take seconds)
// and jobs destroyed (joining their loop, reaping their workers) outside the
// registry's lock: Start reserves the node under the lock, spawns without
// it, then publishes the job under it again.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/collective/collective_job.h"
#include "common/lease_table.h"
#include "common/periodic_thread.h"

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
  // The controller asks for 30 s and polls every second or so.
  static constexpr absl::Duration kMaxLease = absl::Seconds(600);
  // Running or finished and not yet stopped.
  static constexpr size_t kMaxJobs = 8;
  static constexpr size_t kMaxTotalStoreBytes = size_t{64} << 20;

  // How a job's workers are started: CollectiveJob::Start, or in tests one
  // that shows Start runs it without the registry's lock held.
  using JobStarter = std::function<absl::StatusOr<std::unique_ptr<CollectiveJob>>(JobLaunch)>;

  explicit CollectiveRegistry(
      std::function<absl::Time()> now, JobStarter start_job = [](JobLaunch launch) {
        return CollectiveJob::Start(std::move(launch));
      });
  ~CollectiveRegistry();  // stops the sweeper, then cancels and destroys every job
  CollectiveRegistry(const CollectiveRegistry&) = delete;
  CollectiveRegistry& operator=(const CollectiveRegistry&) = delete;

  // Starts the job's workers for `caller`; returns its id. `lease` is how
  // long the job lives without a Poll, up to kMaxLease. Refused
  // (FailedPrecondition) while another job's workers run or are being
  // spawned, (ResourceExhausted) when kMaxJobs are held; errors from
  // CollectiveJob::Start pass through.
  absl::StatusOr<std::string> Start(JobLaunch launch, absl::Duration lease,
                                    const std::string& caller);
  // Renews the lease, delivers keys from other nodes, and returns what the
  // job reported since the last Poll. `finished` is read before the rest, so
  // the Poll that says finished=true carries the last rows. Deliveries past
  // the store caps are refused with the error and nothing is taken.
  absl::StatusOr<CollectivePoll> Poll(const std::string& job_id, const std::string& caller,
                                      const std::vector<StoreEntry>& deliveries);
  // Cancels the job (killing what still runs) and removes it.
  absl::Status Stop(const std::string& job_id, const std::string& caller);

  // Cancels and removes every job whose lease has run out; returns how many.
  int Sweep();
  // Runs Sweep every `period` on a thread of its own until destroyed. Call once.
  void StartSweeper(absl::Duration period);

  size_t jobs() const;
  // Bytes every job's store and untaken published keys hold together.
  size_t store_bytes() const;

 private:
  struct Held {
    std::unique_ptr<CollectiveJob> job;
    std::string name;
  };
  using Entry = LeaseTable<Held>::Entry;
  struct Gone {
    std::string id;
    std::string owner;
    std::string why;
  };
  using Expired = std::vector<std::unique_ptr<CollectiveJob>>;

  // Under mutex_: cancels expired jobs and moves them into `expired`, for the
  // caller to destroy after unlocking.
  void ExpireLocked(absl::Time now, Expired& expired);
  void Remember(const std::string& job_id, const std::string& owner, std::string why_gone);
  // The same answer for a missing id and another caller's job; only the
  // owner learns why its job is gone.
  absl::Status NotFound(const std::string& job_id, const std::string& caller) const;

  std::function<absl::Time()> now_;
  JobStarter start_job_;

  mutable std::mutex mutex_;
  LeaseTable<Held> table_;
  // The job whose workers a Start is spawning outside the lock: its name.
  // Holds the node like a running job does.
  std::optional<std::string> starting_;
  // Why recently removed jobs are gone, so a late Poll gets the reason.
  std::deque<Gone> gone_;

  PeriodicThread sweeper_;  // last: stopped before the rest goes
};

}  // namespace clustercert::agent::collective
