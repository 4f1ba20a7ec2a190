#pragma once

#include <memory>

#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// The boundary to the GPU driver: the CUDA driver and runtime versions and
// the visible GPUs. Never fails: when there is no driver (or the agent was
// built without CUDA) driver_present is false and `reason` says why.
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual v1::GpuRuntime Read() = 0;
};

// The CUDA runtime source when built with the CUDA toolkit
// (cuda_gpu_source_cuda.cc), otherwise one that reports
// "built without the CUDA toolkit" (cuda_gpu_source_nocuda.cc).
std::unique_ptr<GpuSource> MakeGpuSource();

}  // namespace clustercert::agent::inventory
