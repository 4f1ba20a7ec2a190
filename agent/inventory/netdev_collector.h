#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// Reads every network interface under /sys/class/net: MTU, operstate, link
// speed, the PCI function behind it and the RDMA devices on that function.
// It exists because RoCE's active MTU, QoS and the GPU-NIC pairing are all
// keyed by netdev, and because a netdev at MTU 1500 silently caps RDMA at a
// 1024-byte path MTU. Unreadable facts stay unset with an Unknown entry.
class NetdevCollector {
 public:
  explicit NetdevCollector(const SysfsView& view) : view_(view) {}

  // One Netdev per /sys/class/net entry, sorted by name. rdma_devices holds
  // only what /sys/class/net/IF/device/infiniband shows; LinkRdmaDevices adds
  // what the RDMA side knows. An error only when /sys/class/net itself
  // cannot be listed.
  absl::StatusOr<std::vector<v1::Netdev>> Collect() const;

  // One interface by name, as Collect describes it.
  v1::Netdev CollectOne(const std::string& name) const;

 private:
  const SysfsView& view_;
};

// The MTU in bytes of a netdev by name; nullopt when unknown.
using NetdevMtuLookup = std::function<std::optional<uint32_t>(const std::string& netdev)>;

// A lookup over collected netdevs. It copies what it needs, so it may outlive
// `netdevs`.
NetdevMtuLookup MtuLookupFrom(const std::vector<v1::Netdev>& netdevs);

// Adds to each netdev's rdma_devices the RDMA devices that name it: through a
// GID's gid_attrs/ndevs entry, a port's netdev, or rxe's `parent` file. The
// list stays sorted and without duplicates.
void LinkRdmaDevices(const std::vector<v1::RdmaDevice>& rdma_devices,
                     std::vector<v1::Netdev>* netdevs);

}  // namespace clustercert::agent::inventory
