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

// What every acquisition below shares: `create` fills in a new handle and
// returns the CUDA result; on success `owner` takes the handle, else the
// CudaCallFailed sentence for `call` comes back.
template <typename Owner, typename Create>
std::string AcquireOwned(const std::string& call, int device, Owner& owner, Create create) {
  typename Owner::pointer handle = nullptr;
  cudaError_t result = create(&handle);
  if (result != cudaSuccess) return CudaCallFailed(call, device, result);
  owner.reset(handle);
  return "";
}

// Each returns "" and fills `owner`, or the CudaCallFailed sentence; the
// current device must already be `device` (it is named in the sentence).
inline std::string AllocateDeviceMemory(size_t bytes, int device, DeviceMemory& owner) {
  return AcquireOwned("cudaMalloc of " + std::to_string(bytes) + " bytes", device, owner,
                      [bytes](void** pointer) { return cudaMalloc(pointer, bytes); });
}

inline std::string AllocatePinnedHostMemory(size_t bytes, int device, PinnedHostMemory& owner) {
  return AcquireOwned("cudaMallocHost of " + std::to_string(bytes) + " bytes", device, owner,
                      [bytes](void** pointer) { return cudaMallocHost(pointer, bytes); });
}

inline std::string CreateStream(int device, CudaStream& owner) {
  return AcquireOwned("cudaStreamCreateWithFlags", device, owner, [](cudaStream_t* stream) {
    return cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
  });
}

inline std::string CreateEvent(int device, CudaEvent& owner) {
  return AcquireOwned("cudaEventCreate", device, owner,
                      [](cudaEvent_t* event) { return cudaEventCreate(event); });
}

}  // namespace clustercert::workers::nccl_worker
