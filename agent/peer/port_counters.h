#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/peer/ethtool_stats_source.h"
#include "clustercert/v1/counters.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::peer {

// Reads one RDMA port's counters: every file under
// /sys/class/infiniband/DEV/ports/N/counters/ and .../hw_counters/ (decimal)
// and, for a RoCE port with a netdev, the netdev's ethtool pause, discard and
// link health statistics (IsKeptEthtoolStat). A directory the driver does
// not have is simply absent; a file that cannot be read or is not a decimal
// counter becomes an Unknown entry, never an error. Pass an
// EthtoolStatsSource only when `sysfs` is the live host, so both halves
// describe the same machine. `now` stamps read_unix_us.
class PortCounterReader {
 public:
  PortCounterReader(
      const SysfsView& sysfs, EthtoolStatsSource* ethtool,
      std::function<absl::Time()> now = [] { return absl::Now(); });

  v1::PortCounters Read(const std::string& device, uint32_t port, const std::string& netdev) const;

 private:
  void ReadDirectory(const std::string& dir, const std::string& source,
                     v1::PortCounters& out) const;

  const SysfsView& sysfs_;
  EthtoolStatsSource* ethtool_;
  std::function<absl::Time()> now_;
};

}  // namespace clustercert::peer
