#include "controller/checks/host_setting_checks.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::checks {
namespace {

// ACS Control bits (PCIe base spec 7.7.11.3) that redirect peer-to-peer.
constexpr uint32_t kRequestRedirect = 1 << 2;
constexpr uint32_t kCompletionRedirect = 1 << 3;
constexpr uint32_t kEgressControl = 1 << 5;
constexpr uint32_t kRedirectBits = kRequestRedirect | kCompletionRedirect | kEgressControl;
constexpr size_t kMaxNamed = 4;

constexpr char kAcsExpected[] = "no ACS P2P redirect between GPUs and rail NICs";

std::string PairName(const v1::GpuNicPath& path) {
  return absl::StrCat(path.gpu(), "<->", path.nic());
}

// "a, b, c, d and 3 more".
std::string NameList(const std::vector<std::string>& names) {
  if (names.size() <= kMaxNamed) return absl::StrJoin(names, ", ");
  return absl::StrCat(absl::StrJoin(names.begin(), names.begin() + kMaxNamed, ", "), " and ",
                      names.size() - kMaxNamed, " more");
}

std::set<std::string> RailNames(const CheckContext& context) {
  std::set<std::string> names;
  for (const v1::RdmaDevice* rail : context.PresentRails()) names.insert(rail->name());
  return names;
}

// The GPU<->rail pairs that meet below the host bridge, where ACS decides
// whether peer-to-peer turns at the switch or goes up to the root complex.
std::set<std::string> SwitchedRailPairs(const CheckContext& context) {
  const std::set<std::string> rails = RailNames(context);
  std::set<std::string> pairs;
  for (const v1::GpuNicPath& path : context.inventory().gpu_nic_paths()) {
    if (rails.count(path.nic()) == 0) continue;
    if (path.relation() == "PIX" || path.relation() == "PXB") pairs.insert(PairName(path));
  }
  return pairs;
}

std::vector<std::string> PairsOn(const v1::PcieBridge& bridge, const std::set<std::string>& pairs) {
  std::vector<std::string> on;
  for (const std::string& pair : bridge.between()) {
    if (pairs.count(pair) > 0) on.push_back(pair);
  }
  return on;
}

bool Readable(const v1::PcieBridge& bridge) {
  return bridge.acs_capable() || !HasUnknown(bridge, {"acs_control"});
}

bool Redirects(const v1::PcieBridge& bridge) {
  return bridge.p2p_redirect() ||
         (bridge.has_acs_control() && (bridge.acs_control() & kRedirectBits) != 0);
}

// "ReqRedir+ CmpltRedir+" for the redirect bits that are set.
std::string RedirectBitsText(uint32_t control) {
  std::vector<std::string> on;
  if (control & kRequestRedirect) on.push_back("ReqRedir+");
  if (control & kCompletionRedirect) on.push_back("CmpltRedir+");
  if (control & kEgressControl) on.push_back("EgressCtrl+");
  return absl::StrJoin(on, " ");
}

// What the reported bridges say about the switched GPU<->rail pairs.
struct AcsPicture {
  std::set<std::string> pairs;                     // switched GPU<->rail pairs
  std::vector<const v1::PcieBridge*> redirecting;  // with the pairs each carries
  std::vector<std::vector<std::string>> redirecting_pairs;
  std::vector<const v1::PcieBridge*> unreadable;
  std::vector<std::string> uncovered;  // pairs no reported bridge carries
  size_t judged = 0;                   // readable bridges carrying a pair

  bool known_clean() const {
    return redirecting.empty() && unreadable.empty() && uncovered.empty();
  }
};

AcsPicture LookAtAcs(const CheckContext& context) {
  AcsPicture picture;
  picture.pairs = SwitchedRailPairs(context);
  std::set<std::string> covered;
  for (const v1::PcieBridge& bridge : context.inventory().pcie_bridges()) {
    std::vector<std::string> on = PairsOn(bridge, picture.pairs);
    if (on.empty()) continue;
    covered.insert(on.begin(), on.end());
    if (!Readable(bridge)) {
      picture.unreadable.push_back(&bridge);
      continue;
    }
    ++picture.judged;
    if (Redirects(bridge)) {
      picture.redirecting.push_back(&bridge);
      picture.redirecting_pairs.push_back(std::move(on));
    }
  }
  for (const std::string& pair : picture.pairs) {
    if (covered.count(pair) == 0) picture.uncovered.push_back(pair);
  }
  return picture;
}

v1::Finding AcsFail(const CheckContext& context, const v1::PcieBridge& bridge,
                    const std::vector<std::string>& pairs) {
  FindingBuilder builder = context.Builder("pcie.acs", v1::Finding::error, bridge.address());
  const std::string observed = absl::StrFormat("ACSCtl 0x%04x: %s", bridge.acs_control(),
                                               RedirectBitsText(bridge.acs_control()));
  return builder.Fail(
      observed, kAcsExpected,
      absl::StrCat(builder.subject(), " (PCIe bridge) has ACS peer-to-peer redirect on (", observed,
                   ") between ", NameList(pairs),
                   ": their GPUDirect RDMA traffic goes up through the root complex."),
      absl::StrCat("Disable ACS redirect on the PCIe switch ports between GPU and NIC (BIOS "
                   "'ACS' / 'PCIe ACS control' off, or setpci -s ",
                   bridge.address(),
                   " ECAP_ACS+6.w=0000 at boot), otherwise GPUDirect traffic goes through the "
                   "root complex (the seed's 'GPUDirect 5x slower = via host'). Linux turns the "
                   "redirect on itself when the IOMMU translates (see host.iommu)."));
}

void AppendAcsChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (auto skipped = context.SkipUnlessGpusAndRails("pcie.acs", v1::Finding::error)) {
    findings.push_back(*std::move(skipped));
    return;
  }
  FindingBuilder node_builder = context.Builder("pcie.acs", v1::Finding::error);
  const std::set<std::string> rails = RailNames(context);
  bool any_path = false;
  for (const v1::GpuNicPath& path : context.inventory().gpu_nic_paths()) {
    any_path = any_path || rails.count(path.nic()) > 0;
  }
  if (!any_path) {
    findings.push_back(node_builder.Skipped(
        "the node reports no PCIe path from a GPU to a rail NIC (gpu.count, rail.present and "
        "topology.gpu_nic say why)"));
    return;
  }
  const std::set<std::string> pairs = SwitchedRailPairs(context);
  if (pairs.empty()) {
    findings.push_back(node_builder.Pass(
        "no GPU<->rail path crosses a PCIe switch", kAcsExpected,
        absl::StrCat(node_builder.subject(),
                     ": every GPU<->rail NIC path meets at the host bridge or beyond, where "
                     "peer-to-peer crosses the root complex whatever ACS says.")));
    return;
  }

  const AcsPicture picture = LookAtAcs(context);
  for (size_t i = 0; i < picture.redirecting.size(); ++i) {
    findings.push_back(AcsFail(context, *picture.redirecting[i], picture.redirecting_pairs[i]));
  }
  if (!picture.unreadable.empty()) {
    std::vector<std::string> names;
    for (const v1::PcieBridge* bridge : picture.unreadable) names.push_back(bridge->address());
    MissingFact fact = ExplainMissing(*picture.unreadable.front(), {"acs_control"});
    fact.reason = absl::StrCat(fact.reason, "; bridges unread: ", NameList(names));
    fact.observed = absl::StrCat("unknown: ", fact.reason,
                                 fact.path.empty() ? "" : absl::StrCat(" (", fact.path, ")"));
    findings.push_back(node_builder.Unknown(
        fact, "ACS setting of the PCIe bridges between GPUs and rail NICs", kAcsExpected,
        "Give the node-agent CAP_SYS_ADMIN (the kernel shows a bridge's extended config space, "
        "where ACS lives, to no one else; the shipped unit keeps it: check for a drop-in that "
        "removes it) or run `node-agent --capture DIR` as root, and re-run the inventory; an "
        "unknown never counts as a pass."));
  }
  if (!picture.uncovered.empty()) {
    const std::string field = absl::StrCat("pcie_bridges[", picture.uncovered.front(), "]");
    MissingFact fact =
        HasUnknown(context.inventory(), {field})
            ? ExplainMissing(context.inventory(), {field})
            : MissingBecause(absl::StrCat("the node-agent reported no PCIe bridge for ",
                                          NameList(picture.uncovered)));
    findings.push_back(node_builder.Unknown(fact, "ACS on the GPU<->rail paths", kAcsExpected));
  }
  if (picture.known_clean()) {
    findings.push_back(node_builder.Pass(
        absl::StrCat("ACS redirect off on ", picture.judged, " bridges"), kAcsExpected,
        absl::StrCat(node_builder.subject(), ": none of the ", picture.judged,
                     " PCIe bridges between GPUs and rail NICs redirects peer-to-peer traffic.")));
  }
}

void AppendIommuCheck(const CheckContext& context, std::vector<v1::Finding>& findings) {
  FindingBuilder builder = context.Builder("host.iommu", v1::Finding::warning);
  constexpr char kExpected[] = "off or passthrough";
  const v1::Iommu& iommu = context.inventory().iommu();
  const std::string& mode = iommu.mode();
  if (mode != "off" && mode != "passthrough" && mode != "translated") {
    findings.push_back(builder.Unknown(
        MissingBecause(iommu.source().empty() ? "not reported by the node-agent" : iommu.source()),
        "IOMMU mode", kExpected,
        "Let the node-agent read /proc/cmdline and /sys/class/iommu (run it with the host's /proc "
        "and /sys) and re-run the inventory."));
    return;
  }
  const std::string observed = absl::StrCat(
      mode, " (",
      iommu.cmdline().empty() ? "no iommu word on the kernel command line" : iommu.cmdline(), "; ",
      iommu.units_size(), " IOMMU units)");
  const std::string message =
      absl::StrCat(builder.subject(), "'s IOMMU is ", mode, " (", iommu.source(), ").");
  if (mode != "translated") {
    findings.push_back(builder.Pass(observed, kExpected, message));
    return;
  }
  const bool gpudirect_node =
      context.is_rdma() && context.node().gpus > 0 && !context.node().rails.empty();
  if (!gpudirect_node) {
    findings.push_back(
        builder.Pass(observed, kExpected,
                     absl::StrCat(builder.subject(),
                                  "'s IOMMU translates, but the plan gives this node no "
                                  "GPUs and RDMA rails: there is no GPUDirect to slow down.")));
    return;
  }
  findings.push_back(builder.Fail(
      observed, kExpected,
      absl::StrCat(builder.subject(),
                   "'s IOMMU translates every DMA: GPU<->NIC peer-to-peer is translated, and "
                   "Linux turns ACS redirect on in the PCIe switches (",
                   iommu.source(), ")."),
      "Boot with iommu=pt (intel_iommu=on iommu=pt on Intel) so peer-to-peer DMA is not "
      "translated; keep translation only where VFIO device assignment needs it."));
}

const v1::NicFirmwareConfig* FindFirmware(const CheckContext& context,
                                          const v1::RdmaDevice& device) {
  for (const v1::NicFirmwareConfig& config : context.inventory().nic_firmware()) {
    if (config.device() == device.name()) return &config;
  }
  for (const v1::NicFirmwareConfig& config : context.inventory().nic_firmware()) {
    if (!device.pci_address().empty() && config.pci_address() == device.pci_address()) {
      return &config;
    }
  }
  return nullptr;
}

const v1::FirmwareSetting* FindSetting(const v1::NicFirmwareConfig& config,
                                       absl::string_view name) {
  for (const v1::FirmwareSetting& setting : config.settings()) {
    if (setting.name() == name) return &setting;
  }
  return nullptr;
}

// The number mstconfig prints in parentheses ("ETH(2)" -> 2, "True(1)" -> 1),
// or a bare number ("0").
std::optional<int> SettingCode(absl::string_view value) {
  const size_t open = value.rfind('(');
  if (open != absl::string_view::npos && !value.empty() && value.back() == ')') {
    value = value.substr(open + 1, value.size() - open - 2);
  }
  int code = 0;
  if (!absl::SimpleAtoi(value, &code)) return std::nullopt;
  return code;
}

// Why a NIC's firmware configuration is not there to judge, or nullopt.
std::optional<std::string> FirmwareUnread(const v1::NicFirmwareConfig* config,
                                          const v1::RdmaDevice& device) {
  if (config == nullptr) {
    return absl::StrCat("the node-agent reported no firmware configuration for ", device.name());
  }
  if (!config->error().empty()) {
    return absl::StrCat(device.name(), "'s firmware configuration was not read: ", config->error());
  }
  return std::nullopt;
}

// ConnectX physical functions map one-to-one to ports: function 0 is _P1.
int FirmwarePort(const v1::RdmaDevice& device) {
  const std::string& address = device.pci_address();
  if (address.empty() || address.back() < '0' || address.back() > '7') return 1;
  return address.back() - '0' + 1;
}

v1::Finding CheckLinkType(const CheckContext& context, const v1::RdmaDevice& device) {
  FindingBuilder builder = context.Builder("nic.link_type", v1::Finding::error, device.name());
  if (device.pci_address().empty()) {
    return builder.Skipped(absl::StrCat(device.name(), " is a virtual device with no firmware"));
  }
  const v1::NicFirmwareConfig* config = FindFirmware(context, device);
  if (auto why = FirmwareUnread(config, device)) return builder.Skipped(*why);
  const int port = FirmwarePort(device);
  const std::string name = absl::StrCat("LINK_TYPE_P", port);
  const v1::FirmwareSetting* setting = FindSetting(*config, name);
  if (setting == nullptr) {
    return builder.Skipped(
        absl::StrCat(device.name(), "'s firmware has no ", name,
                     ": a single-protocol card, whose link layer port.link_layer checks"));
  }
  const int expected_code = context.is_infiniband() ? 1 : 2;
  const std::string expected = context.is_infiniband() ? "IB(1)" : "ETH(2)";
  std::optional<int> code = SettingCode(setting->value());
  if (!code.has_value()) {
    return builder.Unknown(MissingBecause(absl::StrCat(name, " reads '", setting->value(), "'")),
                           name, expected);
  }
  const std::string message = absl::StrCat(
      builder.subject(), " firmware ", name, " is ", setting->value(), " (", config->tool(),
      "), the ", plan::FabricTypeName(context.fabric().type), " fabric needs ", expected, ".");
  if (*code == expected_code) return builder.Pass(setting->value(), expected, message);
  return builder.Fail(setting->value(), expected, message,
                      absl::StrCat("Set the port's protocol in firmware: mstconfig -d ",
                                   device.pci_address(), " set ", name, "=", expected_code,
                                   " (mlxconfig with NVIDIA MFT), then reboot or mlxfwreset -d ",
                                   device.pci_address(),
                                   " reset; until then the port speaks the wrong protocol "
                                   "to its switch."));
}

void AppendLinkTypeChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  std::vector<const v1::RdmaDevice*> rails = context.PresentRails();
  if (rails.empty()) {
    findings.push_back(context.Builder("nic.link_type", v1::Finding::error)
                           .Skipped("no rail of the plan is present on this node"));
    return;
  }
  for (const v1::RdmaDevice* rail : rails) findings.push_back(CheckLinkType(context, *rail));
}

void AppendAtsChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  FindingBuilder node_builder = context.Builder("nic.ats", v1::Finding::warning);
  if (!context.is_rdma()) {
    findings.push_back(context.SkippedOnEthernet("nic.ats", v1::Finding::warning));
    return;
  }
  if (!context.plan().expect.nvidia_peermem) {
    findings.push_back(node_builder.Skipped(
        "plan sets expect.nvidia_peermem: false, so no GPUDirect RDMA is expected"));
    return;
  }
  if (context.node().gpus <= 0 || context.node().rails.empty()) {
    findings.push_back(node_builder.Skipped("plan lists no GPUs or no rails for this node"));
    return;
  }
  const AcsPicture picture = LookAtAcs(context);
  std::set<std::string> redirected_nics;
  for (const auto& pairs : picture.redirecting_pairs) {
    for (const std::string& pair : pairs) {
      redirected_nics.insert(pair.substr(pair.find("<->") + 3));
    }
  }
  if (picture.known_clean()) {
    findings.push_back(node_builder.Pass(
        "no ACS redirect between GPUs and rail NICs", "ATS_ENABLED True(1) behind ACS redirect",
        absl::StrCat(node_builder.subject(),
                     ": no PCIe bridge between a GPU and a rail NIC redirects peer-to-peer "
                     "(pcie.acs), so ATS has nothing to bypass.")));
    return;
  }
  if (redirected_nics.empty()) {
    findings.push_back(node_builder.Skipped(
        "the ACS setting between GPUs and rail NICs is unknown (pcie.acs), so whether ATS is "
        "needed cannot be told"));
    return;
  }
  for (const v1::RdmaDevice* rail : context.PresentRails()) {
    if (redirected_nics.count(rail->name()) == 0) continue;
    FindingBuilder builder = context.Builder("nic.ats", v1::Finding::warning, rail->name());
    const v1::NicFirmwareConfig* config = FindFirmware(context, *rail);
    if (auto why = FirmwareUnread(config, *rail)) {
      findings.push_back(builder.Skipped(*why));
      continue;
    }
    const v1::FirmwareSetting* ats = FindSetting(*config, "ATS_ENABLED");
    if (ats == nullptr) {
      findings.push_back(
          builder.Skipped(absl::StrCat(rail->name(), "'s firmware has no ATS_ENABLED setting")));
      continue;
    }
    const std::string message =
        absl::StrCat(builder.subject(), " firmware ATS_ENABLED is ", ats->value(),
                     " while ACS redirect is on between it and its GPUs (pcie.acs).");
    if (SettingCode(ats->value()) == 1) {
      findings.push_back(builder.Pass(ats->value(), "True(1)", message));
      continue;
    }
    findings.push_back(builder.Fail(
        ats->value(), "True(1)", message,
        absl::StrCat("Turning ACS redirect off (pcie.acs) is the fix; where it must stay on, set "
                     "mstconfig -d ",
                     rail->pci_address(),
                     " set ATS_ENABLED=1, reboot, and enable ACS Direct Translated P2P "
                     "(DirectTrans) on the switch ports, so translated GPUDirect requests turn "
                     "at the switch instead of the root complex.")));
  }
}

}  // namespace

void AppendHostSettingChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  AppendAcsChecks(context, findings);
  AppendIommuCheck(context, findings);
  AppendAtsChecks(context, findings);
  AppendLinkTypeChecks(context, findings);
}

}  // namespace clustercert::controller::checks
