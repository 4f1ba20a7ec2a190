#include "workers/nccl/copy_check.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "workers/nccl/cuda_resources.h"

namespace clustercert::workers::nccl_worker {
namespace {

// A pattern that differs in every 32-bit word, so a dropped or repeated
// chunk shows as a mismatch and not only a zeroed one.
void FillPattern(uint32_t* words, size_t count) {
  for (size_t i = 0; i < count; ++i)
    words[i] = static_cast<uint32_t>(i) * 2654435761u ^ 0x5a5a5a5au;
}

// Copies once untimed, then `repetitions` times between two events; the
// milliseconds of the timed copies, or a sentence in `error`.
float TimeCopies(void* destination, const void* source, size_t bytes, cudaMemcpyKind kind,
                 int repetitions, int device, cudaStream_t stream, cudaEvent_t start,
                 cudaEvent_t stop, std::string& error) {
  const char* direction = kind == cudaMemcpyHostToDevice ? "host-to-device" : "device-to-host";
  cudaError_t result = cudaMemcpyAsync(destination, source, bytes, kind, stream);
  if (result == cudaSuccess) result = cudaEventRecord(start, stream);
  for (int i = 0; i < repetitions && result == cudaSuccess; ++i) {
    result = cudaMemcpyAsync(destination, source, bytes, kind, stream);
  }
  if (result == cudaSuccess) result = cudaEventRecord(stop, stream);
  if (result == cudaSuccess) result = cudaEventSynchronize(stop);
  float milliseconds = 0;
  if (result == cudaSuccess) result = cudaEventElapsedTime(&milliseconds, start, stop);
  if (result != cudaSuccess) {
    error = CudaCallFailed(std::string(direction) + " copy of " + std::to_string(bytes) + " bytes",
                           device, result) +
            ": check the GPU with nvidia-smi and dmesg (Xid errors)";
  }
  return milliseconds;
}

}  // namespace

CopyCheckResult RunCopyCheck(int device, int64_t bytes, int repetitions) {
  CopyCheckResult outcome;
  cudaError_t result = cudaSetDevice(device);
  if (result != cudaSuccess) {
    outcome.error = CudaCallFailed("cudaSetDevice", device, result) +
                    ": check that the device is visible (CUDA_VISIBLE_DEVICES, nvidia-smi)";
    return outcome;
  }
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  result = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (result != cudaSuccess) {
    outcome.error =
        CudaCallFailed("cudaMemGetInfo", device, result) + ": check the GPU with nvidia-smi";
    return outcome;
  }
  if (bytes <= 0) bytes = kDefaultCopyCheckBytes;
  bytes = std::min<int64_t>(bytes, static_cast<int64_t>(free_bytes / 2));
  bytes -= bytes % sizeof(uint32_t);
  if (bytes <= 0) {
    outcome.error = "cuda:" + std::to_string(device) + " has " + std::to_string(free_bytes) +
                    " bytes free, too few for a copy check: free the GPU (nvidia-smi shows who "
                    "holds it)";
    return outcome;
  }
  outcome.bytes = bytes;
  const size_t size = static_cast<size_t>(bytes);

  PinnedHostMemory sent;
  PinnedHostMemory received;
  DeviceMemory on_device;
  CudaStream stream;
  CudaEvent start;
  CudaEvent stop;
  std::string failed = AllocatePinnedHostMemory(size, device, sent);
  if (failed.empty()) failed = AllocatePinnedHostMemory(size, device, received);
  if (failed.empty()) failed = AllocateDeviceMemory(size, device, on_device);
  if (failed.empty()) failed = CreateStream(device, stream);
  if (failed.empty()) failed = CreateEvent(device, start);
  if (failed.empty()) failed = CreateEvent(device, stop);
  if (!failed.empty()) {
    outcome.error = failed + ": lower --memory-cap or free host/GPU memory";
    return outcome;
  }
  FillPattern(static_cast<uint32_t*>(sent.get()), size / sizeof(uint32_t));
  std::memset(received.get(), 0, size);

  const double gigabytes = static_cast<double>(bytes) * repetitions / 1e9;
  float h2d_ms = TimeCopies(on_device.get(), sent.get(), size, cudaMemcpyHostToDevice, repetitions,
                            device, stream.get(), start.get(), stop.get(), outcome.error);
  if (!outcome.error.empty()) return outcome;
  float d2h_ms =
      TimeCopies(received.get(), on_device.get(), size, cudaMemcpyDeviceToHost, repetitions, device,
                 stream.get(), start.get(), stop.get(), outcome.error);
  if (!outcome.error.empty()) return outcome;
  outcome.h2d_gbps = h2d_ms > 0 ? gigabytes / (h2d_ms / 1e3) : 0;
  outcome.d2h_gbps = d2h_ms > 0 ? gigabytes / (d2h_ms / 1e3) : 0;
  outcome.matched = std::memcmp(sent.get(), received.get(), size) == 0;
  return outcome;
}

std::string CopyCheckNote(const CopyCheckResult& result) {
  char text[160];
  std::snprintf(text, sizeof(text), "copy h2d_gbps=%.2f d2h_gbps=%.2f bytes=%lld %s",
                result.h2d_gbps, result.d2h_gbps, static_cast<long long>(result.bytes),
                result.matched ? "ok" : "mismatch");
  return text;
}

}  // namespace clustercert::workers::nccl_worker
