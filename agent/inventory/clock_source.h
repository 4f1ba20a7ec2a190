#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace clustercert::agent::inventory {

// One reading of the host clock's discipline state.
struct ClockReading {
  std::optional<bool> synchronized;  // unset when the source cannot tell
  std::optional<int64_t> est_error_us;
  std::optional<int64_t> max_error_us;
  int64_t unix_time_us = 0;  // the clock's time at the reading
  std::string status;  // in words, with any caveat ("unsynchronized (kernel reports STA_UNSYNC …)")
  std::string source;  // "adjtimex"
};

// The boundary to the kernel's clock state (adjtimex on Linux); tests hand in
// fixed readings. An error Status means the source could not be asked at all.
class ClockSource {
 public:
  virtual ~ClockSource() = default;
  virtual absl::StatusOr<ClockReading> Read() = 0;
};

}  // namespace clustercert::agent::inventory
