#include "controller/collectives/agent_collective_run.h"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "controller/collectives/store_relay.h"
#include "controller/phases/fan_out.h"
#include "controller/phases/sync_call.h"
#include "sweep/sweep_row.h"

namespace clustercert::controller {
namespace {

struct NodeJob {
  std::string job_id;
  bool started = false;
  bool finished = false;  // every rank exited (or the agent was lost)
  bool failed = false;
  std::map<int, v1::CollectiveRankStatus> ranks;
};

std::string RankStatusError(const std::string& node, const v1::CollectiveRankStatus& status) {
  return absl::StrCat(node, " rank ", status.rank(), ": ",
                      status.error().empty() ? "failed without saying why" : status.error());
}

// One scope's run through the agents: the jobs on each node, the store
// relay between them, and what the run found. Callbacks of the fanned-out
// calls run on the client's threads, so everything they touch is under
// mutex_.
class ScopeRun {
 public:
  ScopeRun(const std::vector<NodeState*>& nodes, const std::vector<v1::CollectiveJobSpec>& specs,
           const ScopeRunSettings& settings, const std::function<void(const RankRow&)>& on_row)
      : nodes_(nodes),
        specs_(specs),
        settings_(settings),
        on_row_(on_row),
        jobs_(nodes.size()),
        relay_(nodes.size()) {}

  ScopeRunResult Run() {
    StartAll();
    PollUntilDone();
    StopAll();
    Summarize();
    return std::move(result_);
  }

 private:
  // Starts every node's ranks.
  void StartAll() {
    FanOut(nodes_.size(), [&](size_t i, std::function<void()> finished) {
      v1::StartCollectiveRequest request;
      request.set_name(settings_.job_name);
      *request.mutable_spec() = specs_[i];
      request.set_lease_s(settings_.lease_s);
      nodes_[i]->client->StartCollective(
          request, settings_.call_timeout,
          [&, i, finished](absl::StatusOr<v1::StartCollectiveResponse> response, CallTiming) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (response.ok()) {
              jobs_[i].job_id = response->job_id();
              jobs_[i].started = true;
            } else {
              jobs_[i].finished = jobs_[i].failed = true;
              result_.rank_errors.push_back(
                  absl::StrCat(nodes_[i]->node.name,
                               ": could not start its ranks: ", response.status().message()));
            }
            finished();
          });
    });
  }

  // Polls the unfinished jobs every poll_interval (relaying the store) until
  // all finished, failure_grace after the first failure, or the deadline.
  void PollUntilDone() {
    Clock& clock = *settings_.clock;
    const absl::Time deadline = clock.Now() + settings_.job_timeout + settings_.failure_grace;
    std::optional<absl::Time> stop_at;
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        bool all_finished = true;
        bool any_failed = false;
        for (const NodeJob& job : jobs_) {
          all_finished = all_finished && job.finished;
          any_failed = any_failed || job.failed;
        }
        if (all_finished) return;
        if (any_failed && !stop_at) stop_at = clock.Now() + settings_.failure_grace;
      }
      if (stop_at && clock.Now() >= *stop_at) return;
      if (clock.Now() >= deadline) {
        timed_out_ = true;
        return;
      }
      PollOnce();
      clock.SleepFor(settings_.poll_interval);
    }
  }

  void PollOnce() {
    std::vector<size_t> polled;
    std::vector<std::vector<v1::StoreEntry>> deliveries;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < jobs_.size(); ++i) {
        if (!jobs_[i].finished) {
          polled.push_back(i);
          deliveries.push_back(relay_.TakeFor(i));
        }
      }
    }
    FanOut(polled.size(), [&](size_t k, std::function<void()> finished) {
      const size_t i = polled[k];
      v1::PollCollectiveRequest request;
      request.set_job_id(jobs_[i].job_id);
      for (auto& entry : deliveries[k]) *request.add_deliveries() = std::move(entry);
      nodes_[i]->client->PollCollective(
          request, settings_.call_timeout,
          [&, i, finished](absl::StatusOr<v1::PollCollectiveResponse> response, CallTiming) {
            std::lock_guard<std::mutex> lock(mutex_);
            TakePoll(i, response);
            finished();
          });
    });
  }

  // Under mutex_: what one node's poll said.
  void TakePoll(size_t i, const absl::StatusOr<v1::PollCollectiveResponse>& response) {
    NodeJob& job = jobs_[i];
    const std::string& name = nodes_[i]->node.name;
    if (!response.ok()) {
      job.finished = job.failed = true;
      result_.rank_errors.push_back(absl::StrCat(
          name, ": the agent stopped answering during the sweep (", response.status().message(),
          "); its ranks are killed when their lease runs out"));
      return;
    }
    relay_.Publish(i, response->published());
    for (const v1::CollectiveRowReport& report : response->rows()) {
      std::optional<sweep::SweepRow> row = sweep::DecodeRowLine(report.line());
      if (!row) {
        result_.notes.push_back(absl::StrCat(name, " rank ", report.rank(),
                                             ": unreadable row ignored: ", report.line()));
        continue;
      }
      RankRow rank_row{report.rank(), *row};
      if (on_row_) on_row_(rank_row);
      result_.rows.push_back(std::move(rank_row));
    }
    for (const v1::CollectiveRankStatus& status : response->ranks()) {
      job.ranks[status.rank()] = status;
      if (status.state() == "failed") job.failed = true;
    }
    job.finished = response->finished();
  }

  // Stops every job that was started (a finished job is simply removed).
  void StopAll() {
    std::vector<size_t> started;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (jobs_[i].started) started.push_back(i);
    }
    FanOut(started.size(), [&](size_t k, std::function<void()> finished) {
      const size_t i = started[k];
      v1::StopCollectiveRequest request;
      request.set_job_id(jobs_[i].job_id);
      nodes_[i]->client->StopCollective(
          request, settings_.call_timeout,
          [finished](absl::StatusOr<v1::StopCollectiveResponse>, CallTiming) { finished(); });
    });
  }

  // Every rank's notes, logs and end; ok only when every placed rank said
  // done in time. Ranks ended by the controller are listed after the real
  // failures.
  void Summarize() {
    bool all_done = true;
    std::vector<std::string> stopped;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (!jobs_[i].started) all_done = false;
      all_done = SummarizeNode(i, &stopped) && all_done;
    }
    const bool failures = !result_.rank_errors.empty();
    for (auto& line : stopped) result_.rank_errors.push_back(std::move(line));
    result_.ok = all_done && !timed_out_ && result_.rank_errors.empty();
    if (!result_.ok) result_.error = Why(failures);
  }

  // One node's ranks into the result; true when every rank placed there said done.
  bool SummarizeNode(size_t i, std::vector<std::string>* stopped) {
    const std::string& name = nodes_[i]->node.name;
    bool all_done = true;
    for (const auto& [rank, status] : jobs_[i].ranks) {
      for (const std::string& note : status.notes()) {
        result_.notes.push_back(absl::StrCat(name, " rank ", rank, ": ", note));
      }
      if (status.log_size() > 0) {
        result_.logs.push_back(RankLog{name, rank, {status.log().begin(), status.log().end()}});
      }
      if (status.state() == "done") continue;
      all_done = false;
      if (status.state() == "failed") {
        result_.rank_errors.push_back(RankStatusError(name, status));
      } else {
        stopped->push_back(absl::StrCat(name, " rank ", rank,
                                        timed_out_
                                            ? ": still running at the scope's deadline; stopped"
                                            : ": still running when another rank failed; stopped"));
      }
    }
    if (jobs_[i].started && jobs_[i].ranks.size() != static_cast<size_t>(specs_[i].ranks_size())) {
      all_done = false;
    }
    return all_done;
  }

  std::string Why(bool failures) const {
    if (timed_out_ && !failures) {
      return absl::StrCat(
          "the sweep did not finish within collectives.timeout_s (",
          absl::FormatDuration(settings_.job_timeout),
          "): a rank waits for a peer that never joined or the data plane is too slow for the "
          "sizes; lower collectives.sizes.max or raise timeout_s, and see the rank errors");
    }
    if (!result_.rank_errors.empty()) return result_.rank_errors.front();
    int placed = 0;
    for (const auto& spec : specs_) placed += spec.ranks_size();
    return absl::StrCat(
        "some rank never reported back: ", placed,
        " rank(s) were placed but not every one said done; check that every agent runs the "
        "same clustercert version (node-agent --help prints it) and re-run");
  }

  const std::vector<NodeState*>& nodes_;
  const std::vector<v1::CollectiveJobSpec>& specs_;
  const ScopeRunSettings& settings_;
  const std::function<void(const RankRow&)>& on_row_;
  std::mutex mutex_;  // guards result_ and jobs_ while callbacks run
  std::vector<NodeJob> jobs_;
  StoreRelay relay_;
  ScopeRunResult result_;
  bool timed_out_ = false;
};

}  // namespace

ScopeRunResult RunScopeThroughAgents(const std::vector<NodeState*>& nodes,
                                     const std::vector<v1::CollectiveJobSpec>& specs,
                                     const ScopeRunSettings& settings,
                                     const std::function<void(const RankRow&)>& on_row) {
  return ScopeRun(nodes, specs, settings, on_row).Run();
}

}  // namespace clustercert::controller
