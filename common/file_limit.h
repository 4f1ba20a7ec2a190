#pragma once

#include <cstdint>

namespace clustercert {

// The process's open-file limit (RLIMIT_NOFILE) before and after
// RaiseOpenFileLimit.
struct OpenFileLimit {
  uint64_t before = 0;  // the soft limit found
  uint64_t after = 0;   // the soft limit now
  uint64_t hard = 0;    // the most an unprivileged raise can reach
};

// Raises the soft open-file limit to at least `wanted`, as far as the hard
// limit allows (the controller holds a connection per agent: 1,024 nodes
// passed the common soft limit of 1,024 and lost nodes to "Too many open
// files"). Never lowers it. `after < wanted` means the hard limit is lower.
OpenFileLimit RaiseOpenFileLimit(uint64_t wanted);

}  // namespace clustercert
