#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::controller::pairwise {

// Each GPU of a node with the plan rail nearest it (nvidia-smi topo's
// relation: PIX < PXB < PHB < NODE < SYS, ties to the earlier rail), in GPU
// index order. The first `max_gpus` GPUs (0: all) are marked tested: the
// pairwise phase runs their cuda cells on that rail, so every GPU's
// GPUDirect path is measured, not only the one beside each NIC. A GPU with
// no path to any plan rail gets the first rail with relation "unknown".
std::vector<v1::GpuRail> MapGpusToRails(const v1::Inventory& inventory,
                                        const std::vector<std::string>& rails, int max_gpus);

// The tested GPUs of `map` on `rail`, as "cuda:N", in index order.
std::vector<std::string> GpusOnRail(const std::vector<v1::GpuRail>& map, const std::string& rail);

}  // namespace clustercert::controller::pairwise
