// gpu-memory-probe: the verbs memory provider against a live GPU, for
// bench/gpu_check.sh. Allocates a cudaMalloc buffer through the provider the
// peer tests use (agent/peer MakeCudaMemory) and, on every RDMA device the
// host has, registers it (nvidia-peermem first, then DMA-BUF) and prints the
// path taken. With no RDMA device it says so and registers nothing: the
// allocation alone is still checked.
//
//   gpu-memory-probe [--cuda-device N] [--bytes B]
//
// Exit 0: allocated (and registered on each RDMA device found); 1: a failure,
// named on stderr; 3: no CUDA device (the nccl worker's "no GPU" code).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "agent/peer/memory_provider.h"
#include "agent/peer/verbs_resources.h"

namespace {

using clustercert::agent::peer::Buffer;
using clustercert::agent::peer::Context;
using clustercert::agent::peer::DeviceList;
using clustercert::agent::peer::MakeCudaMemory;
using clustercert::agent::peer::MemoryProvider;
using clustercert::agent::peer::ProtectionDomain;

constexpr int kExitNoDevice = 3;
constexpr size_t kDefaultBytes = 1 << 20;
constexpr size_t kMaxBytes = size_t{1} << 34;  // 16 GiB: a probe, not a test

struct ProbeOptions {
  int cuda_device = 0;
  size_t bytes = kDefaultBytes;
};

bool ParseOptions(int argc, char** argv, ProbeOptions& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || (flag != "--cuda-device" && flag != "--bytes")) {
      std::fprintf(stderr,
                   "gpu-memory-probe: unknown or incomplete argument '%s': use --cuda-device N "
                   "and --bytes B\n",
                   flag.c_str());
      return false;
    }
    const char* value = argv[++i];
    bool ok = flag == "--cuda-device"
                  ? absl::SimpleAtoi(value, &options.cuda_device) && options.cuda_device >= 0
                  : absl::SimpleAtoi(value, &options.bytes) && options.bytes > 0 &&
                        options.bytes <= kMaxBytes;
    if (!ok) {
      std::fprintf(stderr,
                   "gpu-memory-probe: %s is '%s': give a whole number (bytes 1 to 2^34, "
                   "device 0 or more)\n",
                   flag.c_str(), value);
      return false;
    }
  }
  return true;
}

// Registers `buffer` on RDMA device `name`; prints one line either way.
bool RegisterOn(const std::string& name, Buffer& buffer, const MemoryProvider& provider) {
  auto context = Context::Open(name);
  if (!context.ok()) {
    std::printf("register %s: cannot open the device: %s\n", name.c_str(),
                std::string(context.status().message()).c_str());
    return false;
  }
  auto domain = ProtectionDomain::Allocate(*context);
  if (!domain.ok()) {
    std::printf("register %s: %s\n", name.c_str(), std::string(domain.status().message()).c_str());
    return false;
  }
  auto region = buffer.Register(
      domain->get(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!region.ok()) {
    std::printf("register %s: failed: %s\n", name.c_str(),
                std::string(region.status().message()).c_str());
    return false;
  }
  std::printf("register %s: ok, %s\n", name.c_str(), provider.Describe().c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ProbeOptions options;
  if (!ParseOptions(argc, argv, options)) return 1;
  auto provider = MakeCudaMemory(options.cuda_device);
  if (!provider.ok()) {
    std::fprintf(stderr, "gpu-memory-probe: %s\n",
                 std::string(provider.status().message()).c_str());
    return kExitNoDevice;
  }
  auto buffer = (*provider)->Allocate(options.bytes);
  if (!buffer.ok()) {
    std::fprintf(stderr, "gpu-memory-probe: %s\n", std::string(buffer.status().message()).c_str());
    return 1;
  }
  std::printf("allocated %zu bytes on %s (cudaMalloc, zeroed)\n", (*buffer)->size(),
              (*provider)->Describe().c_str());
  auto devices = DeviceList::Get();
  if (!devices.ok() || devices->size() == 0) {
    std::printf("no RDMA device (%s): GPUDirect registration not tried\n",
                devices.ok() ? "ibv_get_device_list found none"
                             : std::string(devices.status().message()).c_str());
    return 0;
  }
  bool all = true;
  for (const std::string& name : devices->names())
    all = RegisterOn(name, **buffer, **provider) && all;
  return all ? 0 : 1;
}
