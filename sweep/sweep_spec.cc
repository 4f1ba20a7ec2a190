#include "sweep/sweep_spec.h"

#include <limits>

namespace clustercert::sweep {

std::vector<int64_t> SweepSizes(const SweepSpec& spec, int element_bytes,
                                int64_t memory_cap_bytes) {
  std::vector<int64_t> sizes;
  const int64_t element = element_bytes > 0 ? element_bytes : 1;
  // An invalid spec (ValidateSweepSpec reports it) must not loop forever here:
  // a factor below 2 or a non-positive start never reaches max.
  if (spec.min_bytes < 1 || spec.max_bytes < spec.min_bytes) return sizes;
  const int64_t factor = spec.factor >= 2 ? spec.factor : 0;
  int64_t size = spec.min_bytes;
  while (size <= spec.max_bytes) {
    int64_t rounded = size / element * element;
    if (rounded < element) rounded = element;
    const bool over_cap = memory_cap_bytes > 0 && rounded > memory_cap_bytes;
    if (!over_cap && (sizes.empty() || sizes.back() != rounded)) sizes.push_back(rounded);
    if (factor == 0) break;
    if (size > std::numeric_limits<int64_t>::max() / factor) break;  // next step would overflow
    size *= factor;
  }
  return sizes;
}

std::string ValidateSweepSpec(const SweepSpec& spec) {
  if (spec.min_bytes < 1) {
    return "collectives.sizes.min is " + std::to_string(spec.min_bytes) +
           ": it must be 1 byte or more (nccl-tests -b)";
  }
  if (spec.max_bytes < spec.min_bytes) {
    return "collectives.sizes.max is " + std::to_string(spec.max_bytes) + ", below min " +
           std::to_string(spec.min_bytes) + ": raise max to at least min (nccl-tests -e)";
  }
  if (spec.factor < 2) {
    return "collectives.sizes.factor is " + std::to_string(spec.factor) +
           ": it must be 2 or more (nccl-tests -f)";
  }
  if (spec.warmup_iters < 0) {
    return "collectives.warmup_iters is " + std::to_string(spec.warmup_iters) +
           ": it must be 0 or more (nccl-tests -w)";
  }
  if (spec.iters < 1) {
    return "collectives.iters is " + std::to_string(spec.iters) +
           ": it must be 1 or more (nccl-tests -n)";
  }
  return "";
}

}  // namespace clustercert::sweep
