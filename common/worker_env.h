#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// One variable a collective worker may be given, and why that is safe.
struct WorkerEnvVariable {
  const char* name;
  const char* why;  // what it tunes and what its value is (never a path)
};

// The environment a collective worker may be given: exactly these names, no
// prefixes. The agent runs as root and the workers inherit that, so a
// variable that loads code (LD_PRELOAD, NCCL_NET_PLUGIN, NCCL_IBVERBS_LIB),
// picks binaries (PATH) or reads or writes a file at a caller's path
// (NCCL_DEBUG_FILE, NCCL_PROXY_PROFILE) would hand root to whoever can start
// a collective; NCCL adds such variables from release to release, so a
// deny-list falls behind. Each entry tunes NCCL, gloo, CUDA or OpenMP with a
// number, a keyword or a list of interface or device names, as NCCL's
// "Environment Variables" documentation and its source (NCCL_PARAM integers,
// ncclGetEnv strings) read them. It holds every variable the controller
// derives (NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_TC, NCCL_SOCKET_IFNAME,
// NCCL_DEBUG) and every one the shipped plans and docs use. docs/security.md
// ("The worker environment") lists the same table and how to ask for a name.
extern const WorkerEnvVariable kWorkerEnvAllowed[];
extern const size_t kWorkerEnvAllowedCount;

// Names that are refused with their own reason: each makes NCCL (or RCCL, or
// an NCCL plugin) load a library or read or write a file at the path it
// holds. They are not on the allow-list either; naming them gives a better
// error and lets a test hold each one.
extern const WorkerEnvVariable kWorkerEnvRefused[];
extern const size_t kWorkerEnvRefusedCount;

// OK when `name` is on kWorkerEnvAllowed and `value` is at most 1024 bytes of
// letters, digits and _ , . : ; = ^ + - (what numbers, keywords and name
// lists are spelled with; never '/', so no value spells an absolute path).
// Names match [A-Z_][A-Z0-9_]* (so never '=' or NUL, which would split or end
// the "NAME=value" the worker gets). InvalidArgument names the variable
// (escaped and clipped: it is a caller's text), why, where the list is and
// how to ask for an addition. The plan check and the agent both apply it.
absl::Status CheckWorkerEnv(absl::string_view name, absl::string_view value);

}  // namespace clustercert
