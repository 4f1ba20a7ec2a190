#include "controller/checks/mtu_checks.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

namespace clustercert::controller::checks {
namespace {

constexpr char kPathMtuId[] = "mtu.path";

struct PathEnd {
  const std::string& node;
  const std::string& other;
  const v1::PeerTestResult& result;
};

// "node1 mlx5_0 -> node2" / "node1 -> node2": the cell.
std::string CellSubject(const v1::PairResult& pair) {
  return absl::StrCat(pair.client(), pair.rail().empty() ? "" : " " + pair.rail(), " -> ",
                      pair.server(), " ", pair.test());
}

v1::Finding PathFinding(const v1::PairResult& pair, v1::Finding::Status status) {
  v1::Finding finding;
  finding.set_id(kPathMtuId);
  finding.set_node(pair.client());
  finding.set_device(pair.rail());
  finding.set_status(status);
  finding.set_severity(v1::Finding::error);
  return finding;
}

// The failing mtu.netdev finding of `node`, as a clause; empty when none.
std::string NetdevClause(const std::vector<v1::Finding>& inventory_checks,
                         const std::string& node) {
  for (const v1::Finding& finding : inventory_checks) {
    if (finding.id() == "mtu.netdev" && finding.node() == node &&
        finding.status() == v1::Finding::fail) {
      return absl::StrCat(" (mtu.netdev: ", finding.message(), ")");
    }
  }
  return "";
}

struct PathTroubles {
  std::vector<std::string> sentences;
  std::vector<std::string> remedies;
  std::vector<std::string> observed;
  bool any_figure = false;
};

// An end's own route below the plan: its netdev (when mtu.netdev fails), or
// over a netdev that passes, a route of its own with a smaller mtu or a path
// MTU its kernel learned from a hop (an exception that lasts 10 minutes
// after the ICMP fragmentation-needed).
void ShortLocalRoute(const PathEnd& end, const std::string& to, int64_t plan_mtu,
                     const std::vector<v1::Finding>& inventory_checks, PathTroubles& troubles) {
  const uint32_t route = end.result.path_mtu().local_route_mtu();
  const std::string netdev = NetdevClause(inventory_checks, end.node);
  if (!netdev.empty()) {
    troubles.sentences.push_back(
        absl::StrCat(end.node, "'s route to ", to, " has mtu ", route, netdev, "."));
    troubles.remedies.push_back(absl::StrCat("On ", end.node, ", raise the data netdev's MTU to ",
                                             plan_mtu, " (ip link set dev <netdev> mtu ", plan_mtu,
                                             ") and drop any smaller route mtu (ip route show ", to,
                                             "; ip route change ... mtu ", plan_mtu, ")."));
    return;
  }
  troubles.sentences.push_back(absl::StrCat(
      end.node, "'s route to ", to, " has mtu ", route,
      " while its data netdev passes mtu.netdev: a route with that mtu, or a path MTU the kernel "
      "learned from a hop between ",
      end.node, " and ", end.other, "."));
  troubles.remedies.push_back(absl::StrCat(
      "On ", end.node, ", `ip route get ", to,
      "` shows which: 'cache expires ... mtu' is learned from a hop (check the switch port/VLAN "
      "MTU and every router interface between ",
      end.node, " and ", end.other,
      ", then ip route flush cache); otherwise raise that route's mtu to ", plan_mtu,
      " (ip route change ... mtu ", plan_mtu, ")."));
}

// The route figures one end recorded against the plan's netdev MTU.
void JudgeRoute(const PathEnd& end, int64_t plan_mtu,
                const std::vector<v1::Finding>& inventory_checks, PathTroubles& troubles) {
  const v1::PathMtu& mtu = end.result.path_mtu();
  if (!mtu.has_local_route_mtu()) return;
  troubles.any_figure = true;
  const std::string to = mtu.peer_address().empty() ? end.other : mtu.peer_address();
  absl::StrAppend(&troubles.observed.emplace_back(), end.node, "'s route to ", to, " ",
                  mtu.local_route_mtu());
  if (mtu.local_route_mtu() < plan_mtu) {
    ShortLocalRoute(end, to, plan_mtu, inventory_checks, troubles);
    return;
  }
  if (mtu.has_route_mtu() && mtu.route_mtu() < mtu.local_route_mtu() &&
      mtu.route_mtu() < plan_mtu) {
    absl::StrAppend(&troubles.observed.back(), ", ", mtu.route_mtu(), " after a DF probe");
    troubles.sentences.push_back(absl::StrCat("a hop between ", end.node, " and ", end.other,
                                              " carries only ", mtu.route_mtu(),
                                              " bytes (it answered a don't-fragment probe from ",
                                              end.node, " with ICMP fragmentation-needed)."));
    troubles.remedies.push_back(
        absl::StrCat("Check the switch port/VLAN MTU and every router interface between ", end.node,
                     " and ", end.other, ": set ", plan_mtu, " (or more) end to end."));
  }
}

// The QP's path MTU against the plan's active MTU, naming the short port.
void JudgeQp(const v1::PairResult& pair, const std::vector<PathEnd>& ends, bool infiniband,
             int64_t plan_ib_mtu, PathTroubles& troubles) {
  std::optional<uint32_t> qp;
  for (const PathEnd& end : ends) {
    if (end.result.path_mtu().has_qp_mtu()) qp = end.result.path_mtu().qp_mtu();
  }
  if (!qp) return;
  troubles.any_figure = true;
  troubles.observed.push_back(absl::StrCat("QP path MTU ", *qp));
  if (*qp >= plan_ib_mtu) return;
  bool named = false;
  for (const PathEnd& end : ends) {
    const v1::PathMtu& mtu = end.result.path_mtu();
    if (!mtu.has_port_active_mtu() || mtu.port_active_mtu() >= plan_ib_mtu) continue;
    named = true;
    troubles.sentences.push_back(absl::StrCat(
        end.node, " ", pair.rail(), "'s port has active MTU ", mtu.port_active_mtu(),
        infiniband ? ", below the subnet manager's plan." : ": its netdev MTU is short."));
  }
  if (!named) {
    troubles.sentences.push_back(
        absl::StrCat("the QP ran at path MTU ", *qp, ", below the plan's ", plan_ib_mtu, "."));
  }
  troubles.remedies.emplace_back(
      infiniband ? "Set the subnet manager's partition MTU to 4096 (opensm partitions.conf mtu=5)."
                 : "RoCE picks the largest IB MTU that fits the netdev MTU (9000 gives 4096): "
                   "set the netdev MTU of the port named to 9000.");
}

std::string JoinedNotes(const std::vector<PathEnd>& ends) {
  std::string notes;
  for (const PathEnd& end : ends) {
    if (end.result.path_mtu().note().empty()) continue;
    absl::StrAppend(&notes, notes.empty() ? "" : "; ", end.node, ": ",
                    end.result.path_mtu().note());
  }
  return notes;
}

}  // namespace

v1::Finding JudgePathMtu(const plan::Plan& plan, const v1::PairResult& pair,
                         const std::vector<v1::Finding>& inventory_checks) {
  const std::string subject = CellSubject(pair);
  const bool verbs = pair.engine() != "tcp";
  const bool infiniband = plan.fabric.type == plan::FabricType::kInfiniband;
  const std::string expected =
      verbs
          ? absl::StrCat("QP path MTU >= ", plan.fabric.active_mtu,
                         infiniband ? "" : absl::StrCat(", route >= ", plan.fabric.min_netdev_mtu))
          : absl::StrCat("route >= ", plan.fabric.min_netdev_mtu);
  std::vector<PathEnd> ends;
  if (pair.client_result().has_path_mtu()) {
    ends.push_back({pair.client(), pair.server(), pair.client_result()});
  }
  if (pair.server_result().has_path_mtu()) {
    ends.push_back({pair.server(), pair.client(), pair.server_result()});
  }
  if (ends.empty()) {
    v1::Finding finding = PathFinding(pair, v1::Finding::unknown);
    const std::string why = pair.ok() ? "the node-agents recorded no path MTU (an agent older "
                                        "than mtu.path)"
                                      : "the test failed before either end returned its path "
                                        "MTU (neither end connected)";
    finding.set_observed(absl::StrCat("unknown: ", why));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": the path MTU is unknown: ", why, "."));
    finding.set_remedy(pair.ok() ? "Upgrade the node-agents and re-run the pairwise phase; an "
                                   "unknown never counts as a pass."
                                 : "Fix what the cell's pairwise verdict names and re-run; a "
                                   "stall's message names the MTU when the route explains it.");
    return finding;
  }
  PathTroubles troubles;
  if (verbs) JudgeQp(pair, ends, infiniband, plan.fabric.active_mtu, troubles);
  if (!verbs || !infiniband) {
    for (const PathEnd& end : ends) {
      JudgeRoute(end, plan.fabric.min_netdev_mtu, inventory_checks, troubles);
    }
  }
  const std::string notes = JoinedNotes(ends);
  const std::string observed =
      troubles.observed.empty() ? "no figure" : absl::StrJoin(troubles.observed, "; ");
  if (!troubles.sentences.empty()) {
    v1::Finding finding = PathFinding(pair, v1::Finding::fail);
    // A failed run returned no result: the figures are the ones its ends
    // measured while connecting (ConnectEndpointResponse).
    finding.set_observed(pair.ok() ? observed
                                   : absl::StrCat(observed, " at connect; the run failed"));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": ", absl::StrJoin(troubles.sentences, " ")));
    finding.set_remedy(absl::StrJoin(troubles.remedies, " "));
    return finding;
  }
  if (!troubles.any_figure) {
    v1::Finding finding = PathFinding(pair, v1::Finding::unknown);
    finding.set_observed(absl::StrCat("unknown: ", notes.empty() ? "no figure recorded" : notes));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": the path MTU could not be read (", notes, ")."));
    finding.set_remedy(
        "Give the data netdevs IP addresses on the plan's data plane so the "
        "route can be read, and re-run.");
    return finding;
  }
  if (!pair.ok()) {
    // The figures fit the plan, but no full-size packet was shown to cross:
    // an L2 hop that drops big frames without ICMP is not ruled out.
    v1::Finding finding = PathFinding(pair, v1::Finding::unknown);
    finding.set_observed(absl::StrCat("unknown: ", observed, " at connect; the run failed"));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(
        subject, ": the routes measured at connect carry the plan's MTU (", observed,
        "), but the test failed before a full-size packet crossed the path: a switch port or "
        "VLAN that drops big frames without answering is not ruled out."));
    finding.set_remedy(
        "Fix what the cell's pairwise verdict names and re-run; if the data stalled, check "
        "the MTU of every switch port and VLAN between the two nodes.");
    return finding;
  }
  v1::Finding finding = PathFinding(pair, v1::Finding::pass);
  finding.set_observed(observed);
  finding.set_expected(expected);
  finding.set_message(absl::StrCat(subject, ": path MTU ", observed, ", plan expects ", expected,
                                   notes.empty() ? "" : absl::StrCat(" (", notes, ")"), "."));
  return finding;
}

}  // namespace clustercert::controller::checks
