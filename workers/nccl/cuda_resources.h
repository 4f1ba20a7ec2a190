#pragma once

// Owning handles for the CUDA runtime objects of collective-worker-nccl
// (device and pinned host memory, streams, events), each released by its
// deleter, and the one sentence shape every failed CUDA call is reported in.
// Plain C++ over the runtime API: the worker has no .cu files.

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <type_traits>

namespace clustercert::workers::nccl_worker {

// "cudaMalloc of 1024 bytes on cuda:0 failed: out of memory (cudaErrorMemoryAllocation)".
inline std::string CudaCallFailed(const std::string& call, int device, cudaError_t result) {
  return call + " on cuda:" + std::to_string(device) + " failed: " + cudaGetErrorString(result) +
         " (" + cudaGetErrorName(result) + ")";
}

struct DeviceMemoryFree {
  void operator()(void* pointer) const { cudaFree(pointer); }
};
using DeviceMemory = std::unique_ptr<void, DeviceMemoryFree>;

struct PinnedHostMemoryFree {
  void operator()(void* pointer) const { cudaFreeHost(pointer); }
};
using PinnedHostMemory = std::unique_ptr<void, PinnedHostMemoryFree>;

struct StreamDestroy {
  void operator()(cudaStream_t stream) const { cudaStreamDestroy(stream); }
};
using CudaStream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;

struct EventDestroy {
  void operator()(cudaEvent_t event) const { cudaEventDestroy(event); }
};
using CudaEvent = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;

// Each returns "" and fills `owner`, or the CudaCallFailed sentence; the
// current device must already be `device` (it is named in the sentence).
inline std::string AllocateDeviceMemory(size_t bytes, int device, DeviceMemory& owner) {
  void* pointer = nullptr;
  cudaError_t result = cudaMalloc(&pointer, bytes);
  if (result != cudaSuccess) {
    return CudaCallFailed("cudaMalloc of " + std::to_string(bytes) + " bytes", device, result);
  }
  owner.reset(pointer);
  return "";
}

inline std::string AllocatePinnedHostMemory(size_t bytes, int device, PinnedHostMemory& owner) {
  void* pointer = nullptr;
  cudaError_t result = cudaMallocHost(&pointer, bytes);
  if (result != cudaSuccess) {
    return CudaCallFailed("cudaMallocHost of " + std::to_string(bytes) + " bytes", device, result);
  }
  owner.reset(pointer);
  return "";
}

inline std::string CreateStream(int device, CudaStream& owner) {
  cudaStream_t stream = nullptr;
  cudaError_t result = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (result != cudaSuccess) return CudaCallFailed("cudaStreamCreateWithFlags", device, result);
  owner.reset(stream);
  return "";
}

inline std::string CreateEvent(int device, CudaEvent& owner) {
  cudaEvent_t event = nullptr;
  cudaError_t result = cudaEventCreate(&event);
  if (result != cudaSuccess) return CudaCallFailed("cudaEventCreate", device, result);
  owner.reset(event);
  return "";
}

}  // namespace clustercert::workers::nccl_worker
