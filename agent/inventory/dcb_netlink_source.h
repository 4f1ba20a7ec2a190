#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/inventory/dcb_source.h"

namespace clustercert::agent::inventory {

// The live DcbSource: asks the kernel over rtnetlink (RTM_GETDCB,
// DCB_CMD_IEEE_GET, DCB_ATTR_IFNAME) — what `dcb pfc show` and
// `dcb app show` print — and parses DCB_ATTR_IEEE_PFC (pfc_en) and the DSCP
// entries (selector 5) of DCB_ATTR_IEEE_APP_TABLE. A read needs no privilege.
// Errors: Unimplemented when the driver has no DCB (EOPNOTSUPP: virtio, lo),
// NotFound for an unknown netdev, PermissionDenied when netlink is denied,
// DeadlineExceeded when the kernel does not answer within `timeout`.
class DcbNetlinkSource : public DcbSource {
 public:
  explicit DcbNetlinkSource(absl::Duration timeout = absl::Seconds(2));

  absl::StatusOr<DcbSettings> Read(const std::string& netdev) override;

 private:
  absl::Duration timeout_;
};

}  // namespace clustercert::agent::inventory
