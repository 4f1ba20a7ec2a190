#include "agent/peer/port_counters.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/inventory/unknowns.h"
#include "common/counter_deltas.h"
#include "common/printable.h"

namespace clustercert::agent::peer {
namespace {

constexpr char kCounters[] = "counters";
constexpr char kHwCounters[] = "hw_counters";
constexpr char kEthtool[] = "ethtool";
constexpr char kClassInfiniband[] = "/sys/class/infiniband";
constexpr char kClassNet[] = "/sys/class/net";
constexpr size_t kMaxDeviceChars = 64;
// How many of the host's names an error lists before "...".
constexpr size_t kMaxNamesListed = 16;
// A garbled counter is quoted only when it is this short and made of
// characters a counter file could plausibly hold: anything else might be
// some other file's contents and is described by its size instead.
constexpr size_t kMaxQuotedChars = 24;

std::string Quoted(const std::string& text) {
  const bool plain =
      text.size() <= kMaxQuotedChars && std::all_of(text.begin(), text.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '-' ||
               c == '+' || c == '.' || c == '_';
      });
  if (plain) return absl::StrCat("'", text, "'");
  return absl::StrCat("a ", text.size(), "-byte text");
}

// A strict unsigned decimal: digits only (sysfs' trailing newline is already
// stripped by SysfsView).
absl::StatusOr<uint64_t> ParseCounter(const std::string& text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("unparsable: '' (empty file): expected a decimal counter");
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(
        absl::StrCat("unparsable: ", Quoted(text), " is larger than a 64-bit counter"));
  }
  if (ec != std::errc() || end != text.data() + text.size() || text.front() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("unparsable: ", Quoted(text), " is not a decimal counter"));
  }
  return value;
}

// A request's value in a message: printable ASCII only, bounded.
std::string Shown(const std::string& value) { return PrintableText(value, kMaxDeviceChars); }

bool IsValidDeviceName(const std::string& device) {
  if (device.empty() || device.size() > kMaxDeviceChars || device == "." || device == "..") {
    return false;
  }
  return std::all_of(device.begin(), device.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

// "mlx5_0, mlx5_1" from a listing of the view's own class directory; "none"
// when it has none or cannot be listed.
std::string Known(const absl::StatusOr<std::vector<std::string>>& names) {
  if (!names.ok() || names->empty()) return "none";
  if (names->size() <= kMaxNamesListed) return absl::StrJoin(*names, ", ");
  return absl::StrCat(absl::StrJoin(names->begin(), names->begin() + kMaxNamesListed, ", "),
                      ", ...");
}

bool Lists(const absl::StatusOr<std::vector<std::string>>& names, const std::string& name) {
  return names.ok() && std::binary_search(names->begin(), names->end(), name);
}

}  // namespace

PortCounterReader::PortCounterReader(const SysfsView& sysfs, EthtoolStatsSource* ethtool,
                                     std::function<absl::Time()> now)
    : sysfs_(sysfs), ethtool_(ethtool), now_(std::move(now)) {}

absl::Status PortCounterReader::CheckDevice(const std::string& device, uint32_t port) const {
  if (device.empty()) {
    if (port == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("port ", port,
                     " is given without a device: name the RDMA device (e.g. mlx5_0), or give "
                     "port 0 to read only the netdev's ethtool statistics"));
  }
  const auto devices = sysfs_.ListDir(kClassInfiniband);
  if (!IsValidDeviceName(device)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device '", Shown(device), "' is not an RDMA device name (1 to ", kMaxDeviceChars,
        " of A-Z a-z 0-9 _ . -): give one this host has (", Known(devices), ")"));
  }
  if (!Lists(devices, device)) {
    return absl::NotFoundError(absl::StrCat("device ", device, " is not in ", kClassInfiniband,
                                            " on this host: give one it has (", Known(devices),
                                            ")"));
  }
  const std::string ports_dir = absl::StrCat(kClassInfiniband, "/", device, "/ports");
  const auto ports = sysfs_.ListDir(ports_dir);
  if (port < 1 || port > kMaxPort) {
    return absl::InvalidArgumentError(absl::StrCat("port ", port, " of ", device, " is outside 1..",
                                                   kMaxPort, ": give one of its ports (",
                                                   Known(ports), ")"));
  }
  if (!Lists(ports, absl::StrCat(port))) {
    return absl::NotFoundError(absl::StrCat(device, " has no port ", port, " in ", ports_dir,
                                            ": give one of its ports (", Known(ports), ")"));
  }
  return absl::OkStatus();
}

absl::Status PortCounterReader::CheckNetdev(const std::string& netdev) const {
  if (netdev.empty()) return absl::OkStatus();
  const auto netdevs = sysfs_.ListDir(kClassNet);
  if (!IsValidNetdevName(netdev)) {
    return absl::InvalidArgumentError(
        absl::StrCat("netdev '", Shown(netdev),
                     "' is not an interface name (1 to 15 printable characters, no '/', ':' or "
                     "space): give one this host has (",
                     Known(netdevs), ")"));
  }
  if (!Lists(netdevs, netdev)) {
    return absl::NotFoundError(absl::StrCat("netdev ", netdev, " is not in ", kClassNet,
                                            " on this host: give one it has (", Known(netdevs),
                                            ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::PortCounters> PortCounterReader::Read(const std::string& device, uint32_t port,
                                                         const std::string& netdev) const {
  if (absl::Status valid = CheckDevice(device, port); !valid.ok()) return valid;
  if (absl::Status valid = CheckNetdev(netdev); !valid.ok()) return valid;
  v1::PortCounters out;
  out.set_device(device);
  out.set_port(port);
  out.set_netdev(netdev);
  out.set_read_unix_us(absl::ToUnixMicros(now_()));
  if (!device.empty()) {
    const std::string base = absl::StrCat(kClassInfiniband, "/", device, "/ports/", port);
    ReadDirectory(base + "/" + kCounters, kCounters, out);
    ReadDirectory(base + "/" + kHwCounters, kHwCounters, out);
  }
  if (!netdev.empty()) ReadCarrierChanges(netdev, out);
  if (ethtool_ != nullptr && !netdev.empty()) {
    auto stats = ethtool_->Read(netdev);
    if (!stats.ok()) {
      inventory::AddUnknown(out, kEthtool, absl::StrCat("SIOCETHTOOL ETHTOOL_GSTATS ", netdev),
                            stats.status());
    } else {
      for (const auto& [name, value] : *stats) {
        auto* entry = out.add_values();
        entry->set_name(name);
        entry->set_source(kEthtool);
        entry->set_value(value);
      }
    }
  }
  return out;
}

void PortCounterReader::ReadCarrierChanges(const std::string& netdev, v1::PortCounters& out) const {
  const std::string path = absl::StrCat(kClassNet, "/", netdev, "/", counters::kCarrierChanges);
  auto text = sysfs_.ReadText(path);
  if (!text.ok()) {
    // Every netdev has it since Linux 3.15; one without it cannot show a
    // flap, which port.flap must call unknown rather than none.
    inventory::AddUnknown(out, absl::StrCat(counters::kSysfsSource, "/", counters::kCarrierChanges),
                          path, text.status());
    return;
  }
  auto value = ParseCounter(*text);
  if (!value.ok()) {
    inventory::AddUnknown(out, absl::StrCat(counters::kSysfsSource, "/", counters::kCarrierChanges),
                          path, value.status().message());
    return;
  }
  auto* entry = out.add_values();
  entry->set_name(counters::kCarrierChanges);
  entry->set_source(counters::kSysfsSource);
  entry->set_value(*value);
}

void PortCounterReader::ReadDirectory(const std::string& dir, const std::string& source,
                                      v1::PortCounters& out) const {
  auto names = sysfs_.ListDir(dir);
  if (!names.ok()) {
    // A driver without this directory (rxe has no counters/, IB ports no
    // hw_counters/ on some kernels) simply has no such counters.
    if (absl::IsNotFound(names.status())) return;
    inventory::AddUnknown(out, source, dir, names.status());
    return;
  }
  for (const std::string& name : *names) {
    // hw_counters/lifespan is the statistics cache lifetime in ms, a
    // setting rather than a counter.
    if (source == kHwCounters && name == "lifespan") continue;
    const std::string path = absl::StrCat(dir, "/", name);
    auto text = sysfs_.ReadText(path);
    if (!text.ok()) {
      inventory::AddUnknown(out, absl::StrCat(source, "/", name), path, text.status());
      continue;
    }
    auto value = ParseCounter(*text);
    if (!value.ok()) {
      inventory::AddUnknown(out, absl::StrCat(source, "/", name), path, value.status().message());
      continue;
    }
    auto* entry = out.add_values();
    entry->set_name(name);
    entry->set_source(source);
    entry->set_value(*value);
  }
}

}  // namespace clustercert::agent::peer
