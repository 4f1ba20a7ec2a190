#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/inventory/dcb_source.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// "3" or "3,4" (empty = none) -> PFC mask 0x08 / 0x18; InvalidArgument on
// anything but priorities 0..7.
absl::StatusOr<uint8_t> ParsePfcPriorities(absl::string_view text);

// Lines "26 3" (DSCP, priority) -> entries; InvalidArgument naming the first
// bad line (DSCP beyond 63, priority beyond 7, not two numbers).
absl::StatusOr<std::vector<DcbDscpPriority>> ParseDscpPriorities(absl::string_view text);

// The DcbSource for captured trees: reads what the capture tool wrote from
// `dcb pfc show` / `dcb app show` into
// /clustercert-capture/dcb/<netdev>/pfc_enabled_priorities and
// /clustercert-capture/dcb/<netdev>/dscp_priorities, through the SysfsView.
// NotFound when the capture has no directory for the netdev; a missing or
// garbled file leaves only its own part unset.
class DcbCaptureSource : public DcbSource {
 public:
  explicit DcbCaptureSource(const SysfsView& view);

  absl::StatusOr<DcbSettings> Read(const std::string& netdev) override;

 private:
  const SysfsView& view_;
};

}  // namespace clustercert::agent::inventory
