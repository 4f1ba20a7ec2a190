#include "controller/checks/check_context.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::checks {

CheckContext::CheckContext(const plan::Plan& plan, const plan::Node& node,
                           const v1::Inventory& inventory)
    : plan_(plan), node_(node), inventory_(inventory) {}

FindingBuilder CheckContext::Builder(absl::string_view id, Severity severity,
                                     absl::string_view device, uint32_t port) const {
  return FindingBuilder(id, severity, node_.name, device, port);
}

v1::Finding CheckContext::SkippedOnEthernet(absl::string_view id, Severity severity) const {
  return Builder(id, severity)
      .Skipped("fabric type ethernet is a TCP-only data plane, so this RDMA check does not apply");
}

std::optional<v1::Finding> CheckContext::SkipUnlessGpusAndRails(absl::string_view id,
                                                                Severity severity) const {
  if (!is_rdma()) return SkippedOnEthernet(id, severity);
  if (node_.gpus <= 0) return Builder(id, severity).Skipped("plan lists no GPUs for this node");
  if (node_.rails.empty())
    return Builder(id, severity).Skipped("plan lists no rails for this node");
  return std::nullopt;
}

const v1::RdmaDevice* CheckContext::FindDevice(absl::string_view name) const {
  for (const v1::RdmaDevice& device : inventory_.rdma_devices()) {
    if (device.name() == name) return &device;
  }
  return nullptr;
}

const v1::Netdev* CheckContext::FindNetdev(absl::string_view name) const {
  if (name.empty()) return nullptr;
  for (const v1::Netdev& netdev : inventory_.netdevs()) {
    if (netdev.name() == name) return &netdev;
  }
  return nullptr;
}

const v1::NetdevQos* CheckContext::FindQos(absl::string_view netdev) const {
  if (netdev.empty()) return nullptr;
  for (const v1::NetdevQos& qos : inventory_.qos()) {
    if (qos.netdev() == netdev) return &qos;
  }
  return nullptr;
}

const v1::PciFunction* CheckContext::FindPci(absl::string_view role, absl::string_view name) const {
  for (const v1::PciFunction& function : inventory_.pci()) {
    if (function.role() == role && function.name() == name) return &function;
  }
  return nullptr;
}

std::vector<const v1::PciFunction*> CheckContext::GpuFunctions() const {
  std::vector<const v1::PciFunction*> gpus;
  for (const v1::PciFunction& function : inventory_.pci()) {
    if (function.role() == "gpu") gpus.push_back(&function);
  }
  return gpus;
}

const v1::Netdev* CheckContext::FindNetdevWithAddress(absl::string_view ip) const {
  if (ip.empty()) return nullptr;
  for (const v1::Netdev& netdev : inventory_.netdevs()) {
    for (const std::string& address : netdev.ipv4()) {
      // Agents may report "10.10.1.1" or "10.10.1.1/24".
      absl::string_view host = address;
      if (size_t slash = host.find('/'); slash != absl::string_view::npos) {
        host = host.substr(0, slash);
      }
      if (host == ip) return &netdev;
    }
  }
  return nullptr;
}

std::vector<const v1::RdmaDevice*> CheckContext::PresentRails() const {
  std::vector<const v1::RdmaDevice*> rails;
  for (const std::string& rail : node_.rails) {
    if (const v1::RdmaDevice* device = FindDevice(rail)) rails.push_back(device);
  }
  return rails;
}

std::vector<RailPort> CheckContext::RailPorts() const {
  std::vector<RailPort> ports;
  for (const v1::RdmaDevice* device : PresentRails()) {
    for (const v1::RdmaPort& port : device->ports()) ports.push_back({device, &port});
  }
  return ports;
}

std::string CheckContext::PortNetdev(const RailPort& rail_port) {
  if (!rail_port.port->netdev().empty()) return rail_port.port->netdev();
  return rail_port.device->parent_netdev();
}

}  // namespace clustercert::controller::checks
