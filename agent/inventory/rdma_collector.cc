#include "agent/inventory/rdma_collector.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/sysfs_formats.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {
namespace {

constexpr absl::string_view kClassInfiniband = "/sys/class/infiniband";
constexpr absl::string_view kLinkLayerEthernet = "Ethernet";
// iboe_get_mtu(): GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4.
constexpr uint32_t kRoceHeaderBytes = 96;
constexpr uint32_t kIbMtus[] = {4096, 2048, 1024, 512, 256};

// ENOENT, EINVAL, EPERM/EACCES and EOPNOTSUPP: the file is not there for this
// device or slot (an absent hca_type, an empty GID slot's gid_attrs).
bool IsAbsent(const absl::Status& status) {
  return absl::IsNotFound(status) || absl::IsInvalidArgument(status) ||
         absl::IsPermissionDenied(status) || absl::IsUnimplemented(status);
}

// "mlx5_10" sorts after "mlx5_2": compare the text before the trailing
// digits, then the digits as a number.
bool NaturalLess(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    size_t i = s.size();
    while (i > 0 && absl::ascii_isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
    uint64_t number = 0;
    const bool has_number = i < s.size() && absl::SimpleAtoi(s.substr(i), &number);
    return std::make_tuple(s.substr(0, i), has_number, number, s);
  };
  return split(a) < split(b);
}

// A numeric directory listing (ports/, gids/) in numeric order; other names
// are ignored.
std::vector<uint32_t> NumericEntries(const std::vector<std::string>& names) {
  std::vector<uint32_t> numbers;
  for (const auto& name : names) {
    uint32_t number = 0;
    if (!name.empty() &&
        std::all_of(name.begin(), name.end(),
                    [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) &&
        absl::SimpleAtoi(name, &number)) {
      numbers.push_back(number);
    }
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

// Reads a file whose absence is normal (fw_ver, board_id, hca_type, parent):
// absent leaves `out` empty silently; any other failure is an Unknown.
template <typename Message>
void ReadOptional(const SysfsView& view, const std::string& path, absl::string_view field,
                  Message* message, std::string* out) {
  auto text = view.ReadText(path);
  if (text.ok()) {
    *out = *std::move(text);
  } else if (!IsAbsent(text.status())) {
    AddUnknown(*message, field, path, text.status());
  }
}

// Reads a file that must be there; failures are Unknowns and return nullopt.
template <typename Message>
std::optional<std::string> ReadRequired(const SysfsView& view, const std::string& path,
                                        absl::string_view field, Message* message) {
  auto text = view.ReadText(path);
  if (!text.ok()) {
    AddUnknown(*message, field, path, text.status());
    return std::nullopt;
  }
  return *std::move(text);
}

void ReadNodeTypeAndGuids(const SysfsView& view, const std::string& dir, v1::RdmaDevice* device) {
  const std::string node_type_path = absl::StrCat(dir, "/node_type");
  if (auto text = ReadRequired(view, node_type_path, "node_type", device)) {
    auto node_type = ParseCodeAndName(*text);
    if (node_type.ok()) {
      device->set_node_type(node_type->name);
    } else {
      AddUnknown(*device, "node_type", node_type_path, node_type.status().message());
    }
  }

  using GuidField = std::string* (v1::RdmaDevice::*)();
  const std::pair<absl::string_view, GuidField> kGuids[] = {
      {"node_guid", &v1::RdmaDevice::mutable_node_guid},
      {"sys_image_guid", &v1::RdmaDevice::mutable_sys_image_guid}};
  for (const auto& [field, mutable_field] : kGuids) {
    const std::string path = absl::StrCat(dir, "/", field);
    if (auto text = ReadRequired(view, path, field, device)) {
      auto guid = ParseGuid(*text);
      if (guid.ok()) {
        *(device->*mutable_field)() = *guid;
      } else {
        AddUnknown(*device, field, path, guid.status().message());
      }
    }
  }
}

// A hardware device's `device` link leads to its PCI function; rxe and siw
// have none and name their netdev in `parent` instead.
void ReadPciAddress(const SysfsView& view, const std::string& dir, v1::RdmaDevice* device) {
  const std::string device_link = absl::StrCat(dir, "/device");
  if (view.Exists(device_link)) {
    auto resolved = view.Resolve(device_link);
    if (!resolved.ok()) {
      AddUnknown(*device, "pci_address", device_link, resolved.status());
    } else {
      std::string address = LastPciAddressInPath(*resolved);
      if (address.empty()) {
        AddUnknown(*device, "pci_address", device_link,
                   absl::StrCat("resolves to ", *resolved, ", which names no PCI function"));
      }
      device->set_pci_address(std::move(address));
    }
  } else if (device->parent_netdev().empty()) {
    AddUnknown(*device, "pci_address", device_link,
               "no `device` link to a PCI function and no `parent` netdev");
  }
}

// `state` and `phys_state`: "4: ACTIVE" gives the code and the name.
void ReadPortStates(const SysfsView& view, const std::string& dir, v1::RdmaPort* port) {
  struct CodeField {
    absl::string_view file;
    void (v1::RdmaPort::*set_code)(uint32_t);
    std::string* (v1::RdmaPort::*mutable_name)();
  };
  const CodeField kCodeFields[] = {
      {"state", &v1::RdmaPort::set_state_code, &v1::RdmaPort::mutable_state},
      {"phys_state", &v1::RdmaPort::set_phys_state_code, &v1::RdmaPort::mutable_phys_state}};
  for (const CodeField& f : kCodeFields) {
    const std::string path = absl::StrCat(dir, "/", f.file);
    if (auto text = ReadRequired(view, path, f.file, port)) {
      auto parsed = ParseCodeAndName(*text);
      if (parsed.ok()) {
        (port->*f.set_code)(parsed->code);
        *(port->*f.mutable_name)() = parsed->name;
      } else {
        AddUnknown(*port, f.file, path, parsed.status().message());
      }
    }
  }
}

void ReadPortRate(const SysfsView& view, const std::string& dir, v1::RdmaPort* port) {
  const std::string rate_path = absl::StrCat(dir, "/rate");
  if (auto text = ReadRequired(view, rate_path, "rate", port)) {
    port->set_rate_text(*text);
    auto rate = ParseRate(*text);
    if (rate.ok()) {
      port->set_rate_gbps(rate->gbps);
      port->set_width(rate->width);
      port->set_speed_name(rate->speed_name);
    } else {
      AddUnknown(*port, "rate", rate_path, rate.status().message());
    }
  }
}

void ReadLinkLayer(const SysfsView& view, const std::string& dir, v1::RdmaPort* port) {
  const std::string link_layer_path = absl::StrCat(dir, "/link_layer");
  if (auto text = ReadRequired(view, link_layer_path, "link_layer", port)) {
    if (text->empty()) {
      AddUnknown(*port, "link_layer", link_layer_path, "empty file");
    } else {
      port->set_link_layer(*text);
    }
  }
}

void ReadLids(const SysfsView& view, const std::string& dir, v1::RdmaPort* port) {
  using LidSetter = void (v1::RdmaPort::*)(uint32_t);
  const std::pair<absl::string_view, LidSetter> kLids[] = {{"lid", &v1::RdmaPort::set_lid},
                                                           {"sm_lid", &v1::RdmaPort::set_sm_lid}};
  for (const auto& [file, setter] : kLids) {
    const std::string path = absl::StrCat(dir, "/", file);
    if (auto text = ReadRequired(view, path, file, port)) {
      auto value = ParseHexU32(*text);
      if (value.ok()) {
        (port->*setter)(*value);
      } else {
        AddUnknown(*port, file, path, value.status().message());
      }
    }
  }
}

}  // namespace

absl::StatusOr<uint32_t> RoceActiveMtuForNetdevMtu(uint32_t netdev_mtu) {
  if (netdev_mtu > kRoceHeaderBytes) {
    const uint32_t payload = netdev_mtu - kRoceHeaderBytes;
    for (uint32_t mtu : kIbMtus) {
      if (mtu <= payload) return mtu;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("netdev MTU ", netdev_mtu, " leaves no room for a 256-byte RoCE MTU after ",
                   kRoceHeaderBytes, " bytes of headers; raise the netdev MTU (9000 gives 4096)"));
}

absl::StatusOr<std::vector<v1::RdmaDevice>> RdmaCollector::Collect(
    const NetdevMtuLookup& netdev_mtu) const {
  auto names = view_.ListDir(kClassInfiniband);
  if (!names.ok()) {
    if (absl::IsNotFound(names.status())) return std::vector<v1::RdmaDevice>{};
    return names.status();
  }
  std::sort(names->begin(), names->end(), NaturalLess);
  std::vector<v1::RdmaDevice> devices;
  devices.reserve(names->size());
  for (const auto& name : *names) devices.push_back(CollectDevice(name, netdev_mtu));
  return devices;
}

v1::RdmaDevice RdmaCollector::CollectDevice(const std::string& name,
                                            const NetdevMtuLookup& netdev_mtu) const {
  v1::RdmaDevice device;
  device.set_name(name);
  const std::string dir = absl::StrCat(kClassInfiniband, "/", name);

  ReadNodeTypeAndGuids(view_, dir, &device);

  // Firmware, board and HCA type are absent on some drivers (rxe prints an
  // empty fw_ver and has no board_id): only a failure other than absence is
  // worth an Unknown.
  ReadOptional(view_, absl::StrCat(dir, "/fw_ver"), "fw_ver", &device, device.mutable_fw_ver());
  ReadOptional(view_, absl::StrCat(dir, "/board_id"), "board_id", &device,
               device.mutable_board_id());
  ReadOptional(view_, absl::StrCat(dir, "/hca_type"), "hca_type", &device,
               device.mutable_hca_type());
  ReadOptional(view_, absl::StrCat(dir, "/parent"), "parent_netdev", &device,
               device.mutable_parent_netdev());
  // The VPD product name replaces this once the PCI function is read
  // (SetRdmaModelsFromVpd); without VPD the HCA type is the best model name.
  device.set_model(device.hca_type());

  ReadPciAddress(view_, dir, &device);

  const std::string ports_dir = absl::StrCat(dir, "/ports");
  auto port_names = view_.ListDir(ports_dir);
  if (!port_names.ok()) {
    AddUnknown(device, "ports", ports_dir, port_names.status());
    return device;
  }
  for (uint32_t port : NumericEntries(*port_names)) {
    *device.add_ports() = CollectPort(device, port, netdev_mtu);
  }
  if (device.ports().empty()) AddUnknown(device, "ports", ports_dir, "no numbered port directory");
  return device;
}

v1::RdmaPort RdmaCollector::CollectPort(const v1::RdmaDevice& device, uint32_t port_number,
                                        const NetdevMtuLookup& netdev_mtu) const {
  v1::RdmaPort port;
  port.set_port(port_number);
  const std::string dir =
      absl::StrCat(kClassInfiniband, "/", device.name(), "/ports/", port_number);

  ReadPortStates(view_, dir, &port);
  ReadPortRate(view_, dir, &port);
  ReadLinkLayer(view_, dir, &port);
  ReadLids(view_, dir, &port);

  CollectGids(dir, &port);

  for (const auto& gid : port.gids()) {
    if (!gid.netdev().empty()) {
      port.set_netdev(gid.netdev());
      break;
    }
  }
  if (port.netdev().empty()) port.set_netdev(device.parent_netdev());
  if (port.netdev().empty() && !device.pci_address().empty()) {
    port.set_netdev(NetdevOfPciFunction(device.pci_address(), port_number));
  }
  if (port.netdev().empty() && port.link_layer() == kLinkLayerEthernet) {
    AddUnknown(port, "netdev", absl::StrCat(dir, "/gid_attrs/ndevs"),
               "no GID names a netdev and the device has no parent or PCI netdev");
  }

  FillActiveMtu(device.name(), dir, netdev_mtu, &port);
  return port;
}

void RdmaCollector::CollectGids(const std::string& port_dir, v1::RdmaPort* port) const {
  const std::string gids_dir = absl::StrCat(port_dir, "/gids");
  auto names = view_.ListDir(gids_dir);
  if (!names.ok()) {
    AddUnknown(*port, "gids", gids_dir, names.status());
    return;
  }
  for (uint32_t index : NumericEntries(*names)) {
    const std::string field = absl::StrCat("gids[", index, "]");
    const std::string path = absl::StrCat(gids_dir, "/", index);
    auto text = view_.ReadText(path);
    if (!text.ok()) {
      AddUnknown(*port, field, path, text.status());
      continue;
    }
    auto parsed = ParseGid(*text);
    if (!parsed.ok()) {
      AddUnknown(*port, field, path, parsed.status().message());
      continue;
    }
    if (parsed->is_zero) continue;  // an empty slot
    v1::Gid* gid = port->add_gids();
    gid->set_index(index);
    gid->set_gid(parsed->gid);
    gid->set_ipv4(parsed->ipv4);
    ReadOptional(view_, absl::StrCat(port_dir, "/gid_attrs/types/", index),
                 absl::StrCat(field, ".type"), port, gid->mutable_type());
    ReadOptional(view_, absl::StrCat(port_dir, "/gid_attrs/ndevs/", index),
                 absl::StrCat(field, ".netdev"), port, gid->mutable_netdev());
  }
}

std::string RdmaCollector::NetdevOfPciFunction(const std::string& pci_address,
                                               uint32_t port_number) const {
  const std::string net_dir = absl::StrCat("/sys/bus/pci/devices/", pci_address, "/net");
  auto names = view_.ListDir(net_dir);
  if (!names.ok() || names->empty()) return "";
  if (names->size() == 1) return names->front();
  // Several netdevs on one function (mlx4's two ports): dev_port is 0-based.
  for (const auto& name : *names) {
    auto text = view_.ReadText(absl::StrCat(net_dir, "/", name, "/dev_port"));
    if (!text.ok()) continue;
    auto dev_port = ParseInt(*text);
    if (dev_port.ok() && *dev_port + 1 == static_cast<int64_t>(port_number)) return name;
  }
  return "";
}

void RdmaCollector::FillActiveMtu(const std::string& device, const std::string& port_dir,
                                  const NetdevMtuLookup& netdev_mtu, v1::RdmaPort* port) const {
  std::string verbs_failure;
  if (port_attributes_ != nullptr) {
    auto attributes = port_attributes_->Query(device, port->port());
    if (attributes.ok()) {
      port->set_active_mtu(attributes->active_mtu_bytes);
      port->set_active_mtu_source(attributes->source.empty() ? "ibv_query_port"
                                                             : attributes->source);
      return;
    }
    verbs_failure = std::string(attributes.status().message());
  }
  if (port->link_layer() == kLinkLayerEthernet) {
    if (port->netdev().empty()) {
      AddUnknown(*port, "active_mtu", port_dir, "RoCE port has no netdev to derive it from");
      return;
    }
    const std::string mtu_path = absl::StrCat("/sys/class/net/", port->netdev(), "/mtu");
    std::optional<uint32_t> mtu;
    if (netdev_mtu) mtu = netdev_mtu(port->netdev());
    if (!mtu.has_value()) {
      AddUnknown(*port, "active_mtu", mtu_path,
                 absl::StrCat("MTU of netdev ", port->netdev(), " is unknown"));
      return;
    }
    auto derived = RoceActiveMtuForNetdevMtu(*mtu);
    if (!derived.ok()) {
      AddUnknown(*port, "active_mtu", mtu_path, derived.status().message());
      return;
    }
    port->set_active_mtu(*derived);
    port->set_active_mtu_source(absl::StrCat("derived from netdev MTU ", *mtu));
    return;
  }
  if (verbs_failure.empty()) {
    AddUnknown(*port, "active_mtu", port_dir,
               "not in sysfs; needs ibv_query_port on a live device or a captured "
               "clustercert-capture/ibv_devinfo");
  } else {
    AddUnknown(*port, "active_mtu",
               absl::StrCat("ibv_query_port(", device, ", ", port->port(), ")"), verbs_failure);
  }
}

}  // namespace clustercert::agent::inventory
