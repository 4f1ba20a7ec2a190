#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/inventory/netdev_collector.h"
#include "agent/inventory/port_attribute_source.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// The RoCE active MTU the kernel derives from a netdev MTU (iboe_get_mtu):
// the largest of 4096/2048/1024/512/256 that fits netdev_mtu minus 96 bytes
// of RoCE headers (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4).
// 9000 -> 4096, 1500 -> 1024. InvalidArgument when not even 256 fits.
absl::StatusOr<uint32_t> RoceActiveMtuForNetdevMtu(uint32_t netdev_mtu);

// Reads every RDMA device under /sys/class/infiniband: identity (node type,
// GUIDs, firmware, board), its PCI function or rxe parent netdev, and per port
// the state, rate, link layer, LIDs, GID table and the active MTU. It exists
// because rate, state, GIDs and MTU are what a certificate checks first, and
// each must either be read or explained by an Unknown entry, never guessed.
//
// The active MTU is not in sysfs: it comes from `port_attributes` when one is
// given (ibv_query_port on a live host, a captured `ibv_devinfo -v` for a
// tree); otherwise, for RoCE ports, it is derived from the port's netdev MTU;
// InfiniBand ports without an answer leave it unset with an Unknown.
class RdmaCollector {
 public:
  // `port_attributes` may be null. The caller picks it to match the view.
  RdmaCollector(const SysfsView& view, PortAttributeSource* port_attributes)
      : view_(view), port_attributes_(port_attributes) {}

  // Devices in name order ("mlx5_2" before "mlx5_10"). No
  // /sys/class/infiniband means no devices (an empty list); an error only
  // when the directory exists but cannot be listed.
  absl::StatusOr<std::vector<v1::RdmaDevice>> Collect(const NetdevMtuLookup& netdev_mtu) const;

  // One device by name, as Collect describes it.
  v1::RdmaDevice CollectDevice(const std::string& name, const NetdevMtuLookup& netdev_mtu) const;

 private:
  v1::RdmaPort CollectPort(const v1::RdmaDevice& device, uint32_t port_number,
                           const NetdevMtuLookup& netdev_mtu) const;
  void CollectGids(const std::string& port_dir, v1::RdmaPort* port) const;
  std::string NetdevOfPciFunction(const std::string& pci_address, uint32_t port_number) const;
  void FillActiveMtu(const std::string& device, const std::string& port_dir,
                     const NetdevMtuLookup& netdev_mtu, v1::RdmaPort* port) const;

  const SysfsView& view_;
  PortAttributeSource* port_attributes_;
};

}  // namespace clustercert::agent::inventory
