#include "agent/service/collective_handlers.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "collective/worker_options.h"
#include "common/worker_env.h"

namespace clustercert::agent {
namespace {

// The sweep model and worker command line (collective/), not the agent's
// job classes (agent/collective/).
namespace core = ::clustercert::collective;

constexpr uint32_t kDefaultLeaseS = 30;
constexpr uint32_t kDefaultTimeoutMs = 600'000;

const char* StateName(collective::RankState state) {
  switch (state) {
    case collective::RankState::kRunning:
      return "running";
    case collective::RankState::kDone:
      return "done";
    case collective::RankState::kFailed:
      return "failed";
  }
  return "failed";
}

}  // namespace

std::string ExecutableDirectory() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return ".";
  return self.parent_path().string();
}

absl::StatusOr<collective::JobLaunch> JobLaunchFor(const v1::StartCollectiveRequest& request,
                                                   const std::string& worker_dir) {
  const v1::CollectiveJobSpec& spec = request.spec();
  if (spec.backend() != "gloo" && spec.backend() != "nccl") {
    return absl::InvalidArgumentError(absl::StrCat("collective backend is \"", spec.backend(),
                                                   "\"; this agent runs gloo or nccl"));
  }
  // The workers run as the agent does (root): only the allow-listed
  // variables reach them (common/worker_env.h), checked again here because
  // a caller need not be our controller.
  for (const auto& [name, value] : spec.env()) {
    if (absl::Status allowed = CheckWorkerEnv(name, value); !allowed.ok()) return allowed;
  }
  if (spec.world_size() < 1 || spec.world_size() > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective world_size is ", spec.world_size(), "; it must be 1 to 65536"));
  }
  if (spec.ranks_size() == 0) {
    return absl::InvalidArgumentError("the collective job places no rank on this node");
  }
  if (spec.backend() == "gloo" && spec.transport() != "tcp" && spec.transport() != "ibverbs") {
    return absl::InvalidArgumentError(
        absl::StrCat("gloo transport is \"", spec.transport(), "\"; it must be tcp or ibverbs"));
  }
  core::SweepSpec sweep;
  sweep.min_bytes = spec.sweep().min_bytes();
  sweep.max_bytes = spec.sweep().max_bytes();
  sweep.factor = spec.sweep().factor();
  sweep.warmup_iters = spec.sweep().warmup_iters();
  sweep.iters = spec.sweep().iters();
  sweep.in_place = spec.sweep().in_place();
  if (std::string problem = core::ValidateSweepSpec(sweep); !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  const std::string executable =
      (std::filesystem::path(worker_dir) / ("collective-worker-" + spec.backend())).string();
  if (::access(executable.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this node-agent has no ", spec.backend(), " worker (", executable, " is missing)",
        spec.backend() == "nccl"
            ? ": it was built without CUDA and NCCL; build it on a host with /usr/local/cuda "
              "(bash scripts/build.sh), or use collectives.backend: gloo"
            : ": build it with bash scripts/build.sh (it needs libgloo-dev), or pass "
              "node-agent --worker-dir"));
  }
  const uint32_t timeout_ms = spec.timeout_ms() > 0 ? spec.timeout_ms() : kDefaultTimeoutMs;

  collective::JobLaunch launch;
  launch.name = request.name();
  launch.timeout = absl::Milliseconds(timeout_ms);
  for (const v1::CollectiveRank& rank : spec.ranks()) {
    if (rank.rank() < 0 || rank.rank() >= spec.world_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("collective rank ", rank.rank(), " is outside 0..", spec.world_size() - 1));
    }
    core::WorkerOptions options;
    options.rank = rank.rank();
    options.ranks = spec.world_size();
    options.local_rank = rank.local_rank();
    options.sweep = sweep;
    options.memory_cap_bytes = spec.memory_cap_bytes();
    options.transport = spec.transport().empty() ? "tcp" : spec.transport();
    options.bind_ip = spec.bind_ip();
    options.ib_device = spec.ib_device();
    options.ib_port = spec.ib_port() > 0 ? static_cast<int>(spec.ib_port()) : 1;
    options.gid_index = spec.gid_index();
    options.cuda_device = rank.cuda_device();
    // The workers' own rendezvous and per-operation deadline stays inside the
    // job's, so a rank waiting on a dead peer fails with gloo's/NCCL's reason
    // before the agent has to kill it.
    options.timeout_s = std::max(1.0, timeout_ms / 1000.0 * 0.9);
    collective::WorkerLaunch worker;
    worker.rank = rank.rank();
    worker.executable = executable;
    worker.args = core::FormatWorkerArgs(options);
    worker.env = {spec.env().begin(), spec.env().end()};
    launch.workers.push_back(std::move(worker));
  }
  return launch;
}

CollectiveHandlers::CollectiveHandlers(collective::CollectiveRegistry& registry,
                                       std::string worker_dir)
    : registry_(registry), worker_dir_(std::move(worker_dir)) {}

absl::StatusOr<v1::StartCollectiveResponse> CollectiveHandlers::Start(
    const v1::StartCollectiveRequest& request) {
  absl::StatusOr<collective::JobLaunch> launch = JobLaunchFor(request, worker_dir_);
  if (!launch.ok()) return launch.status();
  if (request.lease_s() > 3600) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective lease_s is ", request.lease_s(), "; it must be 1 to 3600"));
  }
  const uint32_t lease_s = request.lease_s() > 0 ? request.lease_s() : kDefaultLeaseS;
  absl::StatusOr<std::string> id = registry_.Start(*std::move(launch), absl::Seconds(lease_s));
  if (!id.ok()) return id.status();
  v1::StartCollectiveResponse response;
  response.set_job_id(*id);
  return response;
}

absl::StatusOr<v1::PollCollectiveResponse> CollectiveHandlers::Poll(
    const v1::PollCollectiveRequest& request) {
  std::vector<collective::StoreEntry> deliveries;
  for (const v1::StoreEntry& entry : request.deliveries()) {
    deliveries.push_back({entry.key(), {entry.value().begin(), entry.value().end()}});
  }
  absl::StatusOr<collective::CollectivePoll> poll = registry_.Poll(request.job_id(), deliveries);
  if (!poll.ok()) return poll.status();
  v1::PollCollectiveResponse response;
  for (const auto& entry : poll->published) {
    v1::StoreEntry* out = response.add_published();
    out->set_key(entry.key);
    out->set_value(std::string(entry.value.begin(), entry.value.end()));
  }
  for (const auto& row : poll->rows) {
    v1::CollectiveRowReport* out = response.add_rows();
    out->set_rank(row.rank);
    out->set_line(row.line);
  }
  for (const auto& rank : poll->ranks) {
    v1::CollectiveRankStatus* out = response.add_ranks();
    out->set_rank(rank.rank);
    out->set_state(StateName(rank.state));
    out->set_error(rank.error);
    out->set_exit_code(rank.exit_code);
    out->set_signal(rank.signal);
    for (const auto& note : rank.notes) out->add_notes(note);
    // The log is big (NCCL's INFO lines): sent once, with the final report.
    if (poll->finished) {
      for (const auto& line : rank.log) out->add_log(line);
    }
  }
  response.set_finished(poll->finished);
  return response;
}

absl::Status CollectiveHandlers::Stop(const v1::StopCollectiveRequest& request) {
  return registry_.Stop(request.job_id());
}

}  // namespace clustercert::agent
