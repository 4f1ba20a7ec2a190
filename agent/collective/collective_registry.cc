#include "agent/collective/collective_registry.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/printable.h"
#include "common/random_id.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent::collective {
namespace {

// How many removed job ids keep their reason for a late Poll.
constexpr size_t kRememberedGoneJobs = 32;

}  // namespace

CollectiveRegistry::CollectiveRegistry(std::function<absl::Time()> now, JobStarter start_job)
    : now_(std::move(now)), start_job_(std::move(start_job)) {}

CollectiveRegistry::~CollectiveRegistry() {
  sweeper_.Stop();
  LeaseTable<Held>::Map entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries = table_.TakeAll();
  }
  for (auto& [id, entry] : entries) {
    entry.value.job->Cancel(absl::StrCat("collective job ", entry.value.name,
                                         " was cancelled: the node-agent is shutting down"));
  }
}

absl::StatusOr<std::string> CollectiveRegistry::Start(JobLaunch launch, absl::Duration lease,
                                                      const std::string& caller) {
  if (lease <= absl::ZeroDuration() || lease > kMaxLease) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collective job ", launch.name, " asks for a lease of ", absl::FormatDuration(lease),
        ": it must be above 0 and at most ", absl::FormatDuration(kMaxLease),
        " (the controller's poll interval plus slack)"));
  }
  absl::StatusOr<std::string> id = RandomId("coll-");
  if (!id.ok()) return id.status();
  const std::string name = launch.name;
  {
    Expired expired;
    std::lock_guard<std::mutex> lock(mutex_);
    ExpireLocked(now_(), expired);
    if (starting_.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("a collective job (", *starting_,
                       ") is being started on this node: wait for it or stop it"));
    }
    for (const auto& [held, entry] : table_.entries()) {
      if (!entry.value.job->Finished()) {
        // Only its owner learns the id, which is what drives and stops it.
        return absl::FailedPreconditionError(absl::StrCat(
            "a collective job (", entry.value.name,
            entry.owner == caller ? absl::StrCat(", ", held) : std::string(", another caller's"),
            ") is already running on this node: wait for it or stop it"));
      }
    }
    if (table_.size() >= kMaxJobs) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this node already holds ", table_.size(),
          " finished collective jobs, the most it keeps: stop them (StopCollective) or wait for "
          "their leases to run out"));
    }
    starting_ = name;
  }  // `expired` is destroyed here, after the lock

  // Spawning every rank can take seconds; Poll and Stop of other jobs must
  // not wait for it, and starting_ keeps "one job at a time" true meanwhile.
  absl::StatusOr<std::unique_ptr<CollectiveJob>> job = start_job_(std::move(launch));

  std::lock_guard<std::mutex> lock(mutex_);
  starting_.reset();
  if (!job.ok()) {
    spdlog::warn("collective job {} for {} did not start: {}", PrintableText(name),
                 PrintableText(caller), PrintableText(job.status().message(), 512));
    return job.status();
  }
  const absl::Time now = now_();
  spdlog::info("collective job {} ({}) started for {} (lease {} s)", *id, PrintableText(name),
               PrintableText(caller), absl::ToInt64Seconds(lease));
  table_.Add(*id, Held{*std::move(job), name}, caller, lease, now);
  return id;
}

absl::StatusOr<CollectivePoll> CollectiveRegistry::Poll(const std::string& job_id,
                                                        const std::string& caller,
                                                        const std::vector<StoreEntry>& deliveries) {
  Expired expired;
  std::lock_guard<std::mutex> lock(mutex_);
  const absl::Time now = now_();
  ExpireLocked(now, expired);
  Entry* found = table_.Touch(job_id, caller, now);
  if (found == nullptr) return NotFound(job_id, caller);
  CollectiveJob& job = *found->value.job;
  if (!deliveries.empty()) {
    size_t held = 0;  // store_bytes(), under the lock already held
    for (const auto& [id, other] : table_.entries()) held += other.value.job->StoreBytes();
    size_t adding = 0;
    for (const auto& delivery : deliveries) adding += delivery.key.size() + delivery.value.size();
    if (held + adding > kMaxTotalStoreBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the collective jobs on this node hold ", held, " bytes of store; ", adding,
                       " more would pass the node's cap of ", kMaxTotalStoreBytes,
                       ": stop finished jobs, and relay each key once"));
    }
    if (absl::Status delivered = job.Deliver(deliveries); !delivered.ok()) {
      return delivered;
    }
  }
  CollectivePoll poll;
  // Read first: once every worker is reaped no row or key can follow, so a
  // finished=true Poll carries everything.
  poll.finished = job.Finished();
  poll.published = job.TakePublished();
  poll.rows = job.TakeRows();
  poll.ranks = job.Ranks();
  // Expired jobs were cancelled above; their reaping is quick and `expired`
  // is destroyed after this lock is released (declared before it).
  return poll;
}

absl::Status CollectiveRegistry::Stop(const std::string& job_id, const std::string& caller) {
  std::unique_ptr<CollectiveJob> stopped;
  Expired expired;
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireLocked(now_(), expired);
  Entry removed;
  if (!table_.Remove(job_id, caller, &removed)) return NotFound(job_id, caller);
  spdlog::info("collective job {} ({}) stopped by the controller{}", job_id,
               PrintableText(removed.value.name),
               removed.value.job->Finished() ? "" : ": its running workers are killed");
  removed.value.job->Cancel(
      absl::StrCat("collective job ", removed.value.name, " was stopped by the controller"));
  stopped = std::move(removed.value.job);
  Remember(job_id, caller, "it was stopped by the controller");
  return absl::OkStatus();  // `stopped` is destroyed after the lock (declared before it)
}

int CollectiveRegistry::Sweep() {
  Expired expired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ExpireLocked(now_(), expired);
  }
  return static_cast<int>(expired.size());
}

void CollectiveRegistry::StartSweeper(absl::Duration period) {
  sweeper_.Start(period, [this] { Sweep(); });
}

size_t CollectiveRegistry::jobs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.size();
}

size_t CollectiveRegistry::store_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t bytes = 0;
  for (const auto& [id, entry] : table_.entries()) bytes += entry.value.job->StoreBytes();
  return bytes;
}

void CollectiveRegistry::ExpireLocked(absl::Time now, Expired& expired) {
  for (auto& [id, entry] : table_.TakeExpired(now)) {
    const std::string reason =
        absl::StrCat("the controller stopped polling for ", absl::ToDoubleSeconds(entry.lease),
                     " s (controller lost): workers killed");
    spdlog::warn("collective job {} ({}) of {}: {}", id, PrintableText(entry.value.name),
                 PrintableText(entry.owner), reason);
    entry.value.job->Cancel(reason);
    Remember(id, entry.owner, reason);
    expired.push_back(std::move(entry.value.job));
  }
}

void CollectiveRegistry::Remember(const std::string& job_id, const std::string& owner,
                                  std::string why_gone) {
  gone_.push_back(Gone{job_id, owner, std::move(why_gone)});
  if (gone_.size() > kRememberedGoneJobs) gone_.pop_front();
}

absl::Status CollectiveRegistry::NotFound(const std::string& job_id,
                                          const std::string& caller) const {
  for (const Gone& gone : gone_) {
    if (gone.id == job_id && gone.owner == caller) {
      return absl::NotFoundError(
          absl::StrCat("collective job ", job_id, " is gone from this node: ", gone.why));
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no collective job ", ClipValue(job_id),
      " of this caller on this node: start one first (or the agent restarted and lost it)"));
}

}  // namespace clustercert::agent::collective
