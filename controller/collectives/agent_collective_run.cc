#include "controller/collectives/agent_collective_run.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collective/sweep_row.h"
#include "controller/collectives/store_relay.h"
#include "controller/phases/fan_out.h"
#include "controller/phases/sync_call.h"

namespace clustercert::controller {
namespace {

struct NodeJob {
  std::string job_id;
  bool started = false;
  bool finished = false;   // every rank exited (or the agent was lost)
  bool failed = false;
  std::map<int, v1::CollectiveRankStatus> ranks;
};

std::string RankStatusError(const std::string& node, const v1::CollectiveRankStatus& status) {
  return absl::StrCat(node, " rank ", status.rank(), ": ",
                      status.error().empty() ? "failed without saying why" : status.error());
}

}  // namespace

ScopeRunResult RunScopeThroughAgents(const std::vector<NodeState*>& nodes,
                                     const std::vector<v1::CollectiveJobSpec>& specs,
                                     const ScopeRunSettings& settings,
                                     const std::function<void(const RankRow&)>& on_row) {
  ScopeRunResult result;
  std::vector<NodeJob> jobs(nodes.size());
  std::mutex mutex;  // guards result and jobs while callbacks run

  // Start every node's ranks.
  FanOut(nodes.size(), [&](size_t i, std::function<void()> finished) {
    v1::StartCollectiveRequest request;
    request.set_name(settings.job_name);
    *request.mutable_spec() = specs[i];
    request.set_lease_s(settings.lease_s);
    nodes[i]->client->StartCollective(
        request, settings.call_timeout,
        [&, i, finished](absl::StatusOr<v1::StartCollectiveResponse> response, CallTiming) {
          std::lock_guard<std::mutex> lock(mutex);
          if (response.ok()) {
            jobs[i].job_id = response->job_id();
            jobs[i].started = true;
          } else {
            jobs[i].finished = jobs[i].failed = true;
            result.rank_errors.push_back(absl::StrCat(nodes[i]->node.name,
                                                      ": could not start its ranks: ",
                                                      response.status().message()));
          }
          finished();
        });
  });

  StoreRelay relay(nodes.size());
  const absl::Time deadline = absl::Now() + settings.job_timeout + settings.failure_grace;
  std::optional<absl::Time> stop_at;
  bool timed_out = false;
  auto any_failed = [&] {
    for (const NodeJob& job : jobs) {
      if (job.failed) return true;
    }
    return false;
  };
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      bool all_finished = true;
      for (const NodeJob& job : jobs) all_finished = all_finished && job.finished;
      if (all_finished) break;
      if (any_failed() && !stop_at) stop_at = absl::Now() + settings.failure_grace;
    }
    if (stop_at && absl::Now() >= *stop_at) break;
    if (absl::Now() >= deadline) {
      timed_out = true;
      break;
    }
    std::vector<size_t> polled;
    std::vector<std::vector<v1::StoreEntry>> deliveries;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t i = 0; i < jobs.size(); ++i) {
        if (!jobs[i].finished) {
          polled.push_back(i);
          deliveries.push_back(relay.TakeFor(i));
        }
      }
    }
    FanOut(polled.size(), [&](size_t k, std::function<void()> finished) {
      const size_t i = polled[k];
      v1::PollCollectiveRequest request;
      request.set_job_id(jobs[i].job_id);
      for (auto& entry : deliveries[k]) *request.add_deliveries() = std::move(entry);
      nodes[i]->client->PollCollective(
          request, settings.call_timeout,
          [&, i, finished](absl::StatusOr<v1::PollCollectiveResponse> response, CallTiming) {
            std::lock_guard<std::mutex> lock(mutex);
            NodeJob& job = jobs[i];
            const std::string& name = nodes[i]->node.name;
            if (!response.ok()) {
              job.finished = job.failed = true;
              result.rank_errors.push_back(
                  absl::StrCat(name, ": the agent stopped answering during the sweep (",
                               response.status().message(),
                               "); its ranks are killed when their lease runs out"));
              finished();
              return;
            }
            relay.Publish(i, response->published());
            for (const v1::CollectiveRowReport& report : response->rows()) {
              std::optional<collective::SweepRow> row = collective::DecodeRowLine(report.line());
              if (!row) {
                result.notes.push_back(absl::StrCat(name, " rank ", report.rank(),
                                                    ": unreadable row ignored: ", report.line()));
                continue;
              }
              RankRow rank_row{report.rank(), *row};
              if (on_row) on_row(rank_row);
              result.rows.push_back(std::move(rank_row));
            }
            for (const v1::CollectiveRankStatus& status : response->ranks()) {
              job.ranks[status.rank()] = status;
              if (status.state() == "failed") job.failed = true;
            }
            job.finished = response->finished();
            finished();
          });
    });
    absl::SleepFor(settings.poll_interval);
  }

  // Stop every job that was started (a finished job is simply removed).
  std::vector<size_t> started;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].started) started.push_back(i);
  }
  FanOut(started.size(), [&](size_t k, std::function<void()> finished) {
    const size_t i = started[k];
    v1::StopCollectiveRequest request;
    request.set_job_id(jobs[i].job_id);
    nodes[i]->client->StopCollective(
        request, settings.call_timeout,
        [finished](absl::StatusOr<v1::StopCollectiveResponse>, CallTiming) { finished(); });
  });

  bool all_done = true;
  std::vector<std::string> stopped;  // ranks ended by us: listed after the real failures
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string& name = nodes[i]->node.name;
    if (!jobs[i].started) all_done = false;
    for (const auto& [rank, status] : jobs[i].ranks) {
      for (const std::string& note : status.notes()) {
        result.notes.push_back(absl::StrCat(name, " rank ", rank, ": ", note));
      }
      if (status.log_size() > 0) {
        RankLog log{name, rank, {status.log().begin(), status.log().end()}};
        result.logs.push_back(std::move(log));
      }
      if (status.state() == "done") continue;
      all_done = false;
      if (status.state() == "failed") {
        result.rank_errors.push_back(RankStatusError(name, status));
      } else {
        stopped.push_back(absl::StrCat(
            name, " rank ", rank,
            timed_out ? ": still running at the scope's deadline; stopped"
                      : ": still running when another rank failed; stopped"));
      }
    }
    if (jobs[i].started && jobs[i].ranks.size() != static_cast<size_t>(specs[i].ranks_size())) {
      all_done = false;
    }
  }
  const bool failures = !result.rank_errors.empty();
  for (auto& line : stopped) result.rank_errors.push_back(std::move(line));
  result.ok = all_done && !timed_out && result.rank_errors.empty();
  if (!result.ok) {
    if (timed_out && !failures) {
      result.error = absl::StrCat(
          "the sweep did not finish within collectives.timeout_s (",
          absl::FormatDuration(settings.job_timeout),
          "): a rank waits for a peer that never joined or the data plane is too slow for the "
          "sizes; lower collectives.sizes.max or raise timeout_s, and see the rank errors");
    } else if (!result.rank_errors.empty()) {
      result.error = result.rank_errors.front();
    } else {
      int placed = 0;
      for (const auto& spec : specs) placed += spec.ranks_size();
      result.error = absl::StrCat(
          "some rank never reported back: ", placed,
          " rank(s) were placed but not every one said done; check that every agent runs the "
          "same clustercert version (node-agent --help prints it) and re-run");
    }
  }
  return result;
}

}  // namespace clustercert::controller
