#include "agent/inventory/netdev_collector.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/sysfs_formats.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {
namespace {

constexpr absl::string_view kClassNet = "/sys/class/net";
constexpr int64_t kMaxMtu = 1 << 20;

void AddSorted(const std::string& name, v1::Netdev* netdev) {
  auto* list = netdev->mutable_rdma_devices();
  if (name.empty() || std::find(list->begin(), list->end(), name) != list->end()) return;
  list->Add(std::string(name));
  std::sort(list->begin(), list->end());
}

}  // namespace

absl::StatusOr<std::vector<v1::Netdev>> NetdevCollector::Collect() const {
  auto names = view_.ListDir(kClassNet);
  if (!names.ok()) return names.status();
  std::vector<v1::Netdev> netdevs;
  netdevs.reserve(names->size());
  for (const auto& name : *names) netdevs.push_back(CollectOne(name));
  return netdevs;
}

v1::Netdev NetdevCollector::CollectOne(const std::string& name) const {
  v1::Netdev netdev;
  netdev.set_name(name);
  const std::string dir = absl::StrCat(kClassNet, "/", name);

  const std::string mtu_path = absl::StrCat(dir, "/mtu");
  auto mtu_text = view_.ReadText(mtu_path);
  if (!mtu_text.ok()) {
    AddUnknown(netdev, "mtu", mtu_path, mtu_text.status());
  } else if (auto mtu = ParseInt(*mtu_text); !mtu.ok()) {
    AddUnknown(netdev, "mtu", mtu_path, mtu.status().message());
  } else if (*mtu <= 0 || *mtu > kMaxMtu) {
    AddUnknown(netdev, "mtu", mtu_path, absl::StrCat("out of range: '", *mtu_text, "'"));
  } else {
    netdev.set_mtu(static_cast<uint32_t>(*mtu));
  }

  const std::string operstate_path = absl::StrCat(dir, "/operstate");
  auto operstate = view_.ReadText(operstate_path);
  if (!operstate.ok()) {
    AddUnknown(netdev, "operstate", operstate_path, operstate.status());
  } else if (operstate->empty()) {
    AddUnknown(netdev, "operstate", operstate_path, "empty file");
  } else {
    netdev.set_operstate(*operstate);
  }

  // The kernel prints SPEED_UNKNOWN as -1 and some drivers fail with EINVAL
  // (down links, virtual interfaces): both leave the speed unset.
  const std::string speed_path = absl::StrCat(dir, "/speed");
  auto speed_text = view_.ReadText(speed_path);
  if (!speed_text.ok()) {
    AddUnknown(netdev, "speed_mbps", speed_path, speed_text.status());
  } else if (auto speed = ParseInt(*speed_text); !speed.ok()) {
    AddUnknown(netdev, "speed_mbps", speed_path, speed.status().message());
  } else if (*speed == -1) {
    AddUnknown(netdev, "speed_mbps", speed_path, "driver reports -1 (no link speed)");
  } else if (*speed < 0) {
    AddUnknown(netdev, "speed_mbps", speed_path, absl::StrCat("out of range: '", *speed_text, "'"));
  } else {
    netdev.set_speed_mbps(*speed);
  }

  // A netdev's resolved path runs through its PCI function
  // (/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/net/IF); virtual
  // interfaces live under /sys/devices/virtual and have none.
  auto resolved = view_.Resolve(dir);
  if (!resolved.ok()) {
    AddUnknown(netdev, "pci_address", dir, resolved.status());
  } else {
    netdev.set_pci_address(LastPciAddressInPath(*resolved));
  }

  const std::string rdma_dir = absl::StrCat(dir, "/device/infiniband");
  if (view_.Exists(rdma_dir)) {
    auto rdma = view_.ListDir(rdma_dir);
    if (rdma.ok()) {
      for (const auto& device : *rdma) AddSorted(device, &netdev);
    } else {
      AddUnknown(netdev, "rdma_devices", rdma_dir, rdma.status());
    }
  }
  return netdev;
}

NetdevMtuLookup MtuLookupFrom(const std::vector<v1::Netdev>& netdevs) {
  absl::flat_hash_map<std::string, uint32_t> mtus;
  for (const auto& netdev : netdevs) {
    if (netdev.has_mtu()) mtus[netdev.name()] = netdev.mtu();
  }
  return [mtus = std::move(mtus)](const std::string& name) -> std::optional<uint32_t> {
    auto it = mtus.find(name);
    if (it == mtus.end()) return std::nullopt;
    return it->second;
  };
}

void LinkRdmaDevices(const std::vector<v1::RdmaDevice>& rdma_devices,
                     std::vector<v1::Netdev>* netdevs) {
  absl::flat_hash_map<std::string, v1::Netdev*> by_name;
  for (auto& netdev : *netdevs) by_name[netdev.name()] = &netdev;
  auto link = [&by_name](const std::string& netdev, const std::string& device) {
    if (netdev.empty()) return;
    auto it = by_name.find(netdev);
    if (it != by_name.end()) AddSorted(device, it->second);
  };
  for (const auto& device : rdma_devices) {
    link(device.parent_netdev(), device.name());
    for (const auto& port : device.ports()) {
      link(port.netdev(), device.name());
      for (const auto& gid : port.gids()) link(gid.netdev(), device.name());
    }
  }
}

}  // namespace clustercert::agent::inventory
