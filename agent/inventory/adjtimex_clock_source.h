#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "agent/inventory/clock_source.h"

namespace clustercert::agent::inventory {

// What adjtimex(2) returned, as plain numbers, so the interpretation can be
// tested without the kernel.
struct AdjtimexResult {
  int return_code = 0;  // TIME_OK, TIME_INS, …, TIME_ERROR (5)
  int status = 0;       // STA_* bits
  int64_t max_error_us = 0;
  int64_t est_error_us = 0;
  int64_t unix_time_us = 0;
};

// Turns an adjtimex result into a ClockReading.
//
// STA_UNSYNC (0x40) set means "unsynchronized" only when the kernel's maxerror
// has grown to its 16 s cap (NTP_PHASE_LIMIT): nothing is disciplining the
// clock. chrony without `rtcsync` leaves STA_UNSYNC set while it keeps
// maxerror small, so STA_UNSYNC with a small maxerror leaves `synchronized`
// unset and says why (FACTS: say "unknown", not "unsynced", when unsure).
ClockReading InterpretAdjtimex(const AdjtimexResult& result);

// The live ClockSource: adjtimex() with modes 0 (read only, no privilege).
class AdjtimexClockSource : public ClockSource {
 public:
  static constexpr int kStaUnsync = 0x40;
  static constexpr int kTimeError = 5;
  // The kernel caps maxerror at NTP_PHASE_LIMIT (16 s) once no daemon updates it.
  static constexpr int64_t kMaxErrorCapUs = 16'000'000;

  absl::StatusOr<ClockReading> Read() override;
};

}  // namespace clustercert::agent::inventory
