#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace clustercert::agent::peer {

// A netdev's ethtool statistics (what `ethtool -S IF` prints), by name. The
// RDMA counters in sysfs do not carry pause frames or port-level discards;
// the Ethernet driver does, so a RoCE port's congestion picture needs both.
// An error Status (naming the netdev and the cause) means nothing was read.
class EthtoolStatsSource {
 public:
  virtual ~EthtoolStatsSource() = default;
  virtual absl::StatusOr<std::map<std::string, uint64_t>> Read(const std::string& netdev) = 0;
};

// The live EthtoolStatsSource: SIOCETHTOOL on a datagram socket with
// ETHTOOL_GSSET_INFO (how many ETH_SS_STATS strings), ETHTOOL_GSTRINGS and
// ETHTOOL_GSTATS, as `ethtool -S` does; needs no privilege. Keeps only the
// statistics that speak to congestion, loss, link health and the priority
// traffic travelled on: names containing "pause", "discard" or
// "out_of_buffer" (mlx5: rx_pause_ctrl_phy, tx_prio3_pause,
// rx_prio3_pause_duration, rx_discards_phy, rx_out_of_buffer), mlx5's
// per-priority rx/tx_prio<N>_bytes and _packets (N = 0..7), mlx5's
// physical link counters link_down_events_phy, rx_symbol_err_phy,
// rx_pcs_symbol_err_phy, rx_crc_errors_phy, rx_corrected_bits_phy and
// rx_bits_phy, mlx5's per-lane pre-FEC errors rx_err_lane_<N>_phy, and
// outbound_pci_buffer_overflow. Errors: NotFound for an unknown netdev (ENODEV),
// Unimplemented when the driver has no statistics (lo, some virtual
// devices), PermissionDenied, InvalidArgument for a name that is not an
// interface name (IsValidNetdevName), Unavailable otherwise.
class IoctlEthtoolStatsSource : public EthtoolStatsSource {
 public:
  absl::StatusOr<std::map<std::string, uint64_t>> Read(const std::string& netdev) override;
};

// The kernel's rule for an interface name (dev_valid_name): 1 to IFNAMSIZ-1
// characters, not "." or "..", no '/', ':' or whitespace; printable ASCII
// only here, so a name is safe in a path and in a message.
bool IsValidNetdevName(const std::string& name);

// True for the ethtool statistic names IoctlEthtoolStatsSource keeps.
bool IsKeptEthtoolStat(const std::string& name);

}  // namespace clustercert::agent::peer
