#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::plan {

// Parses a byte count as the plan writes it: a whole number with an optional
// binary suffix, K = 2^10, M = 2^20, G = 2^30 ("8", "64K", "8M", "8G";
// 8G = 8 * 2^30, the nccl-tests convention). Fractions ("1.5G") are refused
// rather than rounded: the error names the whole-number spelling when there is
// one (see WholeByteSpelling).
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// For a fractional size such as "1.5G": the same amount as a whole number in
// the next smaller unit ("1536M"), or "" when there is none ("1.3G").
std::string WholeByteSpelling(absl::string_view text);

}  // namespace clustercert::controller::plan
