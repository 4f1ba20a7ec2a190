#include "agent/inventory/adjtimex_clock_source.h"

#include <sys/timex.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustercert::agent::inventory {
namespace {

constexpr int kStaNano = 0x2000;

std::string StateText(const AdjtimexResult& result) {
  return absl::StrFormat("adjtimex returned %d, status 0x%04x, maxerror %d us, esterror %d us",
                         result.return_code, result.status, result.max_error_us,
                         result.est_error_us);
}

}  // namespace

ClockReading InterpretAdjtimex(const AdjtimexResult& result) {
  ClockReading reading;
  reading.source = "adjtimex";
  reading.unix_time_us = result.unix_time_us;
  reading.max_error_us = result.max_error_us;
  reading.est_error_us = result.est_error_us;
  const bool unsync = (result.status & AdjtimexClockSource::kStaUnsync) != 0;
  if (unsync && result.max_error_us >= AdjtimexClockSource::kMaxErrorCapUs) {
    reading.synchronized = false;
    reading.status = absl::StrCat(
        "unsynchronized (kernel reports STA_UNSYNC and maxerror at its 16 s cap: no NTP/PTP "
        "daemon is disciplining the clock; start chrony or ptp4l+phc2sys). ",
        StateText(result));
  } else if (unsync) {
    reading.status = absl::StrCat(
        "unknown: the kernel reports STA_UNSYNC, but maxerror is below its 16 s cap, so a daemon "
        "is updating it; chrony without 'rtcsync' leaves STA_UNSYNC set even when synchronized "
        "(check `chronyc tracking`). ",
        StateText(result));
  } else if (result.return_code == AdjtimexClockSource::kTimeError) {
    reading.status = absl::StrCat(
        "unknown: adjtimex returned TIME_ERROR without STA_UNSYNC (PPS or clock-state error). ",
        StateText(result));
  } else {
    reading.synchronized = true;
    reading.status = absl::StrCat("synchronized. ", StateText(result));
  }
  return reading;
}

absl::StatusOr<ClockReading> AdjtimexClockSource::Read() {
  timex tx{};
  tx.modes = 0;
  int rc = ::adjtimex(&tx);
  if (rc < 0) {
    const int err = errno;
    // modes=0 only reads, which the kernel allows every user: EPERM here
    // comes from a seccomp filter, not from a missing capability.
    if (err == EPERM) {
      return absl::PermissionDeniedError(
          "adjtimex(2) with modes=0, a read-only query any user may make, was refused (EPERM): a "
          "seccomp filter denies it, as systemd's ProtectClock=yes or a SystemCallFilter= without "
          "adjtimex does; the shipped unit (deploy/clustercert-agent.service) sets neither, so "
          "remove the drop-in that does (systemctl cat clustercert-agent)");
    }
    return absl::UnavailableError(absl::StrCat("adjtimex: ", std::strerror(err)));
  }
  AdjtimexResult result;
  result.return_code = rc;
  result.status = tx.status;
  result.max_error_us = tx.maxerror;
  result.est_error_us = tx.esterror;
  // With STA_NANO the kernel reports the sub-second part in nanoseconds.
  const int64_t sub_second_us = (tx.status & kStaNano) ? tx.time.tv_usec / 1000 : tx.time.tv_usec;
  result.unix_time_us = static_cast<int64_t>(tx.time.tv_sec) * 1'000'000 + sub_second_us;
  return InterpretAdjtimex(result);
}

}  // namespace clustercert::agent::inventory
