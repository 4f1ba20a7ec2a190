#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/inventory/module_source.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// The most ETHTOOL_GMODULEEEPROM is asked for: an SFF-8636 module's lower
// page and pages 00h..03h (ETH_MODULE_SFF_8636_MAX_LEN). A CMIS module read
// this way gives what its driver maps there (mlx5: pages 01h and 02h after
// page 00h); its lane monitors on page 11h need the netlink page read.
inline constexpr uint32_t kModuleIoctlMaxBytes = 640;

// The live ModuleSource: SIOCETHTOOL on a datagram socket with
// ETHTOOL_GMODULEINFO (the module's EEPROM standard and size), then
// ETHTOOL_GMODULEEEPROM for at most that many bytes (and never more than
// kModuleIoctlMaxBytes), decoded by DecodeModuleEeprom; `ethtool -m` does
// the same on kernels without the netlink read. Needs no privilege.
// Errors, each naming the netdev: InvalidArgument for a name that is not an
// interface name (peer::IsValidNetdevName), NotFound for no such netdev,
// Unimplemented when the port has no module the kernel can read (EOPNOTSUPP:
// veth, virtio, an on-board port), Unavailable when the read fails (EIO from
// an empty cage or an unseated module), PermissionDenied.
class IoctlModuleSource : public ModuleSource {
 public:
  absl::StatusOr<v1::CableModule> Read(const std::string& netdev) override;
};

}  // namespace clustercert::agent::inventory
