#include "controller/checks/port_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::checks {

const char kNoSubnetManagerRemedy[] =
    "No subnet manager is running: InfiniBand forwards nothing until an SM assigns LIDs. In a lab "
    "run sudo apt install opensm && sudo systemctl enable --now opensm on exactly one node; in "
    "production enable the switch's embedded SM. Never run two competing software SMs.";

namespace {

constexpr uint32_t kStateActive = 4;
constexpr uint32_t kStateInit = 2;
constexpr uint32_t kPhysLinkUp = 5;
constexpr uint32_t kPhysPolling = 2;
constexpr uint32_t kPhysDisabled = 3;

// "4: ACTIVE" as sysfs prints it; just the code when the name was not kept.
std::string CodeText(uint32_t code, absl::string_view name) {
  return name.empty() ? absl::StrCat(code) : absl::StrCat(code, ": ", name);
}

bool IsVirtual(const v1::RdmaDevice& device) { return device.pci_address().empty(); }

v1::Finding CheckRailPresent(const CheckContext& context, const std::string& rail) {
  FindingBuilder builder = context.Builder("rail.present", v1::Finding::error, rail);
  if (const v1::RdmaDevice* device = context.FindDevice(rail)) {
    std::string observed = device->fw_ver().empty()
                               ? std::string("present")
                               : absl::StrCat("present (fw ", device->fw_ver(), ")");
    return builder.Pass(observed, "present",
                        absl::StrCat(builder.subject(), " is present, as the plan expects."));
  }
  std::vector<std::string> names;
  for (const v1::RdmaDevice& device : context.inventory().rdma_devices()) {
    names.push_back(device.name());
  }
  if (names.empty() && HasUnknown(context.inventory(), {"rdma_devices"})) {
    return builder.Unknown(ExplainMissing(context.inventory(), {"rdma_devices"}),
                           "RDMA device list", "present");
  }
  std::string seen = names.empty() ? std::string("no RDMA devices")
                                   : absl::StrCat("devices present: ", absl::StrJoin(names, ", "));
  return builder.Fail(
      absl::StrCat("absent; ", seen), "present",
      absl::StrCat(builder.subject(), " is not among the node's RDMA devices (", seen,
                   "), plan lists it as a rail."),
      absl::StrCat(
          "Check the NIC is seated and its drivers are loaded (lspci | grep Mellanox; sudo "
          "modprobe mlx5_core mlx5_ib; ibv_devinfo -l), or fix the plan's rails for ",
          context.node().name, " to name the devices the node has."));
}

v1::Finding CheckState(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder =
      context.Builder("port.state", v1::Finding::error, rail_port.device->name(), port.port());
  const std::string expected = "4: ACTIVE";
  if (!port.has_state_code()) {
    return builder.Unknown(ExplainMissing(port, {"state_code", "state"}), "state", expected);
  }
  std::string observed = CodeText(port.state_code(), port.state());
  if (port.state_code() == kStateActive) {
    return builder.Pass(
        observed, expected,
        absl::StrCat(builder.subject(), " is ", observed, ", plan expects ", expected, "."));
  }
  const bool link_up = port.has_phys_state_code() && port.phys_state_code() == kPhysLinkUp;
  std::string message = absl::StrCat(builder.subject(), " is in state ", observed);
  std::string remedy;
  if (context.is_infiniband() && link_up && port.state_code() == kStateInit) {
    absl::StrAppend(&message, " with a trained link (5: LinkUp)");
    remedy = kNoSubnetManagerRemedy;
  } else if (port.has_phys_state_code() && !link_up) {
    absl::StrAppend(&message, " because its physical link is ",
                    CodeText(port.phys_state_code(), port.phys_state()));
    remedy =
        "Fix the physical link first (see port.phys_state): the cable/transceiver pair and the "
        "switch port; ibstat must then show State: Active.";
  } else if (context.is_infiniband()) {
    remedy = absl::StrCat(
        "A subnet manager is needed to activate the port: check that exactly one SM (opensm or "
        "the switch's) is running and its log for errors on ",
        rail_port.device->name(), " port ", port.port(), "; ibstat must show State: Active.");
  } else {
    std::string netdev = CheckContext::PortNetdev(rail_port);
    remedy = absl::StrCat("Bring the port up: sudo ip link set dev ",
                          netdev.empty() ? "<netdev>" : netdev,
                          " up, and check the switch port is enabled and the cable seated; "
                          "ibstat must show State: Active.");
  }
  absl::StrAppend(&message, ", plan expects ", expected, ".");
  return builder.Fail(observed, expected, message, remedy);
}

v1::Finding CheckPhysState(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder =
      context.Builder("port.phys_state", v1::Finding::error, rail_port.device->name(), port.port());
  const std::string expected = "5: LinkUp";
  if (!port.has_phys_state_code()) {
    return builder.Unknown(ExplainMissing(port, {"phys_state_code", "phys_state"}),
                           "physical state", expected);
  }
  std::string observed = CodeText(port.phys_state_code(), port.phys_state());
  std::string message = absl::StrCat(builder.subject(), " has physical state ", observed,
                                     ", plan expects ", expected, ".");
  if (port.phys_state_code() == kPhysLinkUp) return builder.Pass(observed, expected, message);
  std::string remedy;
  switch (port.phys_state_code()) {
    case kPhysPolling:
      remedy =
          "The port is polling for a peer: there is no cable or no link partner. Seat the "
          "cable/transceiver at both ends and check the switch port is up at a matching speed.";
      break;
    case kPhysDisabled:
      remedy =
          "The port is disabled, usually on the switch side: enable the switch port (or the "
          "local port with ibportstate/ip link), then check ibstat shows Physical state: LinkUp.";
      break;
    default:
      remedy =
          "The link did not train: check the cable/transceiver pair and the switch port, and "
          "the port's errors in dmesg; ibstat must show Physical state: LinkUp.";
      break;
  }
  return builder.Fail(observed, expected, message, remedy);
}

std::string RateText(const v1::RdmaPort& port) {
  std::string text = absl::StrCat(FormatNumber(port.rate_gbps()), " Gb/s");
  if (port.has_width() && !port.speed_name().empty()) {
    absl::StrAppend(&text, " (", port.width(), "X ", port.speed_name(), ")");
  }
  return text;
}

v1::Finding CheckRate(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder =
      context.Builder("port.rate", v1::Finding::error, rail_port.device->name(), port.port());
  const double planned = context.fabric().link_rate_gbps;
  if (planned <= 0) return builder.Skipped("plan sets no fabric.link_rate_gbps");
  const std::string expected = absl::StrCat(FormatNumber(planned), " Gb/s");
  if (!port.has_rate_gbps()) {
    return builder.Unknown(ExplainMissing(port, {"rate_gbps", "rate"}), "rate", expected);
  }
  std::string observed = RateText(port);
  std::string message =
      absl::StrCat(builder.subject(), " is at ", observed, ", plan expects ", expected, ".");
  // Rates are lane rate x width, exact in sysfs; the epsilon only absorbs parsing.
  if (port.rate_gbps() + 1e-6 >= planned) return builder.Pass(observed, expected, message);
  std::string remedy = absl::StrCat(
      "Check the cable/DAC length and the switch port speed: a ", FormatNumber(planned),
      " Gb/s port that came up at ", FormatNumber(port.rate_gbps()),
      " is the most common silent failure (a bad cable, the wrong DAC length, or a switch port "
      "forced to a lower speed). Fix it before benchmarking.");
  if (IsVirtual(*rail_port.device)) {
    absl::StrAppend(&remedy, " ", rail_port.device->name(),
                    " is soft-RoCE: it takes its rate from the link speed of ",
                    rail_port.device->parent_netdev().empty() ? std::string("its netdev")
                                                              : rail_port.device->parent_netdev(),
                    ".");
  }
  return builder.Fail(observed, expected, message, remedy);
}

v1::Finding CheckLinkLayer(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaDevice& device = *rail_port.device;
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder =
      context.Builder("port.link_layer", v1::Finding::error, device.name(), port.port());
  const std::string expected = context.is_infiniband() ? "InfiniBand" : "Ethernet";
  if (port.link_layer().empty() || port.link_layer() == "Unknown") {
    MissingFact missing = port.link_layer().empty() ? ExplainMissing(port, {"link_layer"})
                                                    : MissingBecause("sysfs reads Unknown");
    return builder.Unknown(missing, "link layer", expected);
  }
  std::string message =
      absl::StrCat(builder.subject(), " has link layer ", port.link_layer(), ", plan expects ",
                   expected, " (fabric type ", plan::FabricTypeName(context.fabric().type), ").");
  if (port.link_layer() == expected) return builder.Pass(port.link_layer(), expected, message);
  std::string remedy;
  if (IsVirtual(device)) {
    remedy = absl::StrCat(device.name(),
                          " is a virtual (soft-RoCE) device and always Ethernet: set fabric.type: "
                          "roce in the plan, or list a physical InfiniBand HCA as the rail.");
  } else {
    remedy = absl::StrFormat(
        "Switch the dual-mode ConnectX port: sudo mst start, then sudo mlxconfig -d %s set "
        "LINK_TYPE_P%d=%d (1 = InfiniBand, 2 = Ethernet) and reboot; if the hardware is right, "
        "fix the plan's fabric.type instead.",
        device.pci_address(), port.port(), context.is_infiniband() ? 1 : 2);
  }
  return builder.Fail(port.link_layer(), expected, message, remedy);
}

v1::Finding CheckSubnetManager(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder = context.Builder("ib.subnet_manager", v1::Finding::error,
                                           rail_port.device->name(), port.port());
  const std::string expected = "4: ACTIVE, LID != 0, SM LID != 0";
  if (!port.has_state_code()) {
    return builder.Unknown(ExplainMissing(port, {"state_code", "state"}), "state", expected);
  }
  if (!port.has_sm_lid()) {
    return builder.Unknown(ExplainMissing(port, {"sm_lid"}), "SM LID", expected);
  }
  if (!port.has_lid()) return builder.Unknown(ExplainMissing(port, {"lid"}), "LID", expected);
  std::string observed =
      absl::StrFormat("%s, LID 0x%x, SM LID 0x%x", CodeText(port.state_code(), port.state()),
                      port.lid(), port.sm_lid());
  if (port.state_code() == kStateActive && port.lid() != 0 && port.sm_lid() != 0) {
    return builder.Pass(
        observed, expected,
        absl::StrCat(builder.subject(), " is configured by the subnet manager at ",
                     absl::StrFormat("LID 0x%x", port.sm_lid()), ", as the plan expects."));
  }
  if (port.sm_lid() == 0 || port.lid() == 0) {
    return builder.Fail(observed, expected,
                        absl::StrCat(builder.subject(), " has no subnet manager (", observed,
                                     "), plan expects an SM to have assigned its LID."),
                        kNoSubnetManagerRemedy);
  }
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " has LIDs from a subnet manager but is not ACTIVE (",
                   observed, "), plan expects 4: ACTIVE."),
      "A subnet manager answered but has not activated the port: check its log (opensm or the "
      "switch's SM) for errors on this port, and make sure only one SM is running.");
}

}  // namespace

void AppendPortChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (!context.is_rdma()) {
    for (const char* id :
         {"rail.present", "port.state", "port.phys_state", "port.rate", "port.link_layer"}) {
      findings.push_back(context.SkippedOnEthernet(id, v1::Finding::error));
    }
    return;
  }
  if (context.node().rails.empty()) {
    findings.push_back(context.Builder("rail.present", v1::Finding::error)
                           .Skipped("plan lists no rails for this node"));
    return;
  }
  for (const std::string& rail : context.node().rails) {
    findings.push_back(CheckRailPresent(context, rail));
    const v1::RdmaDevice* device = context.FindDevice(rail);
    if (device == nullptr) continue;
    if (device->ports().empty()) {
      findings.push_back(
          context.Builder("port.state", v1::Finding::error, rail)
              .Unknown(ExplainMissing(*device, {"ports"}), "port list", "4: ACTIVE"));
      continue;
    }
    for (const v1::RdmaPort& port : device->ports()) {
      RailPort rail_port{device, &port};
      findings.push_back(CheckState(context, rail_port));
      findings.push_back(CheckPhysState(context, rail_port));
      findings.push_back(CheckRate(context, rail_port));
      findings.push_back(CheckLinkLayer(context, rail_port));
    }
  }
}

void AppendSubnetManagerChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (!context.is_infiniband()) return;
  for (const RailPort& rail_port : context.RailPorts()) {
    findings.push_back(CheckSubnetManager(context, rail_port));
  }
}

}  // namespace clustercert::controller::checks
