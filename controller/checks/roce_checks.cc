#include "controller/checks/roce_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustercert::controller::checks {
namespace {

constexpr char kRoceV2[] = "RoCE v2";

bool IsRoceV2Ipv4(const v1::Gid& gid) { return gid.type() == kRoceV2 && !gid.ipv4().empty(); }

// "RoCE v2 10.10.1.1", "IB/RoCE v1 10.10.1.1", "RoCE v2 fe80:0000:...".
std::string GidText(const v1::Gid& gid) {
  std::string type = gid.type().empty() ? std::string("untyped") : gid.type();
  return absl::StrCat(type, " ", gid.ipv4().empty() ? gid.gid() : gid.ipv4());
}

v1::Finding CheckGid(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaDevice& device = *rail_port.device;
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder =
      context.Builder("roce.gid", v1::Finding::error, device.name(), port.port());
  const int index = context.roce().gid_index;
  const std::string expected = absl::StrCat("index ", index, ": RoCE v2, IPv4-mapped");
  if (port.gids().empty() && HasUnknown(port, {"gids", "gid"})) {
    return builder.Unknown(ExplainMissing(port, {"gids", "gid"}), "GID table", expected);
  }
  const v1::Gid* at_index = nullptr;
  std::vector<std::string> usable;
  for (const v1::Gid& gid : port.gids()) {
    if (static_cast<int>(gid.index()) == index) at_index = &gid;
    if (IsRoceV2Ipv4(gid)) usable.push_back(absl::StrCat(gid.index()));
  }
  if (at_index != nullptr && IsRoceV2Ipv4(*at_index)) {
    std::string observed = absl::StrCat("index ", index, ": ", GidText(*at_index));
    return builder.Pass(observed, expected,
                        absl::StrCat(builder.subject(), " GID index ", index, " is ",
                                     GidText(*at_index), ", as the plan expects."));
  }
  std::string observed = at_index == nullptr
                             ? absl::StrCat("no GID at index ", index)
                             : absl::StrCat("index ", index, ": ", GidText(*at_index));
  std::string message = absl::StrCat(builder.subject(), " has ", observed, ", plan expects index ",
                                     index, " to be a RoCE v2 IPv4-mapped GID.");
  std::string remedy;
  if (!usable.empty()) {
    remedy = absl::StrCat(
        "Point fabric.roce.gid_index and NCCL_IB_GID_INDEX at the RoCE v2 IPv4-mapped GID "
        "(show_gids lists them): on ",
        device.name(), " port ", port.port(), " that is index ", absl::StrJoin(usable, " or "),
        ".");
  } else {
    std::string netdev = CheckContext::PortNetdev(rail_port);
    remedy = absl::StrCat(
        "No GID on this port is RoCE v2 and IPv4-mapped: give ",
        netdev.empty() ? std::string("the port's netdev") : netdev,
        " its IPv4 address (sudo ip addr add <ip>/<prefix> dev ",
        netdev.empty() ? std::string("<netdev>") : netdev,
        ") so the driver adds the IPv4-mapped GIDs, and select RoCE v2 (sudo cma_roce_mode -d ",
        device.name(), " -p ", port.port(), " -m 2); show_gids lists the table.");
  }
  return builder.Fail(observed, expected, message, remedy);
}

}  // namespace

void AppendRoceGidChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (!context.is_roce()) return;
  for (const RailPort& rail_port : context.RailPorts()) {
    findings.push_back(CheckGid(context, rail_port));
  }
}

}  // namespace clustercert::controller::checks
