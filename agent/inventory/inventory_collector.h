#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/inventory/address_source.h"
#include "agent/inventory/clock_source.h"
#include "agent/inventory/dcb_source.h"
#include "agent/inventory/frr_collector.h"
#include "agent/inventory/gpu_source.h"
#include "agent/inventory/inventory_source.h"
#include "agent/inventory/port_attribute_source.h"
#include "common/process/command_runner.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// The live probes the collector may consult besides the files. Each may be
// null, in which case its facts are reported unknown with the reason.
struct InventoryProbes {
  PortAttributeSource* port_attributes = nullptr;  // verbs when live, a capture otherwise
  DcbSource* dcb = nullptr;
  ClockSource* clock = nullptr;
  GpuSource* gpus = nullptr;
  AddressSource* addresses = nullptr;
  HostResolver* resolver = nullptr;
  process::CommandRunner* commands = nullptr;
};

// Assembles one host's Inventory from every collector, in dependency order:
// netdevs (their MTUs feed the RoCE active MTU), RDMA devices, the
// netdev<->RDMA links, PCIe functions and GPU<->NIC paths, the stack, RoCE
// QoS on the Ethernet RDMA ports, GPUs, clock, management interface, FRR's BGP. No
// collector's failure stops the others: it becomes an Unknown entry.
class InventoryCollector final : public InventorySource {
 public:
  // `frr` names the FRR instance whose BGP state is read (live views only).
  InventoryCollector(const SysfsView& view, InventoryProbes probes, std::string listen_host,
                     FrrOptions frr = {});

  absl::StatusOr<v1::Inventory> Collect(const std::string& dialed_host) override;

 private:
  // Each step adds its part to `inventory` and names what it could not read
  // as an unknown; the lists the later steps need come back.
  std::vector<v1::Netdev> CollectNetdevs(v1::Inventory& inventory);
  void AddAddresses(v1::Inventory& inventory, std::vector<v1::Netdev>& netdevs);
  std::vector<v1::RdmaDevice> CollectRdma(v1::Inventory& inventory,
                                          std::vector<v1::Netdev>& netdevs);
  // PCI functions, the GPU<->NIC paths and the host settings on them.
  std::vector<v1::PciFunction> CollectPci(v1::Inventory& inventory,
                                          std::vector<v1::RdmaDevice>& rdma);
  // Stack, NIC firmware, QoS, the GPU runtime and the clock.
  void CollectProbed(v1::Inventory& inventory, const std::vector<v1::RdmaDevice>& rdma);
  void CollectManagement(v1::Inventory& inventory, const std::string& host);
  // FRR's BGP state (routed fabrics); only a live host's FRR describes it.
  void CollectBgp(v1::Inventory& inventory);

  const SysfsView& view_;
  InventoryProbes probes_;
  std::string listen_host_;
  FrrOptions frr_;
};

// Production wiring. On a live view ("/") the probes are the real ones
// (verbs, DCB netlink, adjtimex, CUDA, getifaddrs, ofed_info); on a fixture or
// captured tree, port attributes, PFC/DSCP and the OFED version come from the
// tree's clustercert-capture/ files, CUDA is not asked (it would describe this
// machine, not the tree), while the clock and addresses stay this machine's.
std::unique_ptr<InventorySource> MakeInventoryCollector(const SysfsView& view,
                                                        const std::string& listen_host,
                                                        FrrOptions frr = {});

}  // namespace clustercert::agent::inventory
