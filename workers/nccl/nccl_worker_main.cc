// collective-worker-nccl: one rank of an allreduce sweep over NCCL on one
// GPU, launched by the node-agent with the command line of
// collective/worker_options.h and speaking collective/worker_protocol.h on
// stdin/stdout; NCCL's own log goes to stderr. --copy-check runs the
// host<->device copy check instead; --print-table --ranks 1 runs alone and
// prints nccl-tests' table (bench/gpu_check.sh). Exit 0 after `done`, 3 when
// the host has no CUDA device, 1 after any other `fail`.

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collective/allreduce_sweep.h"
#include "collective/sweep_row.h"
#include "collective/sweep_spec.h"
#include "collective/worker_options.h"
#include "collective/worker_output.h"
#include "collective/worker_protocol.h"
#include "workers/nccl/copy_check.h"
#include "workers/nccl/cuda_resources.h"
#include "workers/nccl/nccl_backend.h"

namespace clustercert::workers::nccl_worker {
namespace {

// Distinct so the agent (and gpu_check.sh) can tell "no GPU here" from a failure.
constexpr int kExitNoDevice = 3;

using collective::SteadySeconds;
using collective::WorkerOutput;

// "device cuda:0 NVIDIA H200 pci 0000:1B:00.0", or "" when CUDA will not say.
std::string DeviceNote(int device) {
  cudaDeviceProp properties{};
  char bus_id[32] = {};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) return "";
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device) != cudaSuccess) return "";
  return "device cuda:" + std::to_string(device) + " " + properties.name + " pci " + bus_id;
}

int RunCopyCheckMode(const collective::WorkerOptions& options, int device, WorkerOutput& output) {
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

int RunWorker(const collective::WorkerOptions& options, WorkerOutput& output,
              collective::WorkerChannel& channel) {
  if (options.print_table && options.ranks != 1) {
    return output.Fail("--print-table runs one rank alone, but --ranks is " +
                       std::to_string(options.ranks) + ": drop --print-table or pass --ranks 1");
  }
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

  std::string invalid = collective::ValidateSweepSpec(options.sweep);
  if (!invalid.empty()) return output.Fail(invalid);
  std::string error;
  std::unique_ptr<NcclAllreduceBackend> backend = NcclAllreduceBackend::Create(
      options, device, options.print_table ? nullptr : &channel, error);
  if (!backend) return output.Fail(error);
  if (backend->MemoryCapBytes() < options.sweep.max_bytes) {
    output.Note("sweep capped at " + std::to_string(backend->MemoryCapBytes()) +
                " bytes: cuda:" + std::to_string(device) + " has " +
                std::to_string(backend->free_bytes_at_start()) + " bytes free");
  }
  collective::SweepOutcome outcome = collective::RunAllreduceSweep(
      *backend, options.sweep, SteadySeconds,
      [&output](const collective::SweepRow& row) { output.Row(row); });
  if (!outcome.error.empty()) return output.Fail(outcome.error);
  return output.Done();
}

}  // namespace
}  // namespace clustercert::workers::nccl_worker

int main(int argc, char** argv) {
  using namespace clustercert;
  collective::WorkerChannel channel(stdout, stdin);
  std::optional<collective::WorkerOptions> options =
      collective::ParseWorkerCommandLine(argc, argv, "collective-worker-nccl", channel);
  if (!options) return collective::kWorkerExitFailed;
  collective::WorkerOutput output(channel, options->print_table, "collective-worker-nccl");
  try {
    return workers::nccl_worker::RunWorker(*options, output, channel);
  } catch (const workers::nccl_worker::NcclFailure& failure) {
    return output.Fail(failure.what());
  } catch (const std::exception& failure) {
    return output.Fail("rank " + std::to_string(options->rank) + " of " +
                       std::to_string(options->ranks) + " (nccl) stopped on an unexpected error: " +
                       failure.what() + ": report it with the worker's stderr");
  }
}
