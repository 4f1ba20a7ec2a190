// collective-worker-nccl: one rank of a collective sweep (--operation) over NCCL on one
// GPU, launched by the node-agent with the command line of
// sweep/worker_options.h and speaking sweep/worker_protocol.h on
// stdin/stdout (its own copy of stdout: descriptor 1 is pointed at stderr,
// where NCCL's log, which NCCL prints to stdout, then goes). --copy-check runs the
// host<->device copy check instead; --print-table --ranks 1 runs alone and
// prints nccl-tests' table (bench/gpu_check.sh). Exit 0 after `done`, 3 when
// the host has no CUDA device, 1 after any other `fail`.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sweep/worker_main.h"
#include "workers/nccl/copy_check.h"
#include "workers/nccl/cuda_resources.h"
#include "workers/nccl/nccl_backend.h"

namespace clustercert::workers::nccl_worker {
namespace {

// Distinct so the agent (and gpu_check.sh) can tell "no GPU here" from a failure.
constexpr int kExitNoDevice = 3;

using sweep::WorkerOutput;

// "device cuda:0 NVIDIA H200 pci 0000:1B:00.0", or "" when CUDA will not say.
std::string DeviceNote(int device) {
  cudaDeviceProp properties{};
  char bus_id[32] = {};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) return "";
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device) != cudaSuccess) return "";
  return "device cuda:" + std::to_string(device) + " " + properties.name + " pci " + bus_id;
}

int RunCopyCheckMode(const sweep::WorkerOptions& options, int device, WorkerOutput& output) {
  CopyCheckResult result = RunCopyCheck(device, options.memory_cap_bytes);
  if (!result.error.empty())
    return output.Fail("rank " + std::to_string(options.rank) + ": " + result.error);
  output.Note(CopyCheckNote(result));
  if (!result.matched) {
    return output.Fail("rank " + std::to_string(options.rank) + ": " +
                       std::to_string(result.bytes) +
                       " bytes copied host -> cuda:" + std::to_string(device) +
                       " -> host came back different: the GPU or its PCIe link corrupts data; "
                       "check dmesg for Xid/AER errors and take the GPU out of service");
  }
  return output.Done();
}

int RunWorker(const sweep::WorkerOptions& options, WorkerOutput& output,
              sweep::WorkerChannel& channel) {
  int device_count = 0;
  cudaError_t result = cudaGetDeviceCount(&device_count);
  if (result != cudaSuccess || device_count == 0) {
    const std::string why = result != cudaSuccess
                                ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(result)
                                : std::string("cudaGetDeviceCount found 0 devices");
    return output.Fail("no CUDA device on this host (" + why +
                           "): the nccl backend needs GPUs; use collectives.backend: gloo on "
                           "hosts without them",
                       kExitNoDevice);
  }
  const int device = options.cuda_device >= 0 ? options.cuda_device : options.local_rank;
  if (device >= device_count) {
    return output.Fail(
        "rank " + std::to_string(options.rank) + " wants cuda:" + std::to_string(device) + " (" +
        (options.cuda_device >= 0 ? "--cuda-device" : "--local-rank") + ") but this host shows " +
        std::to_string(device_count) + " CUDA devices: place at most " +
        std::to_string(device_count) + " ranks per node or check CUDA_VISIBLE_DEVICES");
  }
  if (std::string note = DeviceNote(device); !note.empty()) output.Note(note);
  if (options.copy_check) return RunCopyCheckMode(options, device, output);

  std::string invalid = sweep::ValidateSweepSpec(options.sweep);
  if (!invalid.empty()) return output.Fail(invalid);
  std::string error;
  std::unique_ptr<NcclCollectiveBackend> backend = NcclCollectiveBackend::Create(
      options, device, options.print_table ? nullptr : &channel, error);
  if (!backend) return output.Fail(error);
  if (backend->MemoryCapBytes() < options.sweep.max_bytes) {
    output.Note("sweep capped at " + std::to_string(backend->MemoryCapBytes()) +
                " bytes: cuda:" + std::to_string(device) + " has " +
                std::to_string(backend->free_bytes_at_start()) + " bytes free");
  }
  return sweep::SweepAndReport(*backend, options.operation, options.sweep, output);
}

}  // namespace
}  // namespace clustercert::workers::nccl_worker

int main(int argc, char** argv) {
  clustercert::sweep::WorkerChannel channel(clustercert::sweep::ReserveStdoutForProtocol(), stdin);
  return clustercert::sweep::RunWorkerMain(argc, argv, "collective-worker-nccl", "nccl", channel,
                                           clustercert::workers::nccl_worker::RunWorker);
}
