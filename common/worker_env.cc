#include "common/worker_env.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"

namespace clustercert {
namespace {

constexpr size_t kMaxValueBytes = 1024;

// NCCL variables that load a library or name a file to read or write.
constexpr const char* kRefusedNccl[] = {
    "NCCL_NET_PLUGIN",      "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_ENV_PLUGIN",
    "NCCL_DEBUG_FILE",      "NCCL_TOPO_FILE",    "NCCL_TOPO_DUMP_FILE",  "NCCL_GRAPH_FILE",
    "NCCL_GRAPH_DUMP_FILE", "NCCL_CONF_FILE"};

bool IsUpperName(absl::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

absl::Status CheckWorkerEnv(absl::string_view name, absl::string_view value) {
  if (!IsUpperName(name) || name.size() > 128) {
    return absl::InvalidArgumentError(absl::StrCat(
        "environment variable '", ClipValue(name),
        "' is not a variable name the workers take (upper-case letters, digits and '_', at "
        "most 128 characters, e.g. NCCL_IB_HCA)"));
  }
  for (const char* refused : kRefusedNccl) {
    if (name == refused) {
      return absl::InvalidArgumentError(absl::StrCat(
          name,
          " is refused: it makes NCCL load a library or open a file at a given path as "
          "root; remove it from collectives.env"));
    }
  }
  bool allowed = absl::StartsWith(name, "NCCL_") || absl::StartsWith(name, "GLOO_");
  for (const char* extra : kWorkerEnvExtras) allowed = allowed || name == extra;
  if (!allowed) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        " is not passed to collective workers: only NCCL_* and GLOO_* variables and "
        "CUDA_DEVICE_MAX_CONNECTIONS, CUDA_MODULE_LOADING, CUDA_LAUNCH_BLOCKING, "
        "OMP_NUM_THREADS are (the loader's LD_*, PATH and the rest would reach a process "
        "running as root); remove it from collectives.env"));
  }
  if (value.size() > kMaxValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, "'s value is ", value.size(),
                                                   " bytes; at most ", kMaxValueBytes,
                                                   " are passed to the workers"));
  }
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "'s value holds a control character (NUL, newline, ...); give it as plain text"));
    }
  }
  return absl::OkStatus();
}

}  // namespace clustercert
