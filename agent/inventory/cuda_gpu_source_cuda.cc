#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/inventory/gpu_source.h"

namespace clustercert::agent::inventory {
namespace {

constexpr int kPciBusIdBytes = 32;

// 13000 -> "13.0", 12040 -> "12.4" (CUDA encodes 1000 * major + 10 * minor).
std::string CudaVersionText(int version) {
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

// nvidia-smi's spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string UuidText(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return absl::StrFormat("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                         b[12], b[13], b[14], b[15]);
}

// "00000000:41:00.0" or "0000:41:00.0" -> "0000:41:00.0", the sysfs spelling.
std::string PciAddressText(const char* bus_id) {
  std::string text = absl::AsciiStrToLower(bus_id);
  auto colon = text.find(':');
  if (colon != std::string::npos && colon > 4) text.erase(0, colon - 4);
  return text;
}

std::string ErrorText(cudaError_t error) {
  return absl::StrCat(cudaGetErrorString(error), " (", cudaGetErrorName(error), ")");
}

// The live GpuSource over the CUDA runtime API. Bus ids are lowercased so they
// compare equal to sysfs PCI addresses ("0000:41:00.0").
class CudaGpuSource : public GpuSource {
 public:
  v1::GpuRuntime Read() override {
    v1::GpuRuntime runtime;
    int runtime_version = 0;
    if (cudaRuntimeGetVersion(&runtime_version) == cudaSuccess) {
      runtime.set_runtime_version(CudaVersionText(runtime_version));
    }
    int driver_version = 0;
    cudaError_t error = cudaDriverGetVersion(&driver_version);
    if (error != cudaSuccess || driver_version == 0) {
      // With no libcuda the call succeeds and reports 0; ask for devices to get the runtime's
      // words.
      int ignored = 0;
      cudaError_t count_error = cudaGetDeviceCount(&ignored);
      cudaError_t shown = error != cudaSuccess ? error : count_error;
      runtime.set_driver_present(false);
      runtime.set_reason(absl::StrCat(
          "no GPU driver: ",
          shown != cudaSuccess ? ErrorText(shown) : std::string("cudaDriverGetVersion reports 0")));
      return runtime;
    }
    runtime.set_driver_version(CudaVersionText(driver_version));
    int count = 0;
    error = cudaGetDeviceCount(&count);
    if (error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice) {
      runtime.set_driver_present(error == cudaErrorNoDevice);
      runtime.set_reason(absl::StrCat(
          error == cudaErrorNoDevice ? "no CUDA device: " : "no GPU driver: ", ErrorText(error)));
      return runtime;
    }
    if (error != cudaSuccess) {
      runtime.set_driver_present(true);
      runtime.set_reason(absl::StrCat("cudaGetDeviceCount failed: ", ErrorText(error)));
      return runtime;
    }
    runtime.set_driver_present(true);
    if (count == 0) runtime.set_reason("the driver reports no CUDA device");
    for (int device = 0; device < count; ++device) {
      auto* gpu = runtime.add_gpus();
      gpu->set_index(device);
      cudaDeviceProp prop{};
      error = cudaGetDeviceProperties(&prop, device);
      if (error != cudaSuccess) {
        runtime.set_reason(
            absl::StrCat("cudaGetDeviceProperties(", device, ") failed: ", ErrorText(error)));
        continue;
      }
      gpu->set_name(prop.name);
      gpu->set_uuid(UuidText(prop.uuid));
      gpu->set_memory_bytes(prop.totalGlobalMem);
      char bus_id[kPciBusIdBytes] = {};
      if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device) == cudaSuccess) {
        gpu->set_pci_bus_id(PciAddressText(bus_id));
      }
    }
    return runtime;
  }
};

}  // namespace

std::unique_ptr<GpuSource> MakeGpuSource() { return std::make_unique<CudaGpuSource>(); }

}  // namespace clustercert::agent::inventory
