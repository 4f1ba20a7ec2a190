#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/collective/collective_registry.h"
#include "agent/inventory/gpu_source.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::agent {

// The collective RPCs as a plain class over the CollectiveRegistry: turns a
// StartCollectiveRequest into worker command lines (sweep/worker_options.h)
// and the registry's reports back into protos. Workers are found in
// `worker_dir` as collective-worker-<backend>; `gpus` says how many GPUs an
// nccl job may place ranks on. `caller` is the CallerIdentity of the call:
// a job is polled and stopped only by the caller that started it.
class CollectiveHandlers {
 public:
  CollectiveHandlers(collective::CollectiveRegistry& registry, std::string worker_dir,
                     inventory::GpuSource& gpus);

  absl::StatusOr<v1::StartCollectiveResponse> Start(const v1::StartCollectiveRequest& request,
                                                    const std::string& caller);
  absl::StatusOr<v1::PollCollectiveResponse> Poll(const v1::PollCollectiveRequest& request,
                                                  const std::string& caller);
  absl::Status Stop(const v1::StopCollectiveRequest& request, const std::string& caller);

 private:
  collective::CollectiveRegistry& registry_;
  std::string worker_dir_;
  inventory::GpuSource& gpus_;
};

// The processes a request asks for, validated before anything starts: the
// job's name, its env (common/worker_env.h), at most kMaxRanksPerNode ranks
// here and, for nccl, no more than `node_gpus` and only on those GPUs, each
// rank's worker options inside sweep/worker_options.h's maxima.
// InvalidArgument names the bad field and value; FailedPrecondition when the
// node lacks the GPUs or this agent has no worker for the backend (built
// without CUDA/NCCL).
absl::StatusOr<collective::JobLaunch> JobLaunchFor(const v1::StartCollectiveRequest& request,
                                                   const std::string& worker_dir, int node_gpus);

// The directory of the running executable (/proc/self/exe), where the build
// puts the workers next to node-agent.
std::string ExecutableDirectory();

}  // namespace clustercert::agent
