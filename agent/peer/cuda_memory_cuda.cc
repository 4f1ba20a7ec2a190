#include <cuda.h>  // driver API types only; the one driver call is looked up at run time
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/memory_provider.h"
#include "agent/peer/verbs_resources.h"

// GPU memory for verbs tests. Registration tries the two GPUDirect RDMA paths
// in NCCL's order: ibv_reg_mr on the device pointer, which works when the
// nvidia-peermem module is loaded, then a DMA-BUF exported by the driver
// (cuMemGetHandleForAddressRange) and registered with ibv_reg_dmabuf_mr.
// The driver function is fetched through the runtime's entry-point lookup, so
// the agent links only cudart and still starts on hosts without a GPU driver.
namespace clustercert::agent::peer {
namespace {

// perftest rounds GPU buffers up to the GPU's 64 KiB page.
constexpr size_t kGpuPageBytes = 64 * 1024;

std::string ErrorText(cudaError_t error) {
  return absl::StrCat(cudaGetErrorString(error), " (", cudaGetErrorName(error), ")");
}

// What the provider and its buffers share: the path the last registration took.
struct CudaState {
  int device = 0;
  std::mutex mutex;
  std::string path;  // "nvidia-peermem" or "DMA-BUF" once a registration worked
};

#if CUDA_VERSION >= 11070
using GetHandleForAddressRange = CUresult (*)(void* handle, CUdeviceptr dptr, size_t size,
                                              CUmemRangeHandleType type, unsigned long long flags);

absl::StatusOr<GetHandleForAddressRange> LookUpGetHandle() {
  void* function = nullptr;
  cudaError_t error;
#if CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  error = cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &function, 11070,
                                           cudaEnableDefault, &found);
  if (error == cudaSuccess && found != cudaDriverEntryPointSuccess) function = nullptr;
#elif CUDART_VERSION >= 12000
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  error = cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &function, cudaEnableDefault,
                                  &found);
  if (error == cudaSuccess && found != cudaDriverEntryPointSuccess) function = nullptr;
#else
  error = cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &function, cudaEnableDefault);
#endif
  if (error != cudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("looking up cuMemGetHandleForAddressRange failed: ", ErrorText(error)));
  }
  if (function == nullptr) {
    return absl::FailedPreconditionError(
        "the GPU driver has no cuMemGetHandleForAddressRange (DMA-BUF export needs driver 11.7 "
        "or later)");
  }
  return reinterpret_cast<GetHandleForAddressRange>(function);
}

// Exports [data, data + size) as a DMA-BUF and registers it. The export must
// cover whole host pages, so it starts at the page holding `data`; the MR's
// iova is `data` itself, so the peer addresses it exactly as with ibv_reg_mr.
absl::StatusOr<MemoryRegion> RegisterAsDmaBuf(ibv_pd* pd, void* data, size_t size, int access,
                                              const std::string& what) {
  absl::StatusOr<GetHandleForAddressRange> get_handle = LookUpGetHandle();
  if (!get_handle.ok()) return get_handle.status();
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const auto address = reinterpret_cast<uint64_t>(data);
  const uint64_t aligned = address & ~(page - 1);
  const uint64_t offset = address - aligned;
  const uint64_t aligned_size = (size + offset + page - 1) & ~(page - 1);
  int fd = -1;
  const CUresult result = (*get_handle)(&fd, static_cast<CUdeviceptr>(aligned), aligned_size,
                                        CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (result != CUDA_SUCCESS || fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cuMemGetHandleForAddressRange(DMA_BUF_FD) failed with CUresult ", static_cast<int>(result),
        result == CUDA_ERROR_NOT_SUPPORTED ? " (not supported: the GPU, driver or kernel lacks "
                                             "DMA-BUF)"
                                           : ""));
  }
  absl::StatusOr<MemoryRegion> region =
      MemoryRegion::RegisterDmaBuf(pd, offset, size, address, fd, access, what);
  // The MR holds its own reference to the DMA-BUF; our descriptor is no longer needed.
  close(fd);
  return region;
}
#else
absl::StatusOr<MemoryRegion> RegisterAsDmaBuf(ibv_pd*, void*, size_t, int, const std::string&) {
  return absl::UnimplementedError(
      "DMA-BUF registration is not built: the CUDA toolkit is older than 11.7");
}
#endif

class CudaBuffer : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<CudaState> state, void* data, size_t size)
      : state_(std::move(state)), data_(data), size_(size) {}
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer() override {
    cudaSetDevice(state_->device);
    cudaFree(data_);
  }

  void* data() const override { return data_; }
  size_t size() const override { return size_; }
  bool host_accessible() const override { return false; }

  absl::StatusOr<MemoryRegion> Register(ibv_pd* pd, int access) override {
    const std::string what = absl::StrCat("cuda:", state_->device, " memory");
    absl::StatusOr<MemoryRegion> peermem = MemoryRegion::Register(pd, data_, size_, access, what);
    if (peermem.ok()) {
      SetPath("nvidia-peermem");
      return peermem;
    }
    absl::StatusOr<MemoryRegion> dmabuf = RegisterAsDmaBuf(pd, data_, size_, access, what);
    if (dmabuf.ok()) {
      SetPath("DMA-BUF");
      return dmabuf;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "cuda:", state_->device,
        " memory cannot be registered with the RDMA device. Through nvidia-peermem: ",
        peermem.status().message(), ". As a DMA-BUF: ", dmabuf.status().message(),
        ". Load nvidia-peermem (modprobe nvidia-peermem) or use a GPU driver, kernel and "
        "rdma-core with DMA-BUF support"));
  }

 private:
  void SetPath(const char* path) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->path = path;
  }

  std::shared_ptr<CudaState> state_;
  void* data_;
  size_t size_;
};

class CudaMemory : public MemoryProvider {
 public:
  explicit CudaMemory(int device) : state_(std::make_shared<CudaState>()) {
    state_->device = device;
  }

  absl::StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes) override {
    const std::string name = absl::StrCat("cuda:", state_->device);
    if (bytes == 0) return absl::InvalidArgumentError(name + ": a buffer of 0 bytes was requested");
    if (bytes > SIZE_MAX - kGpuPageBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": a buffer of ", bytes, " bytes cannot be allocated"));
    }
    const size_t size = (bytes + kGpuPageBytes - 1) / kGpuPageBytes * kGpuPageBytes;
    cudaError_t error = cudaSetDevice(state_->device);
    if (error != cudaSuccess) {
      return absl::FailedPreconditionError(
          absl::StrCat("cudaSetDevice(", state_->device, ") failed: ", ErrorText(error)));
    }
    void* data = nullptr;
    error = cudaMalloc(&data, size);
    if (error != cudaSuccess) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cudaMalloc of ", size, " bytes on ", name, " failed: ", ErrorText(error)));
    }
    auto buffer = std::make_unique<CudaBuffer>(state_, data, size);
    error = cudaMemset(data, 0, size);
    if (error == cudaSuccess) error = cudaDeviceSynchronize();
    if (error != cudaSuccess) {
      return absl::InternalError(
          absl::StrCat("zeroing ", size, " bytes on ", name, " failed: ", ErrorText(error)));
    }
    return std::unique_ptr<Buffer>(std::move(buffer));
  }

  std::string Describe() const override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->path.empty()) return absl::StrCat("cuda:", state_->device);
    return absl::StrCat("cuda:", state_->device, " via ", state_->path);
  }

 private:
  std::shared_ptr<CudaState> state_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MemoryProvider>> MakeCudaMemory(int device) {
  const std::string name = absl::StrCat("cuda:", device);
  if (device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory ", name, " is not a CUDA device index (0 or more)"));
  }
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice) {
    return absl::FailedPreconditionError(absl::StrCat(
        "memory ", name,
        " cannot be used: no usable GPU driver (cudaGetDeviceCount: ", ErrorText(error),
        "); check that the NVIDIA driver is loaded, sees the GPU (nvidia-smi) and is at least as "
        "new as the CUDA runtime the agent was built with"));
  }
  if (error != cudaSuccess) {
    return absl::FailedPreconditionError(absl::StrCat(
        "memory ", name, " cannot be used: cudaGetDeviceCount failed: ", ErrorText(error),
        "; check that the NVIDIA driver is loaded and sees the GPU (nvidia-smi)"));
  }
  if (device >= count) {
    return absl::NotFoundError(absl::StrCat("memory ", name, " names no GPU: this host has ", count,
                                            " CUDA device", count == 1 ? "" : "s"));
  }
  return std::unique_ptr<MemoryProvider>(std::make_unique<CudaMemory>(device));
}

}  // namespace clustercert::agent::peer
