#include "agent/inventory/gpu_source.h"

namespace clustercert::agent::inventory {
namespace {

// The GpuSource of an agent built without the CUDA toolkit: it cannot ask a
// driver, and says so rather than reporting "no GPU".
class NoCudaGpuSource : public GpuSource {
 public:
  v1::GpuRuntime Read() override {
    v1::GpuRuntime runtime;
    runtime.set_driver_present(false);
    runtime.set_reason("built without the CUDA toolkit");
    return runtime;
  }
};

}  // namespace

std::unique_ptr<GpuSource> MakeGpuSource() { return std::make_unique<NoCudaGpuSource>(); }

}  // namespace clustercert::agent::inventory
