#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// The host software stack, first in the seed's triage order:
//   stack.modules, stack.srcversion, stack.module_order (roce/infiniband):
//     AppendModuleChecks (stack_checks.h).
//   stack.ofed (warning, roce/infiniband, when expect.ofed): MLNX_OFED installed.
void AppendStackChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

// The GPU side of the node:
//   gpudirect.peermem (error, when expect.nvidia_peermem and the plan lists
//     GPUs): the node has a GPUDirect RDMA mechanism, nvidia_peermem or
//     DMA-BUF (Stack.gpudirect_mechanism); an inventory without that field is
//     judged as before, on nvidia_peermem (or legacy nv_mem) loaded.
//   gpu.count (when the plan lists GPUs): the number of GPU PCI functions
//     equals node.gpus; fewer is an error, more a warning (the plan is stale).
void AppendGpuChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
