#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace clustercert::agent::inventory {

// What verbs reports about one RDMA port that sysfs does not show (the active
// and maximum MTU above all), plus the facts sysfs also shows so a live host
// can be cross-checked.
struct PortAttributes {
  uint32_t active_mtu_bytes = 0;  // 256 .. 4096
  uint32_t max_mtu_bytes = 0;
  uint32_t state = 0;       // enum ibv_port_state: 4 = ACTIVE
  uint32_t phys_state = 0;  // 5 = LinkUp
  uint32_t lid = 0;
  uint32_t sm_lid = 0;
  std::string link_layer;  // "InfiniBand", "Ethernet", "Unspecified"
  uint32_t gid_table_len = 0;
  std::string source;  // "ibv_query_port", or the captured file it was read from
};

// The hardware boundary for port attributes. The live implementation asks
// libibverbs (ibv_query_port) and is only wired in when the SysfsView is the
// running host; a captured tree gets CapturedPortAttributeSource (its
// `ibv_devinfo -v` text), so fixtures never reach hardware; tests pass fakes.
class PortAttributeSource {
 public:
  virtual ~PortAttributeSource() = default;

  // Attributes of `port` (1-based) of the RDMA device named `device`
  // ("mlx5_0"). NotFound when no such device or port exists.
  virtual absl::StatusOr<PortAttributes> Query(const std::string& device, uint32_t port) = 0;
};

}  // namespace clustercert::agent::inventory
