#include "agent/inventory/pci_collector.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/inventory/pci_vpd.h"
#include "agent/inventory/sysfs_formats.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {
namespace {

constexpr absl::string_view kPciDevices = "/sys/bus/pci/devices";
constexpr uint32_t kNvidiaVendorId = 0x10de;
constexpr uint32_t kDisplayClass = 0x03;  // base class byte of 0x03xxxx
constexpr int64_t kMaxLinkWidth = 32;

}  // namespace

absl::StatusOr<std::vector<v1::PciFunction>> PciCollector::Collect(
    const std::vector<v1::RdmaDevice>& rdma_devices) const {
  std::vector<v1::PciFunction> functions = CollectNics(rdma_devices);
  auto gpus = CollectGpus();
  if (!gpus.ok()) return gpus.status();
  for (auto& gpu : *gpus) functions.push_back(std::move(gpu));
  return functions;
}

std::vector<v1::PciFunction> PciCollector::CollectNics(
    const std::vector<v1::RdmaDevice>& rdma_devices) const {
  std::vector<v1::PciFunction> nics;
  for (const auto& device : rdma_devices) {
    // pci_address came from the device's `device` link; the bus entry is the
    // same function even where that link points at a child (auxiliary) device.
    if (device.pci_address().empty()) continue;
    nics.push_back(
        Describe(absl::StrCat(kPciDevices, "/", device.pci_address()), kRoleNic, device.name()));
  }
  return nics;
}

absl::StatusOr<std::vector<v1::PciFunction>> PciCollector::CollectGpus() const {
  auto addresses = view_.ListDir(kPciDevices);
  if (!addresses.ok()) {
    if (absl::IsNotFound(addresses.status())) return std::vector<v1::PciFunction>{};
    return addresses.status();
  }
  std::vector<v1::PciFunction> gpus;
  // ListDir is sorted and addresses are fixed-width hex: this is PCI order.
  for (const auto& address : *addresses) {
    const std::string dir = absl::StrCat(kPciDevices, "/", address);
    auto vendor_text = view_.ReadText(absl::StrCat(dir, "/vendor"));
    if (!vendor_text.ok()) continue;
    auto vendor = ParseHexU32(*vendor_text);
    if (!vendor.ok() || *vendor != kNvidiaVendorId) continue;
    auto class_text = view_.ReadText(absl::StrCat(dir, "/class"));
    if (!class_text.ok()) continue;
    auto class_code = ParseHexU32(*class_text);
    if (!class_code.ok() || (*class_code >> 16) != kDisplayClass) continue;
    gpus.push_back(Describe(dir, kRoleGpu, absl::StrCat("gpu", gpus.size())));
  }
  return gpus;
}

v1::PciFunction PciCollector::Describe(const std::string& sysfs_dir, absl::string_view role,
                                       absl::string_view name) const {
  v1::PciFunction function;
  function.set_role(std::string(role));
  function.set_name(std::string(name));
  ReadAddress(sysfs_dir, function);
  ReadIds(sysfs_dir, function);
  ReadLinkSpeeds(sysfs_dir, function);
  ReadLinkWidths(sysfs_dir, function);
  ReadNumaNode(sysfs_dir, function);
  // The part's own identity, so a swapped card is named by its serial number.
  FillVpdIdentity(view_, sysfs_dir, function);
  return function;
}

std::optional<std::string> PciCollector::ReadField(const std::string& sysfs_dir,
                                                   absl::string_view file, absl::string_view field,
                                                   v1::PciFunction& function) const {
  const std::string path = absl::StrCat(sysfs_dir, "/", file);
  auto text = view_.ReadText(path);
  if (!text.ok()) {
    AddUnknown(function, field, path, text.status());
    return std::nullopt;
  }
  return *std::move(text);
}

void PciCollector::ReadAddress(const std::string& sysfs_dir, v1::PciFunction& function) const {
  auto resolved = view_.Resolve(sysfs_dir);
  if (!resolved.ok()) {
    AddUnknown(function, "sysfs_path", sysfs_dir, resolved.status());
  } else if (!view_.Exists(*resolved)) {
    AddUnknown(function, "sysfs_path", sysfs_dir, "No such file or directory");
  } else {
    function.set_sysfs_path(*resolved);
    function.set_address(LastPciAddressInPath(*resolved));
  }
  if (function.address().empty()) {
    AddUnknown(function, "address", sysfs_dir, "the path names no PCI function");
  }
}

void PciCollector::ReadIds(const std::string& sysfs_dir, v1::PciFunction& function) const {
  struct IdField {
    absl::string_view file;
    absl::string_view field;
    std::string* (v1::PciFunction::*mutable_field)();
    int digits;
  };
  const IdField kIds[] = {{"vendor", "vendor_id", &v1::PciFunction::mutable_vendor_id, 4},
                          {"device", "device_id", &v1::PciFunction::mutable_device_id, 4},
                          {"class", "class_code", &v1::PciFunction::mutable_class_code, 6}};
  for (const IdField& id : kIds) {
    auto text = ReadField(sysfs_dir, id.file, id.field, function);
    if (!text) continue;
    auto value = ParseHexU32(*text);
    if (!value.ok()) {
      AddUnknown(function, id.field, absl::StrCat(sysfs_dir, "/", id.file),
                 value.status().message());
      continue;
    }
    *(function.*id.mutable_field)() = absl::StrFormat("0x%0*x", id.digits, *value);
  }
}

void PciCollector::ReadLinkSpeeds(const std::string& sysfs_dir, v1::PciFunction& function) const {
  struct SpeedField {
    absl::string_view file;
    absl::string_view field;
    void (v1::PciFunction::*set_gts)(double);
    void (v1::PciFunction::*set_gen)(uint32_t);
  };
  const SpeedField kSpeeds[] = {
      {"current_link_speed", "current_speed_gts", &v1::PciFunction::set_current_speed_gts,
       &v1::PciFunction::set_current_gen},
      {"max_link_speed", "max_speed_gts", &v1::PciFunction::set_max_speed_gts,
       &v1::PciFunction::set_max_gen}};
  for (const SpeedField& speed_field : kSpeeds) {
    auto text = ReadField(sysfs_dir, speed_field.file, speed_field.field, function);
    if (!text) continue;
    auto speed = ParsePciLinkSpeed(*text);
    if (!speed.ok()) {
      AddUnknown(function, speed_field.field, absl::StrCat(sysfs_dir, "/", speed_field.file),
                 speed.status().message());
      continue;
    }
    (function.*speed_field.set_gts)(speed->gts);
    (function.*speed_field.set_gen)(speed->gen);
  }
}

void PciCollector::ReadLinkWidths(const std::string& sysfs_dir, v1::PciFunction& function) const {
  struct WidthField {
    absl::string_view file;
    absl::string_view field;
    void (v1::PciFunction::*set_width)(uint32_t);
  };
  const WidthField kWidths[] = {
      {"current_link_width", "current_width", &v1::PciFunction::set_current_width},
      {"max_link_width", "max_width", &v1::PciFunction::set_max_width}};
  for (const WidthField& width_field : kWidths) {
    auto text = ReadField(sysfs_dir, width_field.file, width_field.field, function);
    if (!text) continue;
    const std::string path = absl::StrCat(sysfs_dir, "/", width_field.file);
    auto width = ParseInt(*text);
    if (!width.ok()) {
      AddUnknown(function, width_field.field, path, width.status().message());
    } else if (*width == 0) {
      AddUnknown(function, width_field.field, path, "width 0 (the link is down)");
    } else if (*width < 0 || *width > kMaxLinkWidth) {
      AddUnknown(function, width_field.field, path, absl::StrCat("out of range: '", *text, "'"));
    } else {
      (function.*width_field.set_width)(static_cast<uint32_t>(*width));
    }
  }
}

void PciCollector::ReadNumaNode(const std::string& sysfs_dir, v1::PciFunction& function) const {
  auto text = ReadField(sysfs_dir, "numa_node", "numa_node", function);
  if (!text) return;
  const std::string path = absl::StrCat(sysfs_dir, "/numa_node");
  auto numa = ParseInt(*text);
  if (!numa.ok()) {
    AddUnknown(function, "numa_node", path, numa.status().message());
  } else if (*numa == -1) {
    AddUnknown(function, "numa_node", path, "numa_node is -1 (firmware did not report it)");
  } else if (*numa < 0 || *numa > 4095) {
    AddUnknown(function, "numa_node", path, absl::StrCat("out of range: '", *text, "'"));
  } else {
    function.set_numa_node(static_cast<int32_t>(*numa));
  }
}

}  // namespace clustercert::agent::inventory
