#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/peer/verbs_resources.h"

// Where a verbs peer test's buffer lives. The engine asks a MemoryProvider for
// one Buffer and registers it with the protection domain through the buffer
// itself, because how to register depends on the memory: host memory with
// ibv_reg_mr; GPU memory with ibv_reg_mr through nvidia-peermem, or as a
// DMA-BUF. The provider says afterwards which path was taken, for the result's
// memory_path ("host", "cuda:0 via nvidia-peermem", "cuda:0 via DMA-BUF").
namespace clustercert::agent::peer {

// A buffer owned until destroyed. Destroy it only after every MemoryRegion
// made from it.
class Buffer {
 public:
  virtual ~Buffer() = default;

  virtual void* data() const = 0;
  virtual size_t size() const = 0;
  // Whether the CPU may read and write data() (write_lat polls it).
  virtual bool host_accessible() const = 0;
  // Registers the whole buffer with `pd` for `access` (IBV_ACCESS_* flags).
  virtual absl::StatusOr<MemoryRegion> Register(ibv_pd* pd, int access) = 0;
};

class MemoryProvider {
 public:
  virtual ~MemoryProvider() = default;

  // Zeroed memory of at least `bytes` (the provider may round up).
  virtual absl::StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes) = 0;
  // "host", "cuda:0" before a registration, "cuda:0 via nvidia-peermem" after.
  virtual std::string Describe() const = 0;
};

// A PeerTestSpec's memory field: "host" (or empty) or "cuda:N".
struct MemorySpec {
  static constexpr int kMaxCudaDevice = 255;
  enum class Kind { kHost, kCuda };

  Kind kind = Kind::kHost;
  int cuda_device = 0;

  // InvalidArgument naming the value and the accepted forms.
  static absl::StatusOr<MemorySpec> Parse(absl::string_view text);
  // "host" or "cuda:3".
  std::string ToString() const;
};

// GPU memory of CUDA device `device` (cudaSetDevice/cudaMalloc). Implemented
// in cuda_memory_cuda.cc with the CUDA toolkit; otherwise Unimplemented.
absl::StatusOr<std::unique_ptr<MemoryProvider>> MakeCudaMemory(int device);

// The provider `spec` names.
absl::StatusOr<std::unique_ptr<MemoryProvider>> MakeMemoryProvider(const MemorySpec& spec);

}  // namespace clustercert::agent::peer
