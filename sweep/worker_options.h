#pragma once

// The command line of a collective worker (collective-worker-gloo,
// collective-worker-nccl): the agent builds it with FormatWorkerArgs, the
// worker reads it with ParseWorkerArgs, so both ends agree on one list.
//
//   --rank R --ranks N [--local-rank L] [--operation OP] [--sizes MIN:MAX:FACTOR]
//   [--warmup W] [--iters I] [--no-in-place] [--memory-cap BYTES]
//   [--transport tcp|ibverbs] [--bind-ip IP] [--ib-device DEV]
//   [--ib-port P] [--gid-index G]                  (gloo)
//   [--cuda-device N] [--copy-check]               (nccl)
//   [--print-table]                                 (standalone, --ranks 1)
//   [--timeout-s S]                                 (rendezvous and per-op deadline)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/collective_operation.h"
#include "sweep/sweep_spec.h"

namespace clustercert::sweep {

struct WorkerOptions {
  int rank = 0;
  int ranks = 1;
  int local_rank = 0;
  Operation operation = Operation::kAllReduce;  // --operation all_gather ...
  SweepSpec sweep;
  int64_t memory_cap_bytes = 0;   // 0: the backend's own limit
  std::string transport = "tcp";  // gloo: tcp | ibverbs
  std::string bind_ip;            // gloo tcp: the node's data address
  std::string ib_device;          // gloo ibverbs: mlx5_0 / rxe0
  int ib_port = 1;
  int gid_index = 0;
  int cuda_device = -1;     // nccl: -1 = local_rank
  bool copy_check = false;  // nccl: host<->device copy check instead of a sweep
  // Standalone use (bench/gpu_check.sh): print nccl-tests' table on stdout
  // instead of the agent protocol; only with --ranks 1 (no store needed).
  bool print_table = false;
  double timeout_s = 300;
};

// The documented maxima of a worker's options. The worker runs as root on
// every node, so the agent refuses a request past them before it starts
// any process (agent/service/collective_handlers.cc), the worker refuses
// them again on its command line, and the controller's plan check refuses a
// plan that would ask for them (controller/plan/test_sections.cc).
inline constexpr int kMaxWorldSize = 65536;
inline constexpr int kMaxRanksPerNode = 16;  // 8-GPU HGX nodes with room; never more than GPUs
inline constexpr int64_t kMaxSweepBytes = int64_t{32} << 30;  // per buffer; H200 has 141 GB
inline constexpr int kMaxSweepFactor = 1024;
inline constexpr int kMaxWarmupIters = 1000;
inline constexpr int kMaxIters = 100000;
inline constexpr int64_t kMaxMemoryCapBytes = int64_t{1} << 40;
inline constexpr int kMaxIbPort = 255;    // a u8 in verbs
inline constexpr int kMaxGidIndex = 255;  // the GID table's rows
inline constexpr int kMaxCudaDevice = 63;
inline constexpr double kMaxTimeoutS = 86400;
inline constexpr size_t kMaxIbDeviceNameBytes = 64;  // IBV_SYSFS_NAME_MAX

std::vector<std::string> FormatWorkerArgs(const WorkerOptions& options);

// "" when every option is inside its range and every text option is what it
// claims to be (bind_ip an IP literal, ib_device a device name that cannot
// read as a flag), else a sentence naming the option, its value and the fix.
std::string ValidateWorkerOptions(const WorkerOptions& options);

// On error, `error` gets a sentence naming the flag and the value. The
// parsed options also pass ValidateWorkerOptions.
std::optional<WorkerOptions> ParseWorkerArgs(const std::vector<std::string>& args,
                                             std::string& error);

}  // namespace clustercert::sweep
