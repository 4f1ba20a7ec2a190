#pragma once

#include <string>

#include "absl/time/time.h"

namespace clustercert {

// RFC 3339 UTC with milliseconds, e.g. "2026-11-29T23:06:31.123Z".
std::string FormatUtc(absl::Time time);
// Compact UTC stamp for directory names, e.g. "20261129T230631Z".
std::string FormatUtcStamp(absl::Time time);

}  // namespace clustercert
