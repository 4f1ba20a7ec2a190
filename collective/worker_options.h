#pragma once

// The command line of a collective worker (collective-worker-gloo,
// collective-worker-nccl): the agent builds it with FormatWorkerArgs, the
// worker reads it with ParseWorkerArgs, so both ends agree on one list.
//
//   --rank R --ranks N [--local-rank L] [--sizes MIN:MAX:FACTOR]
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

#include "collective/sweep_spec.h"

namespace clustercert::collective {

struct WorkerOptions {
  int rank = 0;
  int ranks = 1;
  int local_rank = 0;
  SweepSpec sweep;
  int64_t memory_cap_bytes = 0;  // 0: the backend's own limit
  std::string transport = "tcp"; // gloo: tcp | ibverbs
  std::string bind_ip;           // gloo tcp: the node's data address
  std::string ib_device;         // gloo ibverbs: mlx5_0 / rxe0
  int ib_port = 1;
  int gid_index = 0;
  int cuda_device = -1;          // nccl: -1 = local_rank
  bool copy_check = false;       // nccl: host<->device copy check instead of a sweep
  // Standalone use (bench/gpu_check.sh): print nccl-tests' table on stdout
  // instead of the agent protocol; only with --ranks 1 (no store needed).
  bool print_table = false;
  double timeout_s = 300;
};

std::vector<std::string> FormatWorkerArgs(const WorkerOptions& options);

// On error, `error` gets a sentence naming the flag and the value.
std::optional<WorkerOptions> ParseWorkerArgs(const std::vector<std::string>& args,
                                             std::string& error);

}  // namespace clustercert::collective
