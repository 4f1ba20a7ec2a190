#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/collective/collective_registry.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::agent {

// The collective RPCs as a plain class over the CollectiveRegistry: turns a
// StartCollectiveRequest into worker command lines (collective/worker_options.h)
// and the registry's reports back into protos. Workers are found in
// `worker_dir` as collective-worker-<backend>.
class CollectiveHandlers {
 public:
  CollectiveHandlers(collective::CollectiveRegistry& registry, std::string worker_dir);

  absl::StatusOr<v1::StartCollectiveResponse> Start(const v1::StartCollectiveRequest& request);
  absl::StatusOr<v1::PollCollectiveResponse> Poll(const v1::PollCollectiveRequest& request);
  absl::Status Stop(const v1::StopCollectiveRequest& request);

 private:
  collective::CollectiveRegistry& registry_;
  std::string worker_dir_;
};

// The processes a request asks for, validated: InvalidArgument names the bad
// field and value; FailedPrecondition when this agent has no worker for the
// backend (built without CUDA/NCCL).
absl::StatusOr<collective::JobLaunch> JobLaunchFor(const v1::StartCollectiveRequest& request,
                                                   const std::string& worker_dir);

// The directory of the running executable (/proc/self/exe), where the build
// puts the workers next to node-agent.
std::string ExecutableDirectory();

}  // namespace clustercert::agent
