#pragma once

#include <map>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/checks/check_context.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// The NCCL environment that follows from the plan for one node, so that a
// hand-written env cannot silently leave a rail out or pick the wrong GID:
//   NCCL_IB_HCA         "=mlx5_0,mlx5_1": the node's rails, exact names
//   NCCL_IB_GID_INDEX   fabric.roce.gid_index (RoCE)
//   NCCL_IB_TC          DSCP << 2 | ECN (the traffic class qos.traffic_class expects; RoCE)
//   NCCL_IB_SL          fabric.infiniband.service_level (InfiniBand)
//   NCCL_SOCKET_IFNAME  "=<data netdev>": the netdev holding data_ip, else the
//                       first rail's netdev; NCCL's sockets stay on the data
//                       plane, never the management network
// InfiniBand gets the HCA list and the SL; an ethernet (TCP-only) fabric nothing.
// `inventory` may be null (no management netdev then).
std::map<std::string, std::string> DerivedNcclEnv(const plan::Plan& plan, const plan::Node& node,
                                                  const v1::Inventory* inventory);

// collectives.env (NCCL backend only), one finding per derived variable the
// plan's collectives.env sets to something else: NCCL_IB_HCA missing a rail
// or naming a device that is not one, or NCCL_IB_GID_INDEX off the plan's
// gid_index, is an error (RDMA on the wrong GID or a rail idle);
// NCCL_IB_TC and NCCL_SOCKET_IFNAME are warnings. One pass when the plan's
// env agrees or leaves them to the derivation.
void AppendNcclEnvChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
