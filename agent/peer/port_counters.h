#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/peer/ethtool_stats_source.h"
#include "clustercert/v1/counters.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::peer {

// Reads one RDMA port's counters: every file under
// /sys/class/infiniband/DEV/ports/N/counters/ and .../hw_counters/ (decimal)
// and, for a RoCE port with a netdev, the netdev's ethtool pause, discard and
// link health statistics (IsKeptEthtoolStat), and for any netdev its
// /sys/class/net/IF/carrier_changes (source "sysfs": each carrier loss and
// return adds one, so port.flap sees a veth's flaps too). A directory the driver does
// not have is simply absent; a file that cannot be read or is not a decimal
// counter becomes an Unknown entry. Pass an EthtoolStatsSource only when
// `sysfs` is the live host, so both halves describe the same machine. `now`
// stamps read_unix_us.
//
// The device, port and netdev come from a request, so they are checked
// before any path is built from them: the device must be a name of
// [A-Za-z0-9_.-]{1,64} listed in /sys/class/infiniband, the port 1..255 and
// present under it, the netdev an interface name (IsValidNetdevName) listed
// in /sys/class/net. An empty device with port 0 reads the netdev's ethtool
// statistics and carrier_changes only (the tcp engine's pairs, a rail on
// fabric.type ethernet). Anything else is InvalidArgument
// (a malformed value) or NotFound (a well-formed one this host does not
// have), naming the value and the ones the host has; an error never carries
// a file's contents or another directory's listing.
class PortCounterReader {
 public:
  PortCounterReader(
      const SysfsView& sysfs, EthtoolStatsSource* ethtool,
      std::function<absl::Time()> now = [] { return absl::Now(); });

  absl::StatusOr<v1::PortCounters> Read(const std::string& device, uint32_t port,
                                        const std::string& netdev) const;

  // The largest RDMA port number sysfs can hold (ibv_port_attr.phys_port_cnt is a u8).
  static constexpr uint32_t kMaxPort = 255;

 private:
  absl::Status CheckDevice(const std::string& device, uint32_t port) const;
  absl::Status CheckNetdev(const std::string& netdev) const;
  void ReadCarrierChanges(const std::string& netdev, v1::PortCounters& out) const;
  void ReadDirectory(const std::string& dir, const std::string& source,
                     v1::PortCounters& out) const;

  const SysfsView& sysfs_;
  EthtoolStatsSource* ethtool_;
  std::function<absl::Time()> now_;
};

}  // namespace clustercert::agent::peer
