#include "controller/checks/mtu_checks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::checks {
namespace {

std::string NetdevMtuRemedy(const CheckContext& context, const std::string& netdev) {
  const int mtu = context.fabric().min_netdev_mtu;
  return absl::StrCat(
      "Set a large MTU end to end: sudo ip link set dev ", netdev, " mtu ", mtu,
      " (persist it in netplan or systemd-networkd) and set ", mtu,
      " on every switch port and router hop of the path; the MTU must be large end to end, and "
      "RoCE picks the largest IB MTU that fits the Ethernet MTU (9000 gives 4096).");
}

// Evaluates the MTU of `netdev_name` for a finding made by `builder`.
v1::Finding EvaluateNetdevMtu(const CheckContext& context, const FindingBuilder& builder,
                              const std::string& netdev_name) {
  const std::string expected = absl::StrCat(context.fabric().min_netdev_mtu);
  const v1::Netdev* netdev = context.FindNetdev(netdev_name);
  if (netdev == nullptr) {
    MissingFact missing =
        HasUnknown(context.inventory(), {"netdevs"})
            ? ExplainMissing(context.inventory(), {"netdevs"})
            : MissingBecause(absl::StrCat("netdev ", netdev_name, " is not in the inventory"));
    return builder.Unknown(missing, absl::StrCat("netdev ", netdev_name, " MTU"), expected);
  }
  if (!netdev->has_mtu()) {
    return builder.Unknown(ExplainMissing(*netdev, {"mtu"}),
                           absl::StrCat("netdev ", netdev_name, " MTU"), expected);
  }
  std::string observed = absl::StrCat(netdev->mtu());
  std::string message = absl::StrCat(builder.subject(), " netdev ", netdev_name, " has MTU ",
                                     observed, ", plan expects at least ", expected, ".");
  if (static_cast<int64_t>(netdev->mtu()) >= context.fabric().min_netdev_mtu) {
    return builder.Pass(observed, expected, message);
  }
  return builder.Fail(observed, expected, message, NetdevMtuRemedy(context, netdev_name));
}

v1::Finding CheckNetdevMtu(const CheckContext& context, const RailPort& rail_port) {
  FindingBuilder builder = context.Builder("mtu.netdev", v1::Finding::error,
                                           rail_port.device->name(), rail_port.port->port());
  const std::string netdev = CheckContext::PortNetdev(rail_port);
  if (netdev.empty()) {
    return builder.Unknown(ExplainMissing(*rail_port.port, {"netdev"}), "netdev",
                           absl::StrCat(context.fabric().min_netdev_mtu));
  }
  return EvaluateNetdevMtu(context, builder, netdev);
}

v1::Finding CheckDataNetdevMtu(const CheckContext& context) {
  const std::string& data_ip = context.node().data_ip;
  if (data_ip.empty()) {
    return context.Builder("mtu.netdev", v1::Finding::error)
        .Skipped("plan sets no data_ip for this node, so there is no data netdev to check");
  }
  const v1::Netdev* netdev = context.FindNetdevWithAddress(data_ip);
  if (netdev == nullptr) {
    FindingBuilder builder = context.Builder("mtu.netdev", v1::Finding::error);
    const std::string expected = absl::StrCat(context.fabric().min_netdev_mtu);
    bool addresses_reported = false;
    for (const v1::Netdev& any : context.inventory().netdevs()) {
      addresses_reported = addresses_reported || any.ipv4_size() > 0;
    }
    if (addresses_reported) {
      return builder.Fail(
          absl::StrCat("no interface has ", data_ip), absl::StrCat("data netdev, MTU ", expected),
          absl::StrCat(builder.subject(), " has no interface with the plan's data_ip ", data_ip,
                       ", so its data netdev cannot be found."),
          absl::StrCat("Configure ", data_ip, " on the node's data interface (ip addr add ",
                       data_ip, "/24 dev <data netdev>) or correct the plan's data_ip."));
    }
    return builder.Unknown(
        MissingBecause(absl::StrCat(
            "the agent reported no interface addresses to find the data_ip ", data_ip)),
        "data netdev MTU", expected,
        "Interface addresses are only reported by an agent reading the live host (--sysfs-root /); "
        "run it there and re-run.");
  }
  FindingBuilder builder = context.Builder("mtu.netdev", v1::Finding::error, netdev->name());
  return EvaluateNetdevMtu(context, builder, netdev->name());
}

v1::Finding CheckActiveMtu(const CheckContext& context, const RailPort& rail_port) {
  const v1::RdmaPort& port = *rail_port.port;
  FindingBuilder builder =
      context.Builder("mtu.active", v1::Finding::error, rail_port.device->name(), port.port());
  const std::string expected = absl::StrCat(context.fabric().active_mtu);
  if (!port.has_active_mtu()) {
    return builder.Unknown(ExplainMissing(port, {"active_mtu"}), "active MTU", expected);
  }
  std::string observed = absl::StrCat(port.active_mtu());
  if (absl::StartsWith(port.active_mtu_source(), "derived")) {
    absl::StrAppend(&observed, " (", port.active_mtu_source(), ")");
  }
  std::string message = absl::StrCat(builder.subject(), " has active MTU ", port.active_mtu(),
                                     ", plan expects ", expected, ".");
  if (static_cast<int64_t>(port.active_mtu()) >= context.fabric().active_mtu) {
    return builder.Pass(observed, expected, message);
  }
  std::string remedy;
  if (context.is_infiniband()) {
    remedy =
        "Set the subnet manager's MTU to 4096: in opensm's partitions.conf give the partition "
        "mtu=5 (e.g. Default=0x7fff, ipoib, mtu=5 : ALL=full;) and restart opensm, or set it on "
        "the switch's SM, and check every switch port allows 4096.";
  } else {
    std::string netdev = CheckContext::PortNetdev(rail_port);
    remedy = absl::StrCat(
        "RoCE picks the largest IB MTU that fits the Ethernet MTU: set ",
        netdev.empty() ? std::string("the port's netdev") : netdev,
        " and every switch port and hop to MTU 9000 so RoCE gets 4096 (1500 gives only 1024): "
        "sudo ip link set dev ",
        netdev.empty() ? std::string("<netdev>") : netdev, " mtu 9000.");
  }
  return builder.Fail(observed, expected, message, remedy);
}

}  // namespace

void AppendMtuChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (!context.is_rdma()) {
    findings.push_back(CheckDataNetdevMtu(context));
    findings.push_back(context.SkippedOnEthernet("mtu.active", v1::Finding::error));
    return;
  }
  for (const RailPort& rail_port : context.RailPorts()) {
    if (context.is_roce()) findings.push_back(CheckNetdevMtu(context, rail_port));
    findings.push_back(CheckActiveMtu(context, rail_port));
  }
}

}  // namespace clustercert::controller::checks
