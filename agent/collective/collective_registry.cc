#include "agent/collective/collective_registry.h"

#include "absl/strings/str_cat.h"

namespace clustercert::agent::collective {
namespace {

// How many removed job ids keep their reason for a late Poll.
constexpr size_t kRememberedGoneJobs = 32;

}  // namespace

CollectiveRegistry::CollectiveRegistry(std::function<absl::Time()> now) : now_(std::move(now)) {}

CollectiveRegistry::~CollectiveRegistry() {
  {
    std::lock_guard<std::mutex> lock(sweeper_mutex_);
    stopping_ = true;
  }
  sweeper_wake_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
  std::map<std::string, Entry> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries.swap(entries_);
  }
  for (auto& [id, entry] : entries) {
    entry.job->Cancel(absl::StrCat("collective job ", entry.name,
                                   " was cancelled: the node-agent is shutting down"));
  }
}

absl::StatusOr<std::string> CollectiveRegistry::Start(JobLaunch launch, absl::Duration lease) {
  if (lease <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collective job ", launch.name, " asks for a lease of ", absl::FormatDuration(lease),
        ": it must be positive (the controller's "
        "poll interval plus slack)"));
  }
  Expired expired;
  absl::StatusOr<std::string> result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const absl::Time now = now_();
    ExpireLocked(now, expired);
    for (const auto& [id, entry] : entries_) {
      if (!entry.job->Finished()) {
        return absl::FailedPreconditionError(
            absl::StrCat("a collective job (", entry.name, ", ", id,
                         ") is already running on this node: wait for it or stop it"));
      }
    }
    const std::string name = launch.name;
    // Spawning under the lock keeps "one job at a time" true; it takes
    // milliseconds (fork and exec), never a worker's run.
    auto job = CollectiveJob::Start(std::move(launch));
    if (!job.ok()) {
      result = job.status();
    } else {
      std::string id = absl::StrCat("coll-", next_id_++);
      entries_.emplace(id, Entry{*std::move(job), name, lease, now + lease});
      result = std::move(id);
    }
  }
  return result;  // `expired` is destroyed here, after the lock
}

absl::StatusOr<CollectivePoll> CollectiveRegistry::Poll(const std::string& job_id,
                                                        const std::vector<StoreEntry>& deliveries) {
  Expired expired;
  std::lock_guard<std::mutex> lock(mutex_);
  const absl::Time now = now_();
  ExpireLocked(now, expired);
  auto found = entries_.find(job_id);
  if (found == entries_.end()) return NotFound(job_id);
  Entry& entry = found->second;
  entry.expires = now + entry.lease;
  if (!deliveries.empty()) entry.job->Deliver(deliveries);
  CollectivePoll poll;
  // Read first: once every worker is reaped no row or key can follow, so a
  // finished=true Poll carries everything.
  poll.finished = entry.job->Finished();
  poll.published = entry.job->TakePublished();
  poll.rows = entry.job->TakeRows();
  poll.ranks = entry.job->Ranks();
  // Expired jobs were cancelled above; their reaping is quick and `expired`
  // is destroyed after this lock is released (declared before it).
  return poll;
}

absl::Status CollectiveRegistry::Stop(const std::string& job_id) {
  std::unique_ptr<CollectiveJob> stopped;
  Expired expired;
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireLocked(now_(), expired);
  auto found = entries_.find(job_id);
  if (found == entries_.end()) return NotFound(job_id);
  found->second.job->Cancel(
      absl::StrCat("collective job ", found->second.name, " was stopped by the controller"));
  stopped = std::move(found->second.job);
  Remember(job_id, "it was stopped by the controller");
  entries_.erase(found);
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
  sweeper_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(sweeper_mutex_);
    while (!stopping_) {
      sweeper_wake_.wait_for(lock, absl::ToChronoMilliseconds(period));
      if (stopping_) break;
      lock.unlock();
      Sweep();
      lock.lock();
    }
  });
}

size_t CollectiveRegistry::jobs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void CollectiveRegistry::ExpireLocked(absl::Time now, Expired& expired) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    if (now < entry.expires) {
      ++it;
      continue;
    }
    const std::string reason =
        absl::StrCat("the controller stopped polling for ", absl::ToDoubleSeconds(entry.lease),
                     " s (controller lost): workers killed");
    entry.job->Cancel(reason);
    Remember(it->first, reason);
    expired.push_back(std::move(entry.job));
    it = entries_.erase(it);
  }
}

void CollectiveRegistry::Remember(const std::string& job_id, std::string why_gone) {
  gone_.emplace_back(job_id, std::move(why_gone));
  if (gone_.size() > kRememberedGoneJobs) gone_.pop_front();
}

absl::Status CollectiveRegistry::NotFound(const std::string& job_id) const {
  for (const auto& [id, why] : gone_) {
    if (id == job_id) {
      return absl::NotFoundError(
          absl::StrCat("collective job ", job_id, " is gone from this node: ", why));
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no collective job ", job_id,
                   " on this node: start one first (or the agent restarted and lost it)"));
}

}  // namespace clustercert::agent::collective
