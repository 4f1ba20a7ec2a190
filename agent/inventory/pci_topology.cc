#include "agent/inventory/pci_topology.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/inventory/sysfs_formats.h"

namespace clustercert::agent::inventory {
namespace {

// A function's place in the PCI tree: its host bridge ("pci0000:40") and the
// chain of functions from the root port down to itself.
struct PciPlace {
  std::string host_bridge;
  std::vector<std::string> chain;
};

absl::StatusOr<PciPlace> PlaceOf(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  if (parts.size() < 4 || parts[0] != "sys" || parts[1] != "devices" ||
      !absl::StartsWith(parts[2], "pci")) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a PCI function under /sys/devices/pciDDDD:BB"));
  }
  PciPlace place;
  place.host_bridge = std::string(parts[2]);
  for (size_t i = 3; i < parts.size() && IsPciAddress(parts[i]); ++i) {
    place.chain.emplace_back(parts[i]);
  }
  if (place.chain.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' names no PCI function below ", place.host_bridge));
  }
  return place;
}

// NCCL's view of the switches above a function, nearest first: the parent of
// the function at depth d (1-based in the chain) is the one at depth d - 2,
// so a switch's upstream and downstream ports count once; depth < 1 is the
// host bridge. Each node is named by its path so equal names are equal nodes.
std::vector<std::string> SwitchesAbove(const PciPlace& place) {
  std::vector<std::string> switches;
  for (int depth = static_cast<int>(place.chain.size()) - 2; depth >= 1; depth -= 2) {
    switches.push_back(absl::StrJoin(place.chain.begin(), place.chain.begin() + depth, "/"));
  }
  return switches;
}

}  // namespace

absl::StatusOr<std::string> ClassifyPciRelation(absl::string_view path_a, std::optional<int> numa_a,
                                                absl::string_view path_b,
                                                std::optional<int> numa_b) {
  auto a = PlaceOf(path_a);
  if (!a.ok()) return a.status();
  auto b = PlaceOf(path_b);
  if (!b.ok()) return b.status();
  if (numa_a.has_value() && numa_b.has_value() && *numa_a != *numa_b) return std::string("SYS");
  if (a->host_bridge != b->host_bridge) return std::string("NODE");
  const std::vector<std::string> above_a = SwitchesAbove(*a);
  const std::vector<std::string> above_b = SwitchesAbove(*b);
  for (size_t i = 0; i < above_a.size(); ++i) {
    auto match = std::find(above_b.begin(), above_b.end(), above_a[i]);
    if (match == above_b.end()) continue;
    const size_t switches = (i + 1) + static_cast<size_t>(match - above_b.begin());
    return std::string(switches <= 1 ? "PIX" : "PXB");
  }
  return std::string("PHB");
}

std::vector<v1::GpuNicPath> BuildGpuNicPaths(const std::vector<v1::PciFunction>& functions,
                                             std::vector<v1::Unknown>* unknowns) {
  auto numa_of = [](const v1::PciFunction& function) -> std::optional<int> {
    if (!function.has_numa_node()) return std::nullopt;
    return function.numa_node();
  };
  std::vector<v1::GpuNicPath> paths;
  for (const auto& gpu : functions) {
    if (gpu.role() != "gpu") continue;
    for (const auto& nic : functions) {
      if (nic.role() != "nic") continue;
      auto relation =
          ClassifyPciRelation(gpu.sysfs_path(), numa_of(gpu), nic.sysfs_path(), numa_of(nic));
      if (!relation.ok()) {
        if (unknowns != nullptr) {
          v1::Unknown unknown;
          unknown.set_field(absl::StrCat("gpu_nic_paths[", gpu.name(), ",", nic.name(), "]"));
          unknown.set_path(gpu.sysfs_path().empty() ? nic.sysfs_path() : gpu.sysfs_path());
          unknown.set_reason(std::string(relation.status().message()));
          unknowns->push_back(std::move(unknown));
        }
        continue;
      }
      v1::GpuNicPath path;
      path.set_gpu(gpu.name());
      path.set_gpu_pci(gpu.address());
      path.set_nic(nic.name());
      path.set_nic_pci(nic.address());
      path.set_relation(*relation);
      paths.push_back(std::move(path));
    }
  }
  return paths;
}

}  // namespace clustercert::agent::inventory
