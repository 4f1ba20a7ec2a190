#include "controller/phases/link_flap_reads.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "clustercert/v1/node_agent.pb.h"
#include "controller/phases/fan_out.h"

namespace clustercert::controller {
namespace {

// A counter read is a sysfs and ethtool read on the agent, answered in
// milliseconds: this bounds a stuck agent, not a slow one.
constexpr absl::Duration kReadDeadline = absl::Seconds(10);

std::string NetdevOfRail(const v1::Inventory& inventory, const std::string& rail) {
  for (const auto& device : inventory.rdma_devices()) {
    if (device.name() == rail && device.ports_size() > 0) return device.ports(0).netdev();
  }
  return "";
}

// The netdev holding `ip`: by its addresses, else by its cidrs ("10.0.0.5/24").
std::string NetdevHolding(const v1::Inventory& inventory, const std::string& ip) {
  if (ip.empty()) return "";
  for (const auto& netdev : inventory.netdevs()) {
    for (const auto& address : netdev.ipv4()) {
      if (address == ip) return netdev.name();
    }
    for (const auto& cidr : netdev.cidrs()) {
      if (absl::StartsWith(cidr, absl::StrCat(ip, "/"))) return netdev.name();
    }
  }
  return "";
}

}  // namespace

std::vector<FlapPort> FlapPortsOf(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                  const RerunScope* rerun) {
  std::vector<FlapPort> ports;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeState& state = nodes[i];
    if (!state.reachable || !state.client || !state.inventory) continue;
    if (rerun != nullptr && !rerun->Measures(state.node.name)) continue;
    if (plan.fabric.type == plan::FabricType::kEthernet) {
      const std::string netdev = NetdevHolding(*state.inventory, state.node.data_ip);
      // Without the data netdev there is no rail port to watch; the
      // inventory checks already say the data_ip is on no netdev.
      if (!netdev.empty()) ports.push_back({i, netdev, "", netdev});
      continue;
    }
    for (const std::string& rail : state.node.rails) {
      ports.push_back({i, rail, rail, NetdevOfRail(*state.inventory, rail)});
    }
  }
  return ports;
}

std::vector<checks::FlapRead> ReadFlapCounters(std::vector<NodeState>& nodes,
                                               const std::vector<FlapPort>& ports) {
  std::vector<checks::FlapRead> reads(ports.size());
  FanOut(ports.size(), [&](size_t i, std::function<void()> finished) {
    const FlapPort& port = ports[i];
    NodeState& state = nodes[port.node];
    v1::ReadPortCountersRequest request;
    request.set_device(port.device);
    request.set_port(port.device.empty() ? 0 : 1);
    request.set_netdev(port.netdev);
    state.client->ReadPortCounters(
        request, kReadDeadline,
        [&read = reads[i], name = state.node.name, finished = std::move(finished)](
            absl::StatusOr<v1::ReadPortCountersResponse> answer, CallTiming) {
          if (answer.ok()) {
            read.counters = std::move(*answer->mutable_counters());
          } else {
            read.error =
                absl::StrCat(name, " did not answer ReadPortCounters: ", answer.status().message());
          }
          finished();
        });
  });
  return reads;
}

std::vector<v1::LinkFlaps> FlapsOfRun(const std::vector<NodeState>& nodes,
                                      const std::vector<FlapPort>& ports,
                                      const std::vector<checks::FlapRead>& first,
                                      const std::vector<checks::FlapRead>& last) {
  std::vector<v1::LinkFlaps> flaps;
  flaps.reserve(ports.size());
  for (size_t i = 0; i < ports.size() && i < first.size() && i < last.size(); ++i) {
    const FlapPort& port = ports[i];
    flaps.push_back(
        checks::FlapsOver(nodes[port.node].node.name, port.rail, port.netdev, first[i], last[i]));
  }
  return flaps;
}

}  // namespace clustercert::controller
