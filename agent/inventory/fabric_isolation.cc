#include "agent/inventory/fabric_isolation.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "common/ip_subnet.h"

namespace clustercert::agent::inventory {
namespace {

bool IsName(const std::string& text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status Invalid(const std::string& field, const std::string& value, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("isolation query: ", field, " '", value.substr(0, 80), "' ", why,
                   "; the controller sends the plan's other_fabrics, check its version"));
}

absl::Status ValidateFabric(const v1::IsolationQuery::OtherFabric& fabric, int index) {
  const std::string where = absl::StrCat("fabrics[", index, "]");
  if (!IsName(fabric.name())) {
    return Invalid(where + ".name", fabric.name(), "is not a name ([A-Za-z0-9._-], 1-64)");
  }
  if (fabric.subnets_size() == 0 || fabric.subnets_size() > IsolationLimits::kMaxSubnetsPerFabric) {
    return Invalid(where + ".subnets", absl::StrCat(fabric.subnets_size()),
                   absl::StrCat("must be 1 to ", IsolationLimits::kMaxSubnetsPerFabric));
  }
  for (const std::string& subnet : fabric.subnets()) {
    if (!IpSubnet::Parse(subnet).has_value()) {
      return Invalid(where + ".subnets", subnet, "is not a CIDR subnet");
    }
  }
  if (fabric.probe_size() > IsolationLimits::kMaxProbesPerFabric) {
    return Invalid(where + ".probe", absl::StrCat(fabric.probe_size()),
                   absl::StrCat("is more than ", IsolationLimits::kMaxProbesPerFabric));
  }
  for (const std::string& target : fabric.probe()) {
    auto parsed = ParseHostPort(target);
    if (!parsed.ok() || !IsIpAddress(parsed->host)) {
      return Invalid(where + ".probe", target, "is not a literal IP:port");
    }
  }
  return absl::OkStatus();
}

// The netdevs that carry the training data, read off the inventory: each
// rail's port netdevs (or an rxe device's parent) and the netdev holding
// data_ip.
std::vector<std::string> DataNetdevs(const v1::IsolationQuery& query,
                                     const v1::Inventory& inventory,
                                     v1::FabricIsolation& isolation) {
  std::set<std::string> netdevs;
  for (const std::string& rail : query.rails()) {
    bool found = false;
    for (const v1::RdmaDevice& device : inventory.rdma_devices()) {
      if (device.name() != rail) continue;
      found = true;
      for (const v1::RdmaPort& port : device.ports()) {
        if (!port.netdev().empty()) netdevs.insert(port.netdev());
      }
      if (!device.parent_netdev().empty()) netdevs.insert(device.parent_netdev());
    }
    if (!found) {
      v1::Unknown* unknown = isolation.add_unknowns();
      unknown->set_field("data_netdevs");
      unknown->set_path(rail);
      unknown->set_reason("the rail is not an RDMA device of this host: its routes are not read");
    }
  }
  if (!query.data_ip().empty()) {
    for (const v1::Netdev& netdev : inventory.netdevs()) {
      for (const std::string& cidr : netdev.cidrs()) {
        if (cidr.substr(0, cidr.find('/')) == query.data_ip()) netdevs.insert(netdev.name());
      }
    }
  }
  return {netdevs.begin(), netdevs.end()};
}

std::string OutcomeName(ReachOutcome::Kind kind) {
  switch (kind) {
    case ReachOutcome::kConnected:
      return "connected";
    case ReachOutcome::kRefused:
      return "refused";
    case ReachOutcome::kTimeout:
      return "timeout";
    case ReachOutcome::kUnreachable:
      return "unreachable";
    case ReachOutcome::kError:
      break;
  }
  return "error";
}

}  // namespace

absl::Status ValidateIsolationQuery(const v1::IsolationQuery& query) {
  if (query.fabrics_size() > IsolationLimits::kMaxFabrics) {
    return Invalid("fabrics", absl::StrCat(query.fabrics_size()),
                   absl::StrCat("is more than ", IsolationLimits::kMaxFabrics));
  }
  for (int i = 0; i < query.fabrics_size(); ++i) {
    if (absl::Status status = ValidateFabric(query.fabrics(i), i); !status.ok()) return status;
  }
  if (query.rails_size() > IsolationLimits::kMaxRails) {
    return Invalid("rails", absl::StrCat(query.rails_size()),
                   absl::StrCat("is more than ", IsolationLimits::kMaxRails));
  }
  for (const std::string& rail : query.rails()) {
    if (!IsName(rail)) return Invalid("rails", rail, "is not an RDMA device name");
  }
  if (!query.data_ip().empty() && !IsIpAddress(query.data_ip())) {
    return Invalid("data_ip", query.data_ip(), "is not a literal IP address");
  }
  if (query.probe_timeout_ms() == 0 ||
      query.probe_timeout_ms() > IsolationLimits::kMaxProbeTimeoutMs) {
    return Invalid("probe_timeout_ms", absl::StrCat(query.probe_timeout_ms()),
                   absl::StrCat("must be 1 to ", IsolationLimits::kMaxProbeTimeoutMs));
  }
  return absl::OkStatus();
}

FabricIsolationCollector::FabricIsolationCollector(RouteSource& routes, ReachProber& prober)
    : routes_(routes), prober_(prober) {}

v1::FabricIsolation FabricIsolationCollector::Collect(const v1::IsolationQuery& query,
                                                      const v1::Inventory& inventory) {
  v1::FabricIsolation isolation;
  for (std::string& netdev : DataNetdevs(query, inventory, isolation)) {
    isolation.add_data_netdevs(std::move(netdev));
  }
  AddRoutes(query, isolation);
  AddProbes(query, isolation);
  return isolation;
}

void FabricIsolationCollector::AddRoutes(const v1::IsolationQuery& query,
                                         v1::FabricIsolation& isolation) {
  auto routes = routes_.Routes();
  if (!routes.ok()) {
    v1::Unknown* unknown = isolation.add_unknowns();
    unknown->set_field("routes");
    unknown->set_path("rtnetlink RTM_GETROUTE");
    unknown->set_reason(std::string(routes.status().message()));
    return;
  }
  isolation.set_routes_seen(static_cast<uint32_t>(routes->size()));
  int dropped = 0;
  for (const KernelRoute& route : *routes) {
    std::optional<IpSubnet> destination = IpSubnet::Parse(route.destination);
    if (!destination.has_value()) continue;
    for (const auto& fabric : query.fabrics()) {
      for (const std::string& subnet_text : fabric.subnets()) {
        std::optional<IpSubnet> subnet = IpSubnet::Parse(subnet_text);
        if (!subnet.has_value() || !subnet->Overlaps(*destination)) continue;
        if (isolation.routes_size() >= IsolationLimits::kMaxRoutesKept) {
          ++dropped;
          continue;
        }
        v1::Route* kept = isolation.add_routes();
        kept->set_destination(route.destination);
        kept->set_netdev(route.netdev);
        kept->set_gateway(route.gateway);
        kept->set_table(route.table);
        kept->set_fabric(fabric.name());
        kept->set_fabric_subnet(subnet->ToString());
      }
    }
  }
  if (dropped > 0) {
    v1::Unknown* unknown = isolation.add_unknowns();
    unknown->set_field("routes");
    unknown->set_path("rtnetlink RTM_GETROUTE");
    unknown->set_reason(absl::StrCat(dropped, " more routes into other fabrics not recorded (",
                                     IsolationLimits::kMaxRoutesKept, " kept)"));
  }
}

void FabricIsolationCollector::AddProbes(const v1::IsolationQuery& query,
                                         v1::FabricIsolation& isolation) {
  std::vector<ReachAttempt> attempts;
  std::vector<const v1::IsolationQuery::OtherFabric*> fabric_of;
  std::vector<std::string> targets;
  for (const std::string& netdev : isolation.data_netdevs()) {
    for (const auto& fabric : query.fabrics()) {
      for (const std::string& target : fabric.probe()) {
        auto parsed = ParseHostPort(target);
        if (!parsed.ok()) continue;
        if (attempts.size() >= static_cast<size_t>(IsolationLimits::kMaxAttempts)) break;
        attempts.push_back(ReachAttempt{netdev, parsed->host, parsed->port});
        fabric_of.push_back(&fabric);
        targets.push_back(target);
      }
    }
  }
  if (attempts.empty()) return;
  std::vector<ReachOutcome> outcomes =
      prober_.Probe(attempts, absl::Milliseconds(query.probe_timeout_ms()));
  for (size_t i = 0; i < attempts.size() && i < outcomes.size(); ++i) {
    v1::ReachProbe* probe = isolation.add_probes();
    probe->set_netdev(attempts[i].netdev);
    probe->set_target(targets[i]);
    probe->set_fabric(fabric_of[i]->name());
    probe->set_outcome(OutcomeName(outcomes[i].kind));
    probe->set_reached(outcomes[i].kind == ReachOutcome::kConnected ||
                       outcomes[i].kind == ReachOutcome::kRefused);
    probe->set_detail(outcomes[i].detail);
    probe->set_micros(static_cast<uint32_t>(absl::ToInt64Microseconds(outcomes[i].took)));
  }
}

}  // namespace clustercert::agent::inventory
