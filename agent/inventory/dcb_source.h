#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clustercert::agent::inventory {

// One DSCP entry of a DCB application priority table.
struct DcbDscpPriority {
  uint8_t dscp = 0;      // 0..63
  uint8_t priority = 0;  // 0..7
};

// A netdev's IEEE DCB settings that matter for lossless RoCE.
//
// Each part may be unknown on its own (a driver without ieee_getpfc, a capture
// missing one file): the part is then unset and its *_reason says why.
struct DcbSettings {
  std::optional<uint8_t> pfc_enabled_mask;  // bit i = PFC on priority i (priority 3 = 0x08)
  std::string pfc_reason;                   // why pfc_enabled_mask is unset
  std::optional<std::vector<DcbDscpPriority>> dscp_priorities;  // app table, selector DSCP
  std::string dscp_reason;                                      // why dscp_priorities is unset
  std::string
      source;  // "rtnetlink DCB_CMD_IEEE_GET enp65s0f0np0", "/clustercert-capture/dcb/enp65s0f0np0"
};

// Reads one netdev's PFC and DSCP app table: from the kernel's DCB netlink on
// a live host, from captured files otherwise. An error Status (with the
// netdev and the cause in its message) means nothing could be read at all.
class DcbSource {
 public:
  virtual ~DcbSource() = default;
  virtual absl::StatusOr<DcbSettings> Read(const std::string& netdev) = 0;
};

}  // namespace clustercert::agent::inventory
