#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// The PCIe relation between a GPU and a NIC in nvidia-smi topo's legend,
// computed from the two resolved sysfs paths the way NCCL does. It exists
// because GPUDirect RDMA is only worth enabling up to PHB
// (NCCL_NET_GDR_LEVEL=PHB): a GPU on another socket (SYS) or host bridge
// (NODE) silently falls back to staging through host memory.
//
//   SYS   different NUMA nodes
//   NODE  same NUMA node, different host bridges (pciDDDD:BB roots)
//   PHB   same host bridge, the paths meet only there
//   PXB   meet below the host bridge, through more than one PCIe switch
//   PIX   meet below the host bridge, through at most one PCIe switch
//
// Like NCCL, a switch's upstream and downstream ports fold into one node:
// going up from a device skips two path components at a time.
//
// `path_a` and `path_b` are resolved host paths such as
// "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0". A NUMA node left
// unset is not taken as a difference. InvalidArgument when a path is not
// under /sys/devices/pciDDDD:BB.
absl::StatusOr<std::string> ClassifyPciRelation(absl::string_view path_a, std::optional<int> numa_a,
                                                absl::string_view path_b,
                                                std::optional<int> numa_b);

// One GpuNicPath for every (role "gpu", role "nic") pair in `functions`,
// GPUs in order, then NICs in order. A pair that cannot be classified (a path
// unknown) is left out and explained in `unknowns` when it is not null.
std::vector<v1::GpuNicPath> BuildGpuNicPaths(const std::vector<v1::PciFunction>& functions,
                                             std::vector<v1::Unknown>* unknowns);

}  // namespace clustercert::agent::inventory
