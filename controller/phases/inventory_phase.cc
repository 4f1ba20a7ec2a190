#include "controller/phases/inventory_phase.h"

#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "controller/checks/cluster_checks.h"
#include "controller/checks/node_checks.h"
#include "controller/phases/fan_out.h"

namespace clustercert::controller {
namespace {

void FetchInventories(std::vector<NodeState>& nodes, const plan::Plan& plan, Progress& progress) {
  std::vector<size_t> reachable;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].reachable) reachable.push_back(i);
  }
  const absl::Duration timeout = absl::Seconds(plan.agents.call_timeout_s);
  FanOut(reachable.size(), [&](size_t k, std::function<void()> finished) {
    NodeState& state = nodes[reachable[k]];
    v1::GetInventoryRequest request;
    auto host = ParseHostPort(state.node.agent);
    if (host.ok()) request.set_dialed_host(host->host);
    state.client->GetInventory(
        request, timeout,
        [&state, &progress, finished](absl::StatusOr<v1::GetInventoryResponse> result,
                                      CallTiming timing) {
          if (result.ok()) {
            state.inventory = std::move(*result->mutable_inventory());
            progress.Line(
                "inventory",
                absl::StrCat(state.node.name, ": ", state.inventory->rdma_devices_size(),
                             " RDMA device(s), ", state.inventory->netdevs_size(), " netdev(s), ",
                             state.inventory->pci_size(), " PCIe function(s), collected in ",
                             state.inventory->collect_micros() / 1000.0, " ms"));
          } else {
            state.error = absl::StrCat(absl::StatusCodeToString(result.status().code()), ": ",
                                       result.status().message());
            progress.Line("inventory", absl::StrCat(state.node.name, ": failed: ", state.error));
          }
          finished();
        });
  });
}

}  // namespace

std::vector<v1::Finding> RunInventoryPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                           Progress& progress) {
  FetchInventories(nodes, plan, progress);

  std::vector<v1::Finding> checks;
  std::vector<checks::NodeClockOffset> clocks;
  for (NodeState& state : nodes) {
    checks.push_back(checks::ReachabilityFinding(state.node, state.reachable, state.error));
    if (!state.reachable) continue;
    if (!state.inventory) {
      checks.push_back(checks::InventoryCollectedFinding(state.node, state.error));
      continue;
    }
    checks.push_back(checks::InventoryCollectedFinding(state.node, ""));
    for (auto& finding : checks::EvaluateNode(plan, state.node, *state.inventory)) {
      checks.push_back(std::move(finding));
    }
    if (state.clock) {
      clocks.push_back({state.node.name, state.clock->offset, state.clock->uncertainty});
    }
  }
  checks.push_back(checks::ClockOffsetFinding(plan, clocks));
  return checks;
}

}  // namespace clustercert::controller
