#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// A kernel module an RDMA node needs, and which device (or what) needs it.
struct ExpectedModule {
  std::string name;    // "mlx5_ib"
  std::string reason;  // "mlx5_0", "userspace verbs"
};

// The modules the node's RDMA devices need: ib_core and ib_uverbs always
// (userspace verbs: perftest, NCCL), mlx5_core and mlx5_ib for an mlx5_N
// device, rdma_rxe for a soft-RoCE device (rxeN, or a device with a parent
// netdev). Derived from the devices present, so the soft-RoCE lab is
// judged on rdma_rxe and a ConnectX host on mlx5_*.
std::vector<ExpectedModule> ExpectedStackModules(const v1::Inventory& inventory);

// The kernel-module checks of the host stack, on RDMA fabrics:
//   stack.modules (error): every ExpectedStackModules entry is loaded
//     (/proc/modules, or built in: /sys/module/<m> without initstate).
//   stack.srcversion (error): each loaded expected module's
//     /sys/module/<m>/srcversion equals the srcversion of the file the
//     running kernel's modules.dep names for it (what `modinfo -F
//     srcversion <m>` prints); a difference means a DKMS or OFED rebuild
//     was installed and never loaded. Skipped when the inventory holds no
//     module file (a capture without /lib/modules, an older agent).
//   stack.module_order (warning): the modules were loaded in the seed's
//     order (the RDMA stack, then the NVIDIA driver, then nvidia_peermem),
//     inferred from their lines in /proc/modules, where the kernel puts each
//     newly loaded module first.
void AppendModuleChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
