#include "agent/peer/port_counters.h"

#include <charconv>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/inventory/unknowns.h"
#include "common/counter_deltas.h"

namespace clustercert::peer {
namespace {

constexpr char kCounters[] = "counters";
constexpr char kHwCounters[] = "hw_counters";
constexpr char kEthtool[] = "ethtool";

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
        absl::StrCat("unparsable: '", text, "' is larger than a 64-bit counter"));
  }
  if (ec != std::errc() || end != text.data() + text.size() || text.front() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("unparsable: '", text.substr(0, 64), "' is not a decimal counter"));
  }
  return value;
}

}  // namespace

PortCounterReader::PortCounterReader(const SysfsView& sysfs, EthtoolStatsSource* ethtool,
                                     std::function<absl::Time()> now)
    : sysfs_(sysfs), ethtool_(ethtool), now_(std::move(now)) {}

v1::PortCounters PortCounterReader::Read(const std::string& device, uint32_t port,
                                         const std::string& netdev) const {
  v1::PortCounters out;
  out.set_device(device);
  out.set_port(port);
  out.set_netdev(netdev);
  out.set_read_unix_us(absl::ToUnixMicros(now_()));
  const std::string base = absl::StrCat("/sys/class/infiniband/", device, "/ports/", port);
  if (!sysfs_.Exists(base)) {
    // Without this an unknown device would read as a port with no counters.
    inventory::AddUnknown(out, "port", base,
                          absl::StrCat("no such RDMA port: ", device, " port ", port,
                                       " is not in /sys/class/infiniband"));
  } else {
    ReadDirectory(base + "/" + kCounters, kCounters, out);
    ReadDirectory(base + "/" + kHwCounters, kHwCounters, out);
  }
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

}  // namespace clustercert::peer
