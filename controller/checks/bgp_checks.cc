#include "controller/checks/bgp_checks.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/ip_subnet.h"

namespace clustercert::controller::checks {
namespace {

constexpr Severity kError = v1::Finding::error;

bool RequiresBgp(const CheckContext& context) {
  return context.fabric().routing == plan::FabricRouting::kBgp;
}

std::string FrrMissingRemedy() {
  return "This plan routes the fabric (fabric.routing: bgp): install FRR (apt-get install frr), "
         "set bgpd=yes in /etc/frr/daemons, give the node `router bgp <its AS>` with `neighbor "
         "<each fabric interface> interface remote-as external` and restart frr; or set "
         "fabric.routing: l2 (or auto) if this fabric is switched.";
}

// An inventory from an agent older than the BGP state says nothing either
// way; unless the plan requires BGP, such a node gets no bgp.* finding at all,
// so certificates recorded before these checks recompute as they were.
bool SaysNothing(const CheckContext& context) {
  return !context.inventory().has_bgp() && !RequiresBgp(context) &&
         context.fabric().routing != plan::FabricRouting::kL2;
}

// The finding check `id` gets on a node it does not judge, or nullopt when
// the node's BGP state is there to judge. Only bgp.neighbor fails (or stays
// unknown) for a node the plan requires to route; the other checks then skip,
// pointing at it, so one missing FRR is one failure.
std::optional<v1::Finding> NotJudged(const CheckContext& context, absl::string_view id) {
  FindingBuilder builder = context.Builder(id, kError);
  if (context.fabric().routing == plan::FabricRouting::kL2) {
    return builder.Skipped(
        "plan sets fabric.routing: l2 (a switched fabric), so BGP is not checked");
  }
  const v1::Inventory& inventory = context.inventory();
  if (inventory.has_bgp() && inventory.bgp().instance_present()) return std::nullopt;
  const bool reported = inventory.has_bgp();
  const std::string reason =
      reported ? inventory.bgp().reason()
               : std::string(
                     "the node-agent reported no BGP state (an agent older than this "
                     "controller)");
  if (!RequiresBgp(context)) {
    return builder.Skipped(absl::StrCat("no BGP instance on this node (", reason,
                                        "); fabric.routing is auto, so BGP is judged only where "
                                        "FRR routes"));
  }
  if (id != "bgp.neighbor") {
    return builder.Skipped(
        absl::StrCat("the node has no BGP instance to judge (", reason, "); see bgp.neighbor"));
  }
  const std::string expected = "FRR's bgpd with a `router bgp` instance";
  if (!reported || inventory.bgp().unknowns_size() > 0) {
    MissingFact missing =
        reported ? ExplainMissing(inventory.bgp(), {"neighbors", "originated_prefixes"})
                 : MissingBecause(reason);
    return builder.Unknown(missing, "BGP state", expected,
                           "Make vtysh answer as root on the node (vtysh -c 'show bgp summary "
                           "json'; with FRR run as -N NAME, start the agent with "
                           "--frr-pathspace NAME) and re-run.");
  }
  return builder.Fail(
      absl::StrCat("no BGP instance: ", reason), expected,
      absl::StrCat(builder.subject(), " runs no BGP (", reason,
                   ") but the plan routes the fabric with BGP (fabric.routing: bgp)."),
      FrrMissingRemedy());
}

// What FRR reports for one interface's unnumbered peer, merged over the
// address families it is listed under.
struct InterfacePeer {
  bool listed = false;
  bool established = false;
  std::string state;  // the first non-Established state seen, else "Established"
  std::optional<uint64_t> prefixes_received;
  const v1::BgpNeighbor* first = nullptr;
};

// Whether `neighbor` peers over `netdev`: by name for an unnumbered peer;
// for a numbered one (an address), when the address lies in one of the
// netdev's subnets, so a numbered eBGP fabric is judged as it is, not failed
// for having no interface-named neighbour.
bool PeersOver(const v1::BgpNeighbor& neighbor, absl::string_view netdev, const v1::Netdev* entry) {
  if (neighbor.peer() == netdev) return true;
  if (neighbor.unnumbered() || entry == nullptr) return false;
  for (const std::string& cidr : entry->cidrs()) {
    std::optional<IpSubnet> subnet = IpSubnet::Parse(cidr);
    if (subnet.has_value() && subnet->prefix_length() > 0 && subnet->Contains(neighbor.peer())) {
      return true;
    }
  }
  return false;
}

InterfacePeer PeerOn(const v1::BgpState& bgp, absl::string_view netdev, const v1::Netdev* entry) {
  InterfacePeer peer;
  for (const v1::BgpNeighbor& neighbor : bgp.neighbors()) {
    if (!PeersOver(neighbor, netdev, entry)) continue;
    if (!peer.listed) peer.first = &neighbor;
    const bool established = neighbor.state() == "Established";
    if (!peer.listed || (!established && peer.established)) peer.state = neighbor.state();
    peer.established = (peer.established || !peer.listed) && established;
    peer.listed = true;
    if (established && neighbor.has_prefixes_received()) {
      peer.prefixes_received = peer.prefixes_received.value_or(0) + neighbor.prefixes_received();
    }
  }
  return peer;
}

// An address holder with no link of its own: the kernel reports lo's and a
// dummy's operstate as "unknown", where a cable-backed or veth link says up
// or down.
bool IsAddressHolder(const v1::Netdev& netdev) {
  return netdev.name() == "lo" || netdev.operstate() == "unknown";
}

struct FabricInterfaces {
  std::vector<std::string> names;
  std::string basis;  // why these: "rail netdev", "data_ip netdev", "FRR peers on it"
};

FabricInterfaces FabricFacing(const CheckContext& context) {
  FabricInterfaces result;
  std::set<std::string> seen;
  for (const RailPort& rail_port : context.RailPorts()) {
    const std::string netdev = CheckContext::PortNetdev(rail_port);
    if (!netdev.empty() && seen.insert(netdev).second) result.names.push_back(netdev);
  }
  const v1::Netdev* data = context.FindNetdevWithAddress(context.node().data_ip);
  if (data != nullptr && !IsAddressHolder(*data) && seen.insert(data->name()).second) {
    result.names.push_back(data->name());
  }
  if (!result.names.empty()) {
    result.basis = "the node's rail and data_ip netdevs";
    return result;
  }
  for (const v1::BgpNeighbor& neighbor : context.inventory().bgp().neighbors()) {
    if (neighbor.unnumbered() && seen.insert(neighbor.peer()).second) {
      result.names.push_back(neighbor.peer());
    }
  }
  result.basis = "the interfaces FRR peers on (no rail netdev, data_ip on an address holder)";
  return result;
}

std::string NeighborRemedy(const std::string& netdev) {
  return absl::StrCat(
      "Check the cable and the link (ip link show ", netdev,
      ": UP, with an fe80:: address, which unnumbered BGP peers over); check that the leaf's "
      "port has `neighbor <port> interface remote-as external` and is not shut down (on the "
      "leaf, `show bgp summary`: Idle (Admin) is `neighbor <port> shutdown`, remove it with "
      "`no neighbor <port> shutdown`); check both ends activate the same address family; then "
      "re-run.");
}

v1::Finding NeighborFinding(const CheckContext& context, const std::string& netdev,
                            const InterfacePeer& peer) {
  FindingBuilder builder = context.Builder("bgp.neighbor", kError, netdev);
  const std::string expected = "an Established unnumbered BGP neighbour";
  const v1::BgpState& bgp = context.inventory().bgp();
  if (!peer.listed) {
    if (HasUnknown(bgp, {"neighbors"})) {
      return builder.Unknown(ExplainMissing(bgp, {"neighbors"}), "BGP neighbour", expected);
    }
    return builder.Fail(
        "no BGP neighbour on this interface", expected,
        absl::StrCat(builder.subject(), " faces the fabric but FRR has no BGP neighbour on ",
                     netdev, ", so nothing is routed over it."),
        absl::StrCat("Add `neighbor ", netdev, " interface remote-as external` under `router bgp ",
                     bgp.has_local_as() ? absl::StrCat(bgp.local_as()) : std::string("<AS>"),
                     "` on this node (vtysh -c 'conf t' -c 'router bgp ...' -c 'neighbor ", netdev,
                     " interface remote-as external'; persist it in /etc/frr/frr.conf) "
                     "and the matching line on the leaf's port."));
  }
  std::string who = peer.first->remote_hostname().empty()
                        ? std::string("its neighbour")
                        : absl::StrCat("neighbour ", peer.first->remote_hostname());
  if (peer.first->has_remote_as()) absl::StrAppend(&who, " (AS ", peer.first->remote_as(), ")");
  if (peer.established) {
    return builder.Pass(
        "Established", expected,
        absl::StrCat(
            builder.subject(), " has BGP ", who, " Established",
            peer.first->uptime().empty() ? "" : absl::StrCat(" for ", peer.first->uptime()), "."));
  }
  return builder.Fail(
      peer.state, expected,
      absl::StrCat(builder.subject(), "'s BGP session with ", who, " is ", peer.state,
                   ", not Established: nothing is routed over ", netdev, "."),
      NeighborRemedy(netdev));
}

v1::Finding PrefixesFinding(const CheckContext& context, const std::string& netdev,
                            const InterfacePeer& peer) {
  FindingBuilder builder = context.Builder("bgp.prefixes", kError, netdev);
  if (!peer.established) {
    return builder.Skipped(absl::StrCat("no Established BGP neighbour on ", netdev,
                                        " to receive from (see bgp.neighbor)"));
  }
  if (!peer.prefixes_received.has_value()) {
    return builder.Unknown(MissingBecause("FRR's summary gave no pfxRcd for the neighbour"),
                           "prefixes received", "> 0");
  }
  const std::string observed = absl::StrCat(*peer.prefixes_received);
  const std::string message = absl::StrCat(builder.subject(), " received ", observed,
                                           " prefix(es) from its BGP neighbour on ", netdev, ".");
  if (*peer.prefixes_received > 0) return builder.Pass(observed, "> 0", message);
  return builder.Fail(
      observed, "> 0",
      absl::StrCat(message,
                   " The session is up but carries no routes, so the other nodes "
                   "are unreachable over it."),
      absl::StrCat("The leaf sends nothing on this port: check its outbound policy (a route-map "
                   "or prefix-list on `neighbor <port>`), that both ends activate the IPv4 "
                   "unicast family, and that the other nodes announce their addresses "
                   "(`redistribute connected` or `network`); on the leaf, `show bgp neighbors "
                   "<port> advertised-routes` shows what it sends."));
}

v1::Finding AnnouncedFinding(const CheckContext& context) {
  FindingBuilder builder = context.Builder("bgp.announced", kError);
  const std::string& data_ip = context.node().data_ip;
  if (data_ip.empty()) {
    return builder.Skipped(
        "plan sets no data_ip for this node, so there is no address to announce");
  }
  const v1::BgpState& bgp = context.inventory().bgp();
  const std::string expected = absl::StrCat("an originated prefix covering ", data_ip);
  for (const std::string& prefix : bgp.originated_prefixes()) {
    std::optional<IpSubnet> subnet = IpSubnet::Parse(prefix);
    if (subnet.has_value() && subnet->Contains(data_ip)) {
      return builder.Pass(prefix, expected,
                          absl::StrCat(builder.subject(), " announces ", prefix,
                                       ", which covers its data_ip ", data_ip, "."));
    }
  }
  if (HasUnknown(bgp, {"originated_prefixes"})) {
    return builder.Unknown(ExplainMissing(bgp, {"originated_prefixes"}), "originated prefixes",
                           expected);
  }
  const std::string observed =
      bgp.originated_prefixes().empty()
          ? std::string("originates nothing")
          : absl::StrCat("originates ", absl::StrJoin(bgp.originated_prefixes(), ", "));
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " ", observed, ": its data_ip ", data_ip,
                   " is not announced, so no other node has a route to it."),
      absl::StrCat("Announce it from this node: under `router bgp ",
                   bgp.has_local_as() ? absl::StrCat(bgp.local_as()) : std::string("<AS>"),
                   "`, `address-family ipv4 unicast`, add `network ", data_ip,
                   "/32` (or keep the address on lo and `redistribute connected`), then re-run."));
}

v1::Finding RouterIdFinding(const std::string& node, const std::string& router_id,
                            const std::map<std::string, std::vector<std::string>>& nodes_by_id,
                            size_t routed) {
  FindingBuilder builder("bgp.router_id", kError, node);
  const std::string expected = "unique across the nodes";
  std::vector<std::string> others;
  for (const std::string& name : nodes_by_id.at(router_id)) {
    if (name != node) others.push_back(name);
  }
  if (others.empty()) {
    return builder.Pass(router_id, expected,
                        absl::StrCat(builder.subject(), " has BGP router-id ", router_id,
                                     ", which no other of the ", routed, " routed node(s) has."));
  }
  return builder.Fail(
      router_id, expected,
      absl::StrCat(builder.subject(), " has BGP router-id ", router_id, ", as does ",
                   absl::StrJoin(others, ", "),
                   ": sessions between them can be refused (Bad BGP Identifier) and their "
                   "paths taken for one router's."),
      "Give each node its own router-id: under `router bgp <AS>` set `bgp router-id <the "
      "node's loopback/data address>` (FRR otherwise takes the highest address on lo or an "
      "interface, which cloned images share), then re-run.");
}

}  // namespace

void AppendBgpChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (SaysNothing(context)) return;
  if (auto skipped = NotJudged(context, "bgp.neighbor")) {
    findings.push_back(std::move(*skipped));
    findings.push_back(*NotJudged(context, "bgp.prefixes"));
    findings.push_back(*NotJudged(context, "bgp.announced"));
    return;
  }
  const FabricInterfaces fabric = FabricFacing(context);
  if (fabric.names.empty()) {
    FindingBuilder builder = context.Builder("bgp.neighbor", kError);
    findings.push_back(builder.Fail(
        "no BGP neighbour", "an Established unnumbered BGP neighbour per fabric interface",
        absl::StrCat(builder.subject(),
                     " has a BGP instance but no neighbour, and neither a rail netdev nor a "
                     "data_ip netdev with a link to expect one on."),
        NeighborRemedy("<fabric interface>")));
  }
  std::vector<v1::Finding> prefixes;
  for (const std::string& netdev : fabric.names) {
    const InterfacePeer peer =
        PeerOn(context.inventory().bgp(), netdev, context.FindNetdev(netdev));
    findings.push_back(NeighborFinding(context, netdev, peer));
    prefixes.push_back(PrefixesFinding(context, netdev, peer));
  }
  for (auto& finding : prefixes) findings.push_back(std::move(finding));
  findings.push_back(AnnouncedFinding(context));
}

std::vector<v1::Finding> EvaluateBgpRouterIds(const plan::Plan& plan,
                                              const std::vector<NodeEvidence>& nodes) {
  // Each collected node's router-id, or the finding that says why it has none.
  struct NodeRouterId {
    std::string node;
    std::string router_id;
    std::optional<v1::Finding> not_judged;
  };
  std::vector<NodeRouterId> per_node;
  std::map<std::string, std::vector<std::string>> nodes_by_id;
  for (const NodeEvidence& evidence : nodes) {
    if (!evidence.reachable || evidence.inventory == nullptr) continue;
    const CheckContext context(plan, *evidence.node, *evidence.inventory);
    if (SaysNothing(context)) continue;
    NodeRouterId entry{evidence.node->name, evidence.inventory->bgp().router_id(),
                       NotJudged(context, "bgp.router_id")};
    if (!entry.not_judged.has_value() && entry.router_id.empty()) {
      entry.not_judged = context.Builder("bgp.router_id", kError)
                             .Unknown(MissingBecause("FRR reported no router-id"), "router-id",
                                      "unique across the nodes");
    }
    if (!entry.not_judged.has_value()) nodes_by_id[entry.router_id].push_back(entry.node);
    per_node.push_back(std::move(entry));
  }
  size_t routed = 0;
  for (const auto& [router_id, names] : nodes_by_id) routed += names.size();
  std::vector<v1::Finding> findings;
  findings.reserve(per_node.size());
  for (NodeRouterId& entry : per_node) {
    findings.push_back(entry.not_judged.has_value()
                           ? std::move(*entry.not_judged)
                           : RouterIdFinding(entry.node, entry.router_id, nodes_by_id, routed));
  }
  return findings;
}

}  // namespace clustercert::controller::checks
