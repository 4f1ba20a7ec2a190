#include "agent/inventory/inventory_collector.h"

#include <unistd.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "agent/inventory/adjtimex_clock_source.h"
#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/clock_collector.h"
#include "agent/inventory/dcb_capture_source.h"
#include "agent/inventory/dcb_netlink_source.h"
#include "agent/inventory/ifaddrs_address_source.h"
#include "agent/inventory/iommu_collector.h"
#include "agent/inventory/management_interface.h"
#include "agent/inventory/netdev_collector.h"
#include "agent/inventory/nic_firmware_collector.h"
#include "agent/inventory/nvidia_smi_query.h"
#include "agent/inventory/pci_collector.h"
#include "agent/inventory/pci_topology.h"
#include "agent/inventory/pci_vpd.h"
#include "agent/inventory/pcie_acs_collector.h"
#include "agent/inventory/qos_collector.h"
#include "agent/inventory/rdma_collector.h"
#include "agent/inventory/stack_collector.h"
#include "agent/inventory/unknowns.h"
#include "agent/inventory/verbs_port_attribute_source.h"
#include "common/ip_subnet.h"
#include "common/process/process_command_runner.h"

namespace clustercert::agent::inventory {
namespace {

std::vector<RoceNetdev> RoceNetdevs(const std::vector<v1::RdmaDevice>& devices) {
  std::vector<RoceNetdev> result;
  std::set<std::string> seen;
  for (const auto& device : devices) {
    for (const auto& port : device.ports()) {
      if (port.link_layer() != "Ethernet" || port.netdev().empty()) continue;
      if (seen.insert(port.netdev()).second) result.push_back({port.netdev(), device.name()});
    }
  }
  return result;
}

std::string Hostname() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string();
}

}  // namespace

InventoryCollector::InventoryCollector(const SysfsView& view, InventoryProbes probes,
                                       std::string listen_host, FrrOptions frr)
    : view_(view), probes_(probes), listen_host_(std::move(listen_host)), frr_(std::move(frr)) {}

absl::StatusOr<v1::Inventory> InventoryCollector::Collect(const std::string& dialed_host) {
  v1::Inventory inventory;
  inventory.set_sysfs_root(view_.root().string());
  if (view_.is_live()) inventory.set_hostname(Hostname());
  std::vector<v1::Netdev> netdevs = CollectNetdevs(inventory);
  std::vector<v1::RdmaDevice> rdma = CollectRdma(inventory, netdevs);
  std::vector<v1::PciFunction> pci = CollectPci(inventory, rdma);
  CollectProbed(inventory, rdma);
  CollectManagement(inventory, dialed_host.empty() ? listen_host_ : dialed_host);
  for (auto& device : rdma) *inventory.add_rdma_devices() = std::move(device);
  for (auto& netdev : netdevs) *inventory.add_netdevs() = std::move(netdev);
  for (auto& function : pci) *inventory.add_pci() = std::move(function);
  NvidiaSmiIdentity(view_, probes_.commands).Fill(inventory);
  CollectBgp(inventory);
  return inventory;
}

void InventoryCollector::CollectBgp(v1::Inventory& inventory) {
  if (!view_.is_live()) {
    inventory.mutable_bgp()->set_reason(
        "not queried: the sysfs root is a fixture or capture, and vtysh would describe this "
        "machine's FRR instead");
    return;
  }
  if (probes_.commands == nullptr) {
    inventory.mutable_bgp()->set_reason("not queried: no command runner");
    return;
  }
  *inventory.mutable_bgp() = FrrCollector(*probes_.commands, frr_).Collect();
}

std::vector<v1::Netdev> InventoryCollector::CollectNetdevs(v1::Inventory& inventory) {
  NetdevCollector netdev_collector(view_);
  auto netdevs = netdev_collector.Collect();
  std::vector<v1::Netdev> netdev_list;
  if (netdevs.ok()) {
    netdev_list = std::move(*netdevs);
  } else {
    AddUnknown(inventory, "netdevs", "/sys/class/net", netdevs.status());
  }
  // Addresses are only this machine's: a fixture's netdevs get none.
  if (view_.is_live() && probes_.addresses) AddAddresses(inventory, netdev_list);
  return netdev_list;
}

void InventoryCollector::AddAddresses(v1::Inventory& inventory, std::vector<v1::Netdev>& netdevs) {
  auto addresses = probes_.addresses->List();
  if (!addresses.ok()) {
    AddUnknown(inventory, "netdevs.ipv4", "getifaddrs", addresses.status());
    return;
  }
  for (auto& netdev : netdevs) {
    for (const auto& address : *addresses) {
      if (address.netdev != netdev.name()) continue;
      if (address.address.find(':') == std::string::npos) netdev.add_ipv4(address.address);
      if (address.prefix_length >= 0) {
        netdev.add_cidrs(absl::StrCat(address.address, "/", address.prefix_length));
      }
    }
  }
}

std::vector<v1::RdmaDevice> InventoryCollector::CollectRdma(v1::Inventory& inventory,
                                                            std::vector<v1::Netdev>& netdevs) {
  RdmaCollector rdma_collector(view_, probes_.port_attributes);
  auto rdma = rdma_collector.Collect(MtuLookupFrom(netdevs));
  std::vector<v1::RdmaDevice> rdma_list;
  if (rdma.ok()) {
    rdma_list = std::move(*rdma);
  } else {
    AddUnknown(inventory, "rdma_devices", "/sys/class/infiniband", rdma.status());
  }
  LinkRdmaDevices(rdma_list, &netdevs);
  return rdma_list;
}

std::vector<v1::PciFunction> InventoryCollector::CollectPci(v1::Inventory& inventory,
                                                            std::vector<v1::RdmaDevice>& rdma) {
  PciCollector pci_collector(view_);
  auto pci = pci_collector.Collect(rdma);
  std::vector<v1::PciFunction> pci_list;
  if (pci.ok()) {
    pci_list = std::move(*pci);
  } else {
    AddUnknown(inventory, "pci", "/sys/bus/pci/devices", pci.status());
  }
  SetRdmaModelsFromVpd(pci_list, rdma);
  std::vector<v1::Unknown> topology_unknowns;
  for (auto& path : BuildGpuNicPaths(pci_list, &topology_unknowns)) {
    *inventory.add_gpu_nic_paths() = std::move(path);
  }
  for (auto& unknown : topology_unknowns) *inventory.add_unknowns() = std::move(unknown);

  // Host settings on the GPU<->NIC data path: ACS on the bridges, the IOMMU.
  const std::vector<v1::GpuNicPath> paths(inventory.gpu_nic_paths().begin(),
                                          inventory.gpu_nic_paths().end());
  std::vector<v1::Unknown> bridge_unknowns;
  for (auto& bridge : PcieAcsCollector(view_).Collect(pci_list, paths, &bridge_unknowns)) {
    *inventory.add_pcie_bridges() = std::move(bridge);
  }
  for (auto& unknown : bridge_unknowns) *inventory.add_unknowns() = std::move(unknown);
  *inventory.mutable_iommu() = IommuCollector(view_).Collect(pci_list);
  return pci_list;
}

void InventoryCollector::CollectProbed(v1::Inventory& inventory,
                                       const std::vector<v1::RdmaDevice>& rdma) {
  if (probes_.commands) {
    *inventory.mutable_stack() = StackCollector(view_, *probes_.commands).Collect();
    for (auto& config : NicFirmwareCollector(view_, *probes_.commands).Collect(rdma)) {
      *inventory.add_nic_firmware() = std::move(config);
    }
  } else {
    AddUnknown(*inventory.mutable_stack(), "ofed_version", "ofed_info -s", "no command runner");
  }
  if (probes_.dcb) {
    for (auto& qos : QosCollector(view_, *probes_.dcb).Collect(RoceNetdevs(rdma))) {
      *inventory.add_qos() = std::move(qos);
    }
  }
  if (probes_.gpus && view_.is_live()) {
    *inventory.mutable_gpu_runtime() = probes_.gpus->Read();
  } else {
    inventory.mutable_gpu_runtime()->set_reason(
        view_.is_live() ? "no GPU source"
                        : "not queried: the sysfs root is a fixture or capture, and the CUDA "
                          "runtime would describe this machine instead");
  }
  if (probes_.clock) {
    *inventory.mutable_clock() = ClockCollector(*probes_.clock).Collect();
  } else {
    AddUnknown(*inventory.mutable_clock(), "synchronized", "adjtimex", "no clock source");
  }
}

void InventoryCollector::CollectManagement(v1::Inventory& inventory, const std::string& host) {
  inventory.set_management_address(host);
  if (!probes_.addresses || !probes_.resolver) {
    AddUnknown(inventory, "management_netdev", "getifaddrs", "no address source");
    return;
  }
  auto management = ManagementAddress(host, *probes_.addresses, *probes_.resolver);
  if (!management.ok()) {
    AddUnknown(inventory, "management_netdev", "getifaddrs", management.status().message());
    return;
  }
  inventory.set_management_netdev(management->netdev);
  if (auto subnet = IpSubnet::Of(management->address, management->prefix_length)) {
    inventory.set_management_subnet(subnet->ToString());
  } else {
    AddUnknown(
        inventory, "management_subnet", "getifaddrs",
        absl::StrCat("no netmask reported for ", management->address, " on ", management->netdev));
  }
}

namespace {

// Owns the production probes for the collector's lifetime.
class HostInventorySource final : public InventorySource {
 public:
  HostInventorySource(const SysfsView& view, const std::string& listen_host, FrrOptions frr)
      : port_attributes_(
            view.is_live()
                ? std::unique_ptr<PortAttributeSource>(new VerbsPortAttributeSource())
                : std::unique_ptr<PortAttributeSource>(new CapturedPortAttributeSource(view))),
        gpus_(MakeGpuSource()),
        dcb_(view.is_live() ? std::unique_ptr<DcbSource>(new DcbNetlinkSource())
                            : std::unique_ptr<DcbSource>(new DcbCaptureSource(view))),
        collector_(view,
                   InventoryProbes{port_attributes_.get(), dcb_.get(), &clock_, gpus_.get(),
                                   &addresses_, &resolver_, &commands_},
                   listen_host, std::move(frr)) {}

  absl::StatusOr<v1::Inventory> Collect(const std::string& dialed_host) override {
    return collector_.Collect(dialed_host);
  }

 private:
  std::unique_ptr<PortAttributeSource> port_attributes_;
  AdjtimexClockSource clock_;
  IfaddrsAddressSource addresses_;
  GetaddrinfoHostResolver resolver_;
  process::ProcessCommandRunner commands_;
  std::unique_ptr<GpuSource> gpus_;
  std::unique_ptr<DcbSource> dcb_;
  InventoryCollector collector_;
};

}  // namespace

std::unique_ptr<InventorySource> MakeInventoryCollector(const SysfsView& view,
                                                        const std::string& listen_host,
                                                        FrrOptions frr) {
  return std::make_unique<HostInventorySource>(view, listen_host, std::move(frr));
}

}  // namespace clustercert::agent::inventory
