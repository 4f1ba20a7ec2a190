#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/inventory/dcb_source.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// A RoCE port to inspect: its netdev and the RDMA device on top of it.
struct RoceNetdev {
  std::string netdev;       // enp65s0f0np0
  std::string rdma_device;  // mlx5_0
};

// "Global tclass=106" -> 106; InvalidArgument ("unparsable: '…'") otherwise.
absl::StatusOr<uint32_t> ParseTrafficClass(absl::string_view text);

// Fills v1::NetdevQos for each RoCE netdev: PFC mask and the DSCP app table
// from a DcbSource (netlink live, capture files otherwise), trust from
// /sys/class/net/IF/qos/trust, the RDMA device's global traffic class from
// /sys/class/infiniband/DEV/tc/1/traffic_class, and the ECN enables from
// /sys/class/net/IF/ecn/roce_{np,rp}/enable/<0..7>. The sysfs parts exist with
// MLNX_OFED/DOCA only; on upstream drivers they stay unset with an Unknown
// that says so, never a guessed value.
class QosCollector {
 public:
  // Both must outlive the collector.
  QosCollector(const SysfsView& view, DcbSource& dcb);

  std::vector<v1::NetdevQos> Collect(const std::vector<RoceNetdev>& ports) const;

 private:
  v1::NetdevQos CollectOne(const RoceNetdev& port) const;
  void CollectDcb(v1::NetdevQos& qos) const;
  void CollectTrust(v1::NetdevQos& qos) const;
  void CollectTrafficClass(v1::NetdevQos& qos) const;
  void CollectEcn(v1::NetdevQos& qos, absl::string_view side) const;

  const SysfsView& view_;
  DcbSource& dcb_;
};

}  // namespace clustercert::agent::inventory
