#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clustercert/v1/collective.pb.h"
#include "controller/phases/node_state.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Where a node's ranks sit in the job: global ranks first_rank ..
// first_rank + count - 1.
struct RankBlock {
  int first_rank = 0;
  int count = 0;
};

// What one agent is told to start for a scope. The data plane only: gloo's
// tcp transport binds to the plan's data_ip, else the IPv4 address of the
// node's first rail's netdev, and never falls back to the management address
// (an error says what to set instead); ibverbs uses that rail and the plan's
// RoCE gid_index. NCCL's INFO log is switched on (NCCL_DEBUG=INFO unless the
// plan's env sets it) so the transport can be read from it. `operation`:
// what the workers sweep (plan collectives.operations).
absl::StatusOr<v1::CollectiveJobSpec> BuildJobSpec(const plan::Plan& plan, const NodeState& node,
                                                   RankBlock block, int world_size,
                                                   const std::string& operation = "all_reduce");

// The NCCL environment of `node`'s ranks, whoever starts them (the agents'
// workers or mpirun's -x): the plan's collectives.env, then what the plan
// implies for the node (checks::DerivedNcclEnv: NCCL_IB_HCA,
// NCCL_IB_GID_INDEX, NCCL_IB_TC, NCCL_IB_SL, NCCL_SOCKET_IFNAME) where the
// env leaves it unset, and NCCL_DEBUG=INFO unless set.
std::map<std::string, std::string> NcclEnvFor(const plan::Plan& plan, const NodeState& node);

// "tcp" | "ibverbs": the gloo transport for this node under the plan
// (auto = ibverbs where the first rail is a live RDMA device).
std::string GlooTransportFor(const plan::Plan& plan, const NodeState& node);

}  // namespace clustercert::controller
