#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// The environment a collective worker may be given. The agent runs as root
// and the workers inherit that, so a variable that loads code (LD_PRELOAD,
// NCCL_NET_PLUGIN), picks binaries (PATH) or reads or writes a file at a
// caller's path (LD_DEBUG_OUTPUT, NCCL_DEBUG_FILE, NCCL_TOPO_FILE) would hand
// root to whoever can start a collective. Allowed: NCCL_* and GLOO_* tuning
// variables except those plugin and file ones, and a few CUDA/OpenMP knobs
// (kWorkerEnvExtras); nothing else. Names match [A-Z_][A-Z0-9_]* (so never
// '=' or NUL, which would split or end the "NAME=value" the worker gets),
// values are at most 1024 bytes without control characters. InvalidArgument
// names the variable (escaped and clipped: it is a caller's text), why, and
// the fix.
// The plan check and the agent both apply it.
absl::Status CheckWorkerEnv(absl::string_view name, absl::string_view value);

inline constexpr const char* kWorkerEnvExtras[] = {"CUDA_DEVICE_MAX_CONNECTIONS",
                                                   "CUDA_MODULE_LOADING", "CUDA_LAUNCH_BLOCKING",
                                                   "OMP_NUM_THREADS"};

}  // namespace clustercert
