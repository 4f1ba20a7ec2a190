#include "controller/checks/isolation_checks.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/ip_subnet.h"

namespace clustercert::controller::checks {
namespace {

constexpr char kSeparateFabrics[] =
    "the seed keeps training and inference (or storage) on separate fabrics that meet only at "
    "an L3 router: a training all-reduce is huge and bursty, inference traffic small and "
    "steady, their QoS needs differ, and a misbehaving job on a shared fabric starves the other";

// The netdevs that carry this node's training data: the rails' ports and
// the netdev holding data_ip.
std::set<std::string> DataNetdevs(const CheckContext& context) {
  std::set<std::string> netdevs;
  for (const RailPort& rail_port : context.RailPorts()) {
    std::string netdev = CheckContext::PortNetdev(rail_port);
    if (!netdev.empty()) netdevs.insert(netdev);
  }
  if (const v1::Netdev* data = context.FindNetdevWithAddress(context.node().data_ip)) {
    netdevs.insert(data->name());
  }
  return netdevs;
}

std::string FabricNames(const plan::Plan& plan) {
  std::vector<std::string> names;
  for (const plan::OtherFabric& fabric : plan.other_fabrics) {
    names.push_back(absl::StrCat(fabric.name, " (", absl::StrJoin(fabric.subnets, ", "), ")"));
  }
  return absl::StrJoin(names, ", ");
}

// Data netdev addresses inside another fabric's subnets.
std::vector<std::string> SharedAddresses(const CheckContext& context,
                                         const std::set<std::string>& data) {
  std::vector<std::string> shared;
  for (const std::string& name : data) {
    const v1::Netdev* netdev = context.FindNetdev(name);
    if (netdev == nullptr) continue;
    for (const std::string& cidr : netdev->cidrs()) {
      std::optional<IpSubnet> address = IpSubnet::Parse(cidr);
      if (!address.has_value()) continue;
      for (const plan::OtherFabric& fabric : context.plan().other_fabrics) {
        for (const std::string& text : fabric.subnets) {
          std::optional<IpSubnet> subnet = IpSubnet::Parse(text);
          if (subnet.has_value() && subnet->Overlaps(*address)) {
            shared.push_back(
                absl::StrCat(name, " holds ", cidr, ", inside ", fabric.name, "'s ", text));
          }
        }
      }
    }
  }
  return shared;
}

v1::Finding RoutesFinding(const CheckContext& context, const std::set<std::string>& data) {
  const v1::FabricIsolation& isolation = context.inventory().isolation();
  const std::string expected = absl::StrCat("no route from ", absl::StrJoin(data, ", "), " into ",
                                            FabricNames(context.plan()));
  FindingBuilder builder = context.Builder("isolation.routes", v1::Finding::error);
  if (HasUnknown(isolation, {"routes", "isolation"})) {
    return builder.Unknown(ExplainMissing(isolation, {"routes", "isolation"}), "routing table",
                           expected);
  }
  std::vector<std::string> leaks = SharedAddresses(context, data);
  for (const v1::Route& route : isolation.routes()) {
    if (data.count(route.netdev()) == 0) continue;
    leaks.push_back(absl::StrCat(
        "route ", route.destination(), " dev ", route.netdev(),
        route.gateway().empty() ? std::string() : absl::StrCat(" via ", route.gateway()),
        " (table ", route.table(), ") reaches ", route.fabric(), "'s ", route.fabric_subnet()));
  }
  if (leaks.empty()) {
    return builder.Pass(
        absl::StrCat("no such route among ", isolation.routes_seen(), " read"), expected,
        absl::StrCat(builder.subject(), ": of the ", isolation.routes_seen(),
                     " routes in its tables, none leads from its data netdevs (",
                     absl::StrJoin(data, ", "), ") into ", FabricNames(context.plan()), "."));
  }
  return builder.Fail(
      absl::StrJoin(leaks, "; "), expected,
      absl::StrCat(builder.subject(), "'s training data plane reaches another fabric: ",
                   absl::StrJoin(leaks, "; "), "."),
      absl::StrCat("Remove the route (ip route del <destination> dev <netdev> table <table>, or "
                   "the static/BGP route that installs it) and stop the leaf or spine from "
                   "leaking that fabric's prefixes into the training fabric; a default route "
                   "belongs on the management interface. Why: ",
                   kSeparateFabrics, "."));
}

bool PlanHasProbes(const plan::Plan& plan) {
  for (const plan::OtherFabric& fabric : plan.other_fabrics) {
    if (!fabric.probe.empty()) return true;
  }
  return false;
}

v1::Finding ProbeFinding(const CheckContext& context, const std::set<std::string>& data) {
  const v1::FabricIsolation& isolation = context.inventory().isolation();
  FindingBuilder builder = context.Builder("isolation.probe", v1::Finding::error);
  const std::string expected =
      absl::StrCat("no answer from ", FabricNames(context.plan()), " on the data netdevs");
  if (HasUnknown(isolation, {"isolation"}) || isolation.probes().empty()) {
    MissingFact fact = isolation.probes().empty() && !HasUnknown(isolation, {"isolation"})
                           ? MissingBecause(absl::StrCat("no probe was sent (data netdevs seen: [",
                                                         absl::StrJoin(data, ", "), "])"))
                           : ExplainMissing(isolation, {"isolation"});
    return builder.Unknown(fact, "reachability of the other fabrics", expected);
  }
  std::vector<std::string> reached;
  std::set<std::string> outcomes;
  for (const v1::ReachProbe& probe : isolation.probes()) {
    outcomes.insert(probe.outcome());
    if (!probe.reached()) continue;
    reached.push_back(absl::StrCat(probe.netdev(), " reached ", probe.target(), " (",
                                   probe.fabric(), "): ", probe.outcome(), " in ",
                                   FormatNumber(probe.micros() / 1000.0), " ms"));
  }
  // A probe that could not be sent (the bind refused, no socket) proves
  // nothing either way: unknown, never a pass.
  std::vector<std::string> unsent;
  for (const v1::ReachProbe& probe : isolation.probes()) {
    if (probe.outcome() == "error") {
      unsent.push_back(absl::StrCat(probe.netdev(), " to ", probe.target(), ": ", probe.detail()));
    }
  }
  if (reached.empty() && !unsent.empty()) {
    return builder.Unknown(
        MissingBecause(absl::StrCat("probe not sent: ", absl::StrJoin(unsent, "; "))),
        "reachability of the other fabrics", expected,
        "Run the agent with the right to bind a socket to a netdev (root, or CAP_NET_RAW in "
        "the unit's AmbientCapabilities) and re-run.");
  }
  if (reached.empty()) {
    return builder.Pass(
        absl::StrCat(isolation.probes_size(), " probes, none answered (",
                     absl::StrJoin(outcomes, ", "), ")"),
        expected,
        absl::StrCat(builder.subject(), ": ", isolation.probes_size(), " connects from ",
                     absl::StrJoin(isolation.data_netdevs(), ", "), " into ",
                     FabricNames(context.plan()), " went unanswered (",
                     absl::StrJoin(outcomes, ", "), "), as separate fabrics should."));
  }
  return builder.Fail(
      absl::StrJoin(reached, "; "), expected,
      absl::StrCat(builder.subject(), "'s training data plane reaches another fabric: ",
                   absl::StrJoin(reached, "; "), "."),
      absl::StrCat("Find where the fabrics join (a shared VLAN or bridged switch port, a route "
                   "on the leaf or spine, a host forwarding between them) and separate them; "
                   "traffic between clusters (job queues, logs, artefacts) belongs on the "
                   "management plane or a dedicated Ethernet link. Why: ",
                   kSeparateFabrics, "."));
}

}  // namespace

void AppendIsolationChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  const plan::Plan& plan = context.plan();
  // No finding at all without other_fabrics: a plan that declares none asks
  // nothing here, and a certificate made before these checks existed
  // re-verifies to the same findings.
  if (plan.other_fabrics.empty()) return;
  const std::set<std::string> data = DataNetdevs(context);
  if (!context.inventory().has_isolation() || data.empty()) {
    const MissingFact fact =
        !context.inventory().has_isolation()
            ? MissingBecause("not reported by the node-agent (an agent older than the controller?)")
            : MissingBecause("no data netdev: the rails have no netdev and data_ip is on none");
    for (const char* id : {"isolation.routes", "isolation.probe"}) {
      findings.push_back(context.Builder(id, v1::Finding::error)
                             .Unknown(fact, "data plane's reach", "separate fabrics"));
    }
    return;
  }
  findings.push_back(RoutesFinding(context, data));
  if (!PlanHasProbes(plan)) {
    findings.push_back(
        context.Builder("isolation.probe", v1::Finding::error)
            .Skipped("no other_fabrics[].probe targets: the routes alone were checked"));
    return;
  }
  findings.push_back(ProbeFinding(context, data));
}

}  // namespace clustercert::controller::checks
