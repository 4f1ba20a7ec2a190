#pragma once

// The size sweep of an allreduce run, as nccl-tests takes it (-b -e -f -w -n).
// Plain C++ only: the GPU worker builds from this directory with CUDA + NCCL
// and nothing else.

#include <cstdint>
#include <string>
#include <vector>

namespace clustercert::sweep {

struct SweepSpec {
  int64_t min_bytes = 8;
  int64_t max_bytes = int64_t{8} << 30;
  int factor = 2;
  int warmup_iters = 5;  // nccl-tests -w
  int iters = 20;        // nccl-tests -n
  bool in_place = true;  // also time the in-place variant (nccl-tests always does)
};

// The sizes of the sweep in bytes: min, min*factor, ... up to max, each
// rounded down to a whole number of `element_bytes` (at least one element),
// and none above `memory_cap_bytes` (0: no cap). Empty when min > the cap.
std::vector<int64_t> SweepSizes(const SweepSpec& spec, int element_bytes, int64_t memory_cap_bytes);

// "" when the spec can run, else a sentence naming the bad value and the fix.
std::string ValidateSweepSpec(const SweepSpec& spec);

}  // namespace clustercert::sweep
