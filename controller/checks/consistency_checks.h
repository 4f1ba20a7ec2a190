#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// Checks that the nodes run the same software and firmware. A node that runs
// a different NCCL, GPU driver or NIC firmware from its peers passes every
// per-node check and still hangs or slows the first collective, so each
// version is compared with the majority of the reachable nodes that report it:
//   consistency.nic_firmware (error): fw_ver of the plan's rails, compared
//     only among NICs of the same model (hca_type, else the board model).
//   consistency.kernel (warning): Stack.kernel_release.
//   consistency.ofed (error): Stack.ofed_version, else "rdma-core <version>".
//   consistency.gpu_driver (error): Stack.nvidia_driver_version; when no node
//     reports it, GpuRuntime.driver_version (the CUDA driver API version), so
//     the two are never compared with each other.
//   consistency.cuda (warning): GpuRuntime.runtime_version.
//   consistency.nccl (error): Stack.nccl_version.
// Each node that differs from a strict majority fails, naming its value, the
// majority's and how many have it; with no strict majority one finding per
// distinct value says the cluster is split. A node that does not report a
// value is not judged (other checks report it unknown). When every reporting
// node agrees there is one pass per area (per NIC model for firmware); with
// fewer than two reporting nodes, or a one-node plan, the area is skipped.
std::vector<v1::Finding> EvaluateConsistency(const plan::Plan& plan,
                                             const std::vector<NodeEvidence>& nodes);

// What the consistency checks compare for one node, for the certificate:
// nic_firmware lists the plan's rails the inventory reports as
// "mlx5_0 MT4129 28.39.1002".
v1::NodeVersions NodeVersionsOf(const v1::Inventory& inventory, const plan::Node& node);

}  // namespace clustercert::controller::checks
