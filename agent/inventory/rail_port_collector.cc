#include "agent/inventory/rail_port_collector.h"

#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/ib_neighbor.h"
#include "agent/inventory/unknowns.h"
#include "common/host_port.h"

namespace clustercert::agent::inventory {
namespace {

bool IsRailName(const std::string& text) {  // an RDMA device name, as the plan spells it
  if (text.empty() || text.size() > 64 || text.front() == '-') return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

absl::Status Invalid(const std::string& field, const std::string& value, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("cabling query: ", field, " '", value.substr(0, 80), "' ", why,
                   "; the controller sends the plan's rails and fabric.lldp_wait_s, check its "
                   "version"));
}

enum class Link { kNone, kEthernet, kInfiniBand };

// One rail port to read, with what the inventory says about it.
struct Target {
  v1::RailPort port;
  Link link = Link::kNone;
  std::string module_netdev;  // the netdev whose module EEPROM is read (IPoIB's on InfiniBand)
};

void Unread(v1::RailPort& port, absl::string_view path, absl::string_view reason) {
  AddUnknown(port, "neighbor", path, reason);
  AddUnknown(port, "module", path, reason);
}

void AddDevicePorts(const std::string& rail, const v1::RdmaDevice& device,
                    std::vector<Target>& targets) {
  if (device.ports_size() == 0) {
    Target target;
    target.port.set_rail(rail);
    target.port.set_device(rail);
    Unread(target.port, absl::StrCat("/sys/class/infiniband/", rail, "/ports"),
           absl::StrCat(rail, " lists no port: its cabling cannot be read"));
    targets.push_back(std::move(target));
    return;
  }
  for (const v1::RdmaPort& port : device.ports()) {
    Target target;
    target.port.set_rail(rail);
    target.port.set_device(rail);
    target.port.set_port(port.port());
    target.module_netdev = port.netdev().empty() ? device.parent_netdev() : port.netdev();
    if (port.link_layer() == "InfiniBand") {
      target.link = Link::kInfiniBand;
    } else if (!target.module_netdev.empty()) {
      target.link = Link::kEthernet;
      target.port.set_netdev(target.module_netdev);
    } else {
      AddUnknown(target.port, "neighbor", absl::StrCat(rail, " port ", port.port()),
                 absl::StrCat(rail, " port ", port.port(), " (link layer '", port.link_layer(),
                              "') has no netdev to hear its switch's LLDP on"));
    }
    targets.push_back(std::move(target));
  }
}

// fabric.type ethernet: the netdev that holds data_ip is the one rail.
Target DataIpTarget(const std::string& data_ip, const v1::Inventory& inventory) {
  Target target;
  for (const v1::Netdev& netdev : inventory.netdevs()) {
    for (const std::string& cidr : netdev.cidrs()) {
      if (cidr.substr(0, cidr.find('/')) != data_ip) continue;
      target.port.set_rail(netdev.name());
      target.port.set_netdev(netdev.name());
      target.module_netdev = netdev.name();
      target.link = Link::kEthernet;
      return target;
    }
  }
  target.port.set_rail(data_ip);
  Unread(target.port, "getifaddrs",
         absl::StrCat("no netdev of this host holds the data address ", data_ip,
                      ": check the plan's data_ip for this node"));
  return target;
}

std::vector<Target> Targets(const v1::CablingQuery& query, const v1::Inventory& inventory) {
  std::vector<Target> targets;
  std::set<std::string> seen;
  for (const std::string& rail : query.rails()) {
    if (!seen.insert(rail).second) continue;
    auto device = std::find_if(inventory.rdma_devices().begin(), inventory.rdma_devices().end(),
                               [&rail](const v1::RdmaDevice& d) { return d.name() == rail; });
    if (device != inventory.rdma_devices().end()) {
      AddDevicePorts(rail, *device, targets);
      continue;
    }
    Target target;
    target.port.set_rail(rail);
    target.port.set_device(rail);
    Unread(target.port, "/sys/class/infiniband",
           absl::StrCat(rail, " is not an RDMA device of this host: check the plan's rails"));
    targets.push_back(std::move(target));
  }
  if (query.rails().empty() && !query.data_ip().empty()) {
    targets.push_back(DataIpTarget(query.data_ip(), inventory));
  }
  return targets;
}

using Neighbors = std::map<std::string, absl::StatusOr<v1::LinkNeighbor>>;

// The LLDP wait, on its own thread so the module and InfiniBand reads run
// during it; on the caller's thread when no thread can be started.
std::future<Neighbors> StartLldp(NeighborSource& source, std::vector<std::string> netdevs,
                                 absl::Time started, absl::Duration wait) {
  auto read = [&source, netdevs = std::move(netdevs), started, wait] {
    return source.Read(netdevs, started, wait);
  };
  try {
    return std::async(std::launch::async, read);
  } catch (const std::system_error&) {
    return std::async(std::launch::deferred, read);
  }
}

void ReadModules(ModuleSource* modules, std::vector<Target>& targets) {
  for (Target& target : targets) {
    const auto& unknowns = target.port.unknowns();
    if (std::any_of(unknowns.begin(), unknowns.end(),
                    [](const v1::Unknown& unknown) { return unknown.field() == "module"; })) {
      continue;  // a rail this host does not have
    }
    const std::string path = absl::StrCat("module EEPROM of ", target.module_netdev);
    if (target.module_netdev.empty()) {
      AddUnknown(target.port, "module",
                 absl::StrCat(target.port.device(), " port ", target.port.port()),
                 "the port has no netdev, and the module EEPROM is read through one");
    } else if (modules == nullptr) {
      AddUnknown(target.port, "module", path, "this agent has no module-EEPROM reader");
    } else if (absl::StatusOr<v1::CableModule> module = modules->Read(target.module_netdev);
               module.ok()) {
      *target.port.mutable_module() = *std::move(module);
    } else {
      AddUnknown(target.port, "module", path, module.status().message());
    }
  }
}

// Each InfiniBand port in turn, each call bounded by what is left of the
// wait (at least a second, so a short LLDP wait does not starve them).
void ReadInfiniBand(process::CommandRunner* runner, Clock& clock, absl::Time deadline,
                    std::vector<Target>& targets) {
  for (Target& target : targets) {
    if (target.link != Link::kInfiniBand) continue;
    const std::string path =
        absl::StrCat("smpquery -C ", target.port.device(), " -P ", target.port.port());
    if (runner == nullptr) {
      AddUnknown(target.port, "neighbor", path, "this agent runs no command (no command runner)");
      continue;
    }
    const absl::Duration left = std::max(deadline - clock.Now(), absl::Seconds(1));
    absl::StatusOr<v1::LinkNeighbor> neighbor =
        IbNeighborReader(*runner).Read(target.port.device(), target.port.port(), left);
    if (neighbor.ok()) {
      *target.port.mutable_neighbor() = *std::move(neighbor);
    } else {
      AddUnknown(target.port, "neighbor", path, neighbor.status().message());
    }
  }
}

void FillLldp(const Neighbors& heard, bool asked, Target& target) {
  const std::string& netdev = target.port.netdev();
  const std::string path = absl::StrCat("LLDP on ", netdev);
  auto found = heard.find(netdev);
  if (!asked) {
    AddUnknown(target.port, "neighbor", path, "this agent has no LLDP reader");
  } else if (found == heard.end()) {
    AddUnknown(target.port, "neighbor", path, "the LLDP reader gave no answer for it");
  } else if (found->second.ok()) {
    *target.port.mutable_neighbor() = *found->second;
  } else {
    AddUnknown(target.port, "neighbor", path, found->second.status().message());
  }
}

}  // namespace

absl::Status ValidateCablingQuery(const v1::CablingQuery& query) {
  if (query.rails_size() > CablingLimits::kMaxRails) {
    return Invalid("rails", absl::StrCat(query.rails_size()),
                   absl::StrCat("is more than ", CablingLimits::kMaxRails));
  }
  for (const std::string& rail : query.rails()) {
    if (!IsRailName(rail)) return Invalid("rails", rail, "is not an RDMA device name");
  }
  if (!query.data_ip().empty() && !IsIpAddress(query.data_ip())) {
    return Invalid("data_ip", query.data_ip(), "is not a literal IP address");
  }
  if (query.rails().empty() && query.data_ip().empty()) {
    return Invalid("rails", "", "is empty and there is no data_ip: the query names no rail");
  }
  if (query.lldp_wait_ms() < CablingLimits::kMinWaitMs ||
      query.lldp_wait_ms() > CablingLimits::kMaxWaitMs) {
    return Invalid("lldp_wait_ms", absl::StrCat(query.lldp_wait_ms()),
                   absl::StrCat("must be ", CablingLimits::kMinWaitMs, " to ",
                                CablingLimits::kMaxWaitMs, " (1 to 120 s)"));
  }
  return absl::OkStatus();
}

RailPortCollector::RailPortCollector(RailPortSources sources, Clock& clock)
    : sources_(std::move(sources)), clock_(clock) {}

std::vector<v1::RailPort> RailPortCollector::Collect(const v1::CablingQuery& query,
                                                     const v1::Inventory& inventory) const {
  const absl::Time started = clock_.Now();
  const absl::Duration wait = absl::Milliseconds(query.lldp_wait_ms());
  std::vector<Target> targets = Targets(query, inventory);
  std::vector<v1::RailPort> ports;
  if (!sources_.offline_reason.empty()) {
    for (Target& target : targets) {
      if (target.port.unknowns_size() == 0) {
        Unread(target.port, inventory.sysfs_root(), sources_.offline_reason);
      }
      ports.push_back(std::move(target.port));
    }
    return ports;
  }
  std::vector<std::string> netdevs;
  for (const Target& target : targets) {
    if (target.link == Link::kEthernet &&
        std::find(netdevs.begin(), netdevs.end(), target.port.netdev()) == netdevs.end()) {
      netdevs.push_back(target.port.netdev());
    }
  }
  std::future<Neighbors> lldp;
  if (sources_.neighbors != nullptr && !netdevs.empty()) {
    lldp = StartLldp(*sources_.neighbors, netdevs, started, wait);
  }
  ReadModules(sources_.modules, targets);
  ReadInfiniBand(sources_.ib, clock_, started + wait, targets);
  const bool asked = lldp.valid();
  const Neighbors heard = asked ? lldp.get() : Neighbors();
  for (Target& target : targets) {
    if (target.link == Link::kEthernet) FillLldp(heard, asked, target);
    ports.push_back(std::move(target.port));
  }
  return ports;
}

}  // namespace clustercert::agent::inventory
