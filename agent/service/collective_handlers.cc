#include "agent/service/collective_handlers.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/worker_env.h"
#include "sweep/worker_options.h"

namespace clustercert::agent {
namespace {

// The sweep model and worker command line (collective/), not the agent's
// job classes (agent/collective/).

constexpr uint32_t kDefaultLeaseS = 30;
constexpr uint32_t kDefaultTimeoutMs = 600'000;
// A day, as the plan's collectives.timeout_s allows.
constexpr uint32_t kMaxTimeoutMs = 86'400'000;
constexpr size_t kMaxJobNameBytes = 128;
// The plan's env plus what the controller derives for NCCL is a dozen or two.
constexpr int kMaxWorkerEnvVariables = 64;

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

namespace {

// What a job spec must be before any rank of it is considered: a backend
// this agent runs, a printable name, allow-listed env, and counts, timeout
// and port in range for this node. One flat check per field, in the order a
// reader of the spec meets them: longer than most functions, split nowhere.
absl::Status CheckJobSpec(const v1::StartCollectiveRequest& request, int node_gpus) {
  const v1::CollectiveJobSpec& spec = request.spec();
  if (spec.backend() != "gloo" && spec.backend() != "nccl") {
    return absl::InvalidArgumentError(absl::StrCat(
        "collective backend is \"", ClipValue(spec.backend()), "\"; this agent runs gloo or nccl"));
  }
  // The name is quoted in logs and in every rank's errors.
  if (request.name().size() > kMaxJobNameBytes ||
      !std::all_of(request.name().begin(), request.name().end(),
                   [](char c) { return c >= 0x20 && c < 0x7f; })) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective job name \"", ClipValue(request.name()),
                     "\" must be printable text of at most ", kMaxJobNameBytes,
                     " bytes (the controller's scope name, e.g. collectives/2-node)"));
  }
  // The workers run as the agent does (root): only the allow-listed
  // variables reach them (common/worker_env.h), checked again here because
  // a caller need not be our controller.
  if (spec.env_size() > kMaxWorkerEnvVariables) {
    return absl::InvalidArgumentError(absl::StrCat("collectives.env has ", spec.env_size(),
                                                   " variables; the workers take at most ",
                                                   kMaxWorkerEnvVariables));
  }
  for (const auto& [name, value] : spec.env()) {
    if (absl::Status allowed = CheckWorkerEnv(name, value); !allowed.ok()) return allowed;
  }
  if (spec.world_size() < 1 || spec.world_size() > sweep::kMaxWorldSize) {
    return absl::InvalidArgumentError(absl::StrCat("collective world_size is ", spec.world_size(),
                                                   "; it must be 1 to ", sweep::kMaxWorldSize));
  }
  if (spec.ranks_size() == 0) {
    return absl::InvalidArgumentError("the collective job places no rank on this node");
  }
  if (spec.ranks_size() > sweep::kMaxRanksPerNode) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the collective job places ", spec.ranks_size(), " ranks on this node; the most is ",
        sweep::kMaxRanksPerNode, ": lower collectives.ranks_per_node"));
  }
  if (spec.backend() == "nccl" && spec.ranks_size() > node_gpus) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the nccl job places ", spec.ranks_size(), " ranks on this node, which has ", node_gpus,
        " GPU", node_gpus == 1 ? "" : "s",
        " the CUDA runtime sees: one rank per GPU at most; lower collectives.ranks_per_node or "
        "check the node's GPUs (controller inventory)"));
  }
  if (spec.backend() == "gloo" && spec.transport() != "tcp" && spec.transport() != "ibverbs") {
    return absl::InvalidArgumentError(absl::StrCat(
        "gloo transport is \"", ClipValue(spec.transport()), "\"; it must be tcp or ibverbs"));
  }
  if (spec.timeout_ms() > kMaxTimeoutMs) {
    return absl::InvalidArgumentError(absl::StrCat("collective timeout_ms is ", spec.timeout_ms(),
                                                   "; it must be at most ", kMaxTimeoutMs,
                                                   " (a day; collectives.timeout_s)"));
  }
  if (!spec.operation().empty() && !sweep::ParseOperation(spec.operation())) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective operation is \"", ClipValue(spec.operation()),
                     "\"; it must be one of ", sweep::OperationNamesText(),
                     " (empty: all_reduce); update the node-agent to the "
                     "controller's release"));
  }
  // Checked as sent, before the conversion to the worker's int could wrap it.
  if (spec.ib_port() > static_cast<uint32_t>(sweep::kMaxIbPort)) {
    return absl::InvalidArgumentError(absl::StrCat("collective ib_port is ", spec.ib_port(),
                                                   "; it must be 1 to ", sweep::kMaxIbPort,
                                                   " (0: port 1)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<sweep::SweepSpec> SweepFrom(const v1::CollectiveJobSpec& spec) {
  sweep::SweepSpec sweep;
  sweep.min_bytes = spec.sweep().min_bytes();
  sweep.max_bytes = spec.sweep().max_bytes();
  sweep.factor = spec.sweep().factor();
  sweep.warmup_iters = spec.sweep().warmup_iters();
  sweep.iters = spec.sweep().iters();
  sweep.in_place = spec.sweep().in_place();
  if (std::string problem = sweep::ValidateSweepSpec(sweep); !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  return sweep;
}

// The ranks placed on this node so far: local ranks and GPUs must not repeat.
struct NodePlacement {
  std::set<int> local_ranks;
  std::set<int> gpus;
};

// One rank's worker command line, checked as the worker would check it.
absl::StatusOr<sweep::WorkerOptions> RankOptions(const v1::CollectiveJobSpec& spec,
                                                 const v1::CollectiveRank& rank,
                                                 const sweep::SweepSpec& sweep, uint32_t timeout_ms,
                                                 int node_gpus, NodePlacement& placed) {
  const bool nccl = spec.backend() == "nccl";
  if (rank.rank() < 0 || rank.rank() >= spec.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective rank ", rank.rank(), " is outside 0..", spec.world_size() - 1));
  }
  if (rank.local_rank() < 0 || rank.local_rank() >= spec.ranks_size() ||
      !placed.local_ranks.insert(rank.local_rank()).second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collective rank ", rank.rank(), " has local_rank ", rank.local_rank(),
        "; the ranks on this node must have distinct local ranks 0..", spec.ranks_size() - 1));
  }
  if (nccl) {
    const int gpu = rank.cuda_device() == -1 ? rank.local_rank() : rank.cuda_device();
    if (gpu < 0 || gpu >= node_gpus || !placed.gpus.insert(gpu).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collective rank ", rank.rank(), " asks for cuda_device ", rank.cuda_device(), " (GPU ",
          gpu, "); this node's ranks need distinct GPUs 0..", node_gpus - 1,
          ", or -1 for the local rank"));
    }
  }
  sweep::WorkerOptions options;
  options.rank = rank.rank();
  options.ranks = spec.world_size();
  options.local_rank = rank.local_rank();
  // Checked with the spec: an unknown name never reaches here.
  options.operation =
      sweep::ParseOperation(spec.operation()).value_or(sweep::Operation::kAllReduce);
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
  // The same check the worker makes of its command line, made here so a
  // bad value never reaches a process running as root.
  if (std::string problem = sweep::ValidateWorkerOptions(options); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("collective rank ", rank.rank(), ": ", problem));
  }
  return options;
}

// The backend's worker binary in `worker_dir`, which must be executable.
absl::StatusOr<std::string> WorkerExecutable(const std::string& backend,
                                             const std::string& worker_dir) {
  const std::string executable =
      (std::filesystem::path(worker_dir) / ("collective-worker-" + backend)).string();
  if (::access(executable.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this node-agent has no ", backend, " worker (", executable, " is missing)",
        backend == "nccl"
            ? ": it was built without CUDA and NCCL; build it on a host with /usr/local/cuda "
              "(bash scripts/build.sh), or use collectives.backend: gloo"
            : ": build it with bash scripts/build.sh (it needs libgloo-dev), or pass "
              "node-agent --worker-dir"));
  }
  return executable;
}

}  // namespace

absl::StatusOr<collective::JobLaunch> JobLaunchFor(const v1::StartCollectiveRequest& request,
                                                   const std::string& worker_dir, int node_gpus) {
  if (absl::Status valid = CheckJobSpec(request, node_gpus); !valid.ok()) return valid;
  const v1::CollectiveJobSpec& spec = request.spec();
  absl::StatusOr<sweep::SweepSpec> sweep = SweepFrom(spec);
  if (!sweep.ok()) return sweep.status();
  const uint32_t timeout_ms = spec.timeout_ms() > 0 ? spec.timeout_ms() : kDefaultTimeoutMs;

  collective::JobLaunch launch;
  launch.name = request.name();
  launch.timeout = absl::Milliseconds(timeout_ms);
  NodePlacement placed;
  for (const v1::CollectiveRank& rank : spec.ranks()) {
    absl::StatusOr<sweep::WorkerOptions> options =
        RankOptions(spec, rank, *sweep, timeout_ms, node_gpus, placed);
    if (!options.ok()) return options.status();
    collective::WorkerLaunch worker;
    worker.rank = rank.rank();
    worker.args = sweep::FormatWorkerArgs(*options);
    worker.env = {spec.env().begin(), spec.env().end()};
    launch.workers.push_back(std::move(worker));
  }
  absl::StatusOr<std::string> executable = WorkerExecutable(spec.backend(), worker_dir);
  if (!executable.ok()) return executable.status();
  for (collective::WorkerLaunch& worker : launch.workers) worker.executable = *executable;
  return launch;
}

CollectiveHandlers::CollectiveHandlers(collective::CollectiveRegistry& registry,
                                       std::string worker_dir, inventory::GpuSource& gpus)
    : registry_(registry), worker_dir_(std::move(worker_dir)), gpus_(gpus) {}

absl::StatusOr<v1::StartCollectiveResponse> CollectiveHandlers::Start(
    const v1::StartCollectiveRequest& request, const std::string& caller) {
  const int64_t max_lease_s = absl::ToInt64Seconds(collective::CollectiveRegistry::kMaxLease);
  if (request.lease_s() > max_lease_s) {
    return absl::InvalidArgumentError(absl::StrCat("collective lease_s is ", request.lease_s(),
                                                   "; it must be 1 to ", max_lease_s,
                                                   " (0: ", kDefaultLeaseS, ")"));
  }
  // Only nccl places ranks on GPUs; gloo runs on host memory anywhere.
  const int node_gpus = request.spec().backend() == "nccl" ? gpus_.Read().gpus_size() : 0;
  absl::StatusOr<collective::JobLaunch> launch = JobLaunchFor(request, worker_dir_, node_gpus);
  if (!launch.ok()) return launch.status();
  const uint32_t lease_s = request.lease_s() > 0 ? request.lease_s() : kDefaultLeaseS;
  absl::StatusOr<std::string> id =
      registry_.Start(*std::move(launch), absl::Seconds(lease_s), caller);
  if (!id.ok()) return id.status();
  v1::StartCollectiveResponse response;
  response.set_job_id(*id);
  return response;
}

absl::StatusOr<v1::PollCollectiveResponse> CollectiveHandlers::Poll(
    const v1::PollCollectiveRequest& request, const std::string& caller) {
  std::vector<collective::StoreEntry> deliveries;
  for (const v1::StoreEntry& entry : request.deliveries()) {
    deliveries.push_back({entry.key(), {entry.value().begin(), entry.value().end()}});
  }
  absl::StatusOr<collective::CollectivePoll> poll =
      registry_.Poll(request.job_id(), caller, deliveries);
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

absl::Status CollectiveHandlers::Stop(const v1::StopCollectiveRequest& request,
                                      const std::string& caller) {
  return registry_.Stop(request.job_id(), caller);
}

}  // namespace clustercert::agent
