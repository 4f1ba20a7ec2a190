#include "agent/inventory/pcie_acs_collector.h"

#include <bitset>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agent/inventory/sysfs_formats.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {
namespace {

constexpr uint32_t kFirstExtendedCap = 0x100;
constexpr size_t kConventionalConfigBytes = 256;
constexpr int kMaxChainEntries = 64;
constexpr char kPciDevices[] = "/sys/bus/pci/devices";

uint32_t Le32(absl::string_view bytes, uint32_t offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + offset);
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

uint16_t Le16(absl::string_view bytes, uint32_t offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + offset);
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

// One PCI function on a sysfs path: its address and its /sys/devices path.
struct PathNode {
  std::string address;
  std::string sysfs_path;
};

struct PciChain {
  std::string host_bridge;      // pci0000:15
  std::vector<PathNode> chain;  // root port first, the function itself last
};

absl::StatusOr<PciChain> ChainOf(absl::string_view path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  if (parts.size() < 4 || parts[0] != "sys" || parts[1] != "devices" ||
      !absl::StartsWith(parts[2], "pci")) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a PCI function under /sys/devices/pciDDDD:BB"));
  }
  PciChain result;
  result.host_bridge = std::string(parts[2]);
  std::string prefix = absl::StrCat("/sys/devices/", parts[2]);
  for (size_t i = 3; i < parts.size() && IsPciAddress(parts[i]); ++i) {
    absl::StrAppend(&prefix, "/", parts[i]);
    result.chain.push_back({std::string(parts[i]), prefix});
  }
  if (result.chain.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' names no PCI function below ", result.host_bridge));
  }
  return result;
}

// The bridges between two functions in path order: up from `a`, the meeting
// bridge, down to `b`. The host bridge is not a PCI function and never listed.
absl::StatusOr<std::vector<PathNode>> BridgesBetween(absl::string_view path_a,
                                                     absl::string_view path_b) {
  auto a = ChainOf(path_a);
  if (!a.ok()) return a.status();
  auto b = ChainOf(path_b);
  if (!b.ok()) return b.status();
  size_t common = 0;
  if (a->host_bridge == b->host_bridge) {
    while (common < a->chain.size() && common < b->chain.size() &&
           a->chain[common].address == b->chain[common].address) {
      ++common;
    }
  }
  const std::string& end_a = a->chain.back().address;
  const std::string& end_b = b->chain.back().address;
  std::vector<PathNode> bridges;
  auto add = [&](const PathNode& node) {
    if (node.address != end_a && node.address != end_b) bridges.push_back(node);
  };
  for (size_t i = a->chain.size() - 1; i-- > common;) add(a->chain[i]);
  if (common > 0) add(a->chain[common - 1]);
  for (size_t i = common; i + 1 < b->chain.size(); ++i) add(b->chain[i]);
  return bridges;
}

const v1::PciFunction* FindFunction(const std::vector<v1::PciFunction>& functions,
                                    absl::string_view role, absl::string_view name,
                                    absl::string_view address) {
  for (const auto& function : functions) {
    if (!address.empty() && function.address() == address) return &function;
  }
  for (const auto& function : functions) {
    if (function.role() == role && function.name() == name) return &function;
  }
  return nullptr;
}

v1::Unknown PairUnknown(absl::string_view pair, absl::string_view path, absl::string_view reason) {
  v1::Unknown unknown;
  unknown.set_field(absl::StrCat("pcie_bridges[", pair, "]"));
  unknown.set_path(std::string(path));
  unknown.set_reason(std::string(reason));
  return unknown;
}

}  // namespace

absl::StatusOr<AcsState> ParseAcs(absl::string_view config) {
  if (config.size() > kPciConfigSpaceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("config holds more than ", kPciConfigSpaceBytes,
                     " bytes (a PCIe config space), so it is not one"));
  }
  // The kernel decides the length by capability, not by file mode (config is
  // 0644): a reader without CAP_SYS_ADMIN gets 64 bytes (128 on a CardBus
  // bridge), one with it gets the function's whole config space, which is 256
  // bytes when the kernel has no extended config access to the function.
  if (config.size() < kConventionalConfigBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "only ", config.size(),
        " bytes of config space are readable: ACS lives in the extended capabilities from 0x100 "
        "on, which the kernel shows only to a reader with CAP_SYS_ADMIN, and this agent does not "
        "hold it; the shipped unit (deploy/clustercert-agent.service) grants it with "
        "AmbientCapabilities=CAP_SYS_ADMIN, so restore that line if a drop-in removed it "
        "(systemctl cat clustercert-agent), or run `node-agent --capture DIR` as root once and "
        "certify from the capture"));
  }
  if (config.size() < kPciConfigSpaceBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "only ", config.size(),
        " bytes of config space are readable, with CAP_SYS_ADMIN (without it the kernel gives 64): "
        "the kernel has no extended config access to this function, where ACS lives from 0x100 "
        "on; check MMCONFIG/ECAM in dmesg and the firmware's PCIe settings"));
  }
  AcsState state;
  std::bitset<kPciConfigSpaceBytes / 4> visited;
  uint32_t offset = kFirstExtendedCap;
  for (int entries = 0; entries < kMaxChainEntries; ++entries) {
    if (offset < kFirstExtendedCap || offset + 4 > config.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "extended capability chain broken: next offset 0x%03x is outside 0x100..0xffc", offset));
    }
    if (visited[offset / 4]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("extended capability chain loops back to 0x%03x", offset));
    }
    visited.set(offset / 4);
    const uint32_t header = Le32(config, offset);
    if (header == 0xffffffffu) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "extended capability header at 0x%03x reads all ones: the function did not answer",
          offset));
    }
    if ((header & 0xffff) == kExtCapAcs) {
      if (offset + 8 > config.size()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("ACS capability at 0x%03x runs past the config space", offset));
      }
      state.capable = true;
      state.offset = offset;
      state.capability = Le16(config, offset + 4);
      state.control = Le16(config, offset + 6);
      return state;
    }
    // The spec reserves the offset's two low bits and tells software to mask
    // them (PCIe base spec 7.6.3; lspci does the same).
    const uint32_t next = (header >> 20) & ~3u;
    if (next == 0) return state;  // end of chain, or no extended capability at all
    offset = next;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("extended capability chain has more than ", kMaxChainEntries, " entries"));
}

std::string AcsControlText(uint16_t control) {
  static constexpr std::pair<uint16_t, const char*> kBits[] = {
      {kAcsSourceValidation, "SrcValid"},      {kAcsTranslationBlocking, "TransBlk"},
      {kAcsRequestRedirect, "ReqRedir"},       {kAcsCompletionRedirect, "CmpltRedir"},
      {kAcsUpstreamForwarding, "UpstreamFwd"}, {kAcsEgressControl, "EgressCtrl"},
      {kAcsDirectTranslated, "DirectTrans"}};
  std::string text;
  for (const auto& [bit, name] : kBits) {
    absl::StrAppend(&text, text.empty() ? "" : " ", name, (control & bit) ? "+" : "-");
  }
  return text;
}

std::vector<v1::PcieBridge> PcieAcsCollector::Collect(const std::vector<v1::PciFunction>& functions,
                                                      const std::vector<v1::GpuNicPath>& paths,
                                                      std::vector<v1::Unknown>* unknowns) const {
  std::vector<v1::PcieBridge> bridges;
  std::map<std::string, size_t> index_of;
  for (const v1::GpuNicPath& path : paths) {
    const std::string pair = absl::StrCat(path.gpu(), "<->", path.nic());
    const v1::PciFunction* gpu = FindFunction(functions, "gpu", path.gpu(), path.gpu_pci());
    const v1::PciFunction* nic = FindFunction(functions, "nic", path.nic(), path.nic_pci());
    if (gpu == nullptr || nic == nullptr || gpu->sysfs_path().empty() ||
        nic->sysfs_path().empty()) {
      if (unknowns != nullptr) {
        unknowns->push_back(
            PairUnknown(pair, kPciDevices, "no sysfs path recorded for the GPU or the NIC"));
      }
      continue;
    }
    auto between = BridgesBetween(gpu->sysfs_path(), nic->sysfs_path());
    if (!between.ok()) {
      if (unknowns != nullptr) {
        unknowns->push_back(PairUnknown(pair, gpu->sysfs_path(), between.status().message()));
      }
      continue;
    }
    for (const PathNode& node : *between) {
      auto [it, inserted] = index_of.emplace(node.address, bridges.size());
      if (inserted) {
        v1::PcieBridge bridge;
        bridge.set_address(node.address);
        bridge.set_sysfs_path(node.sysfs_path);
        bridges.push_back(std::move(bridge));
      }
      bridges[it->second].add_between(pair);
    }
  }
  for (v1::PcieBridge& bridge : bridges) ReadBridge(bridge);
  return bridges;
}

void PcieAcsCollector::ReadBridge(v1::PcieBridge& bridge) const {
  const std::string path = absl::StrCat(kPciDevices, "/", bridge.address(), "/config");
  // Binary, and its tail is often zero bytes that ReadText would strip.
  auto bytes = view_.ReadBytes(path, kPciConfigSpaceBytes);
  if (absl::IsResourceExhausted(bytes.status())) {
    bytes = absl::ResourceExhaustedError(
        absl::StrCat("config holds more than ", kPciConfigSpaceBytes,
                     " bytes (a PCIe config space), so it is not one"));
  }
  if (!bytes.ok()) {
    bridge.set_source(absl::StrCat("not read: ", ReasonOf(bytes.status())));
    AddUnknown(bridge, "acs_control", path, bytes.status());
    return;
  }
  auto acs = ParseAcs(*bytes);
  if (!acs.ok()) {
    const std::string reason(acs.status().message());
    bridge.set_source(absl::StrCat("config space (", bytes->size(), " bytes): ", reason));
    AddUnknown(bridge, "acs_control", path, reason);
    return;
  }
  if (!acs->capable) {
    bridge.set_source(absl::StrCat("config space (", bytes->size(),
                                   " bytes): no ACS capability, peer-to-peer is not redirected"));
    return;
  }
  bridge.set_acs_capable(true);
  bridge.set_acs_control(acs->control);
  bridge.set_p2p_redirect((acs->control & kAcsP2pRedirectBits) != 0);
  bridge.set_source(absl::StrFormat("config space (%d bytes): ACS at 0x%03x, ACSCtl: %s",
                                    bytes->size(), acs->offset, AcsControlText(acs->control)));
}

}  // namespace clustercert::agent::inventory
