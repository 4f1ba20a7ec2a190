#include "controller/phases/inventory_phase.h"

#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/phases/fan_out.h"
#include "controller/plan/cable_plan.h"

namespace clustercert::controller {
namespace {

// How long each isolation probe waits for an answer: a host on the other
// fabric answers a SYN in well under a millisecond; a second covers a
// congested or routed path and keeps the inventory call short.
constexpr uint32_t kIsolationProbeTimeoutMs = 1000;

// What the agent is asked about the plan's other fabrics (field by field the
// agent re-validates it: fabric_isolation.h).
v1::IsolationQuery IsolationQueryFor(const plan::Plan& plan, const plan::Node& node) {
  v1::IsolationQuery query;
  for (const plan::OtherFabric& fabric : plan.other_fabrics) {
    v1::IsolationQuery::OtherFabric* entry = query.add_fabrics();
    entry->set_name(fabric.name);
    for (const std::string& subnet : fabric.subnets) entry->add_subnets(subnet);
    for (const std::string& target : fabric.probe) entry->add_probe(target);
  }
  for (const std::string& rail : node.rails) query.add_rails(rail);
  query.set_data_ip(node.data_ip);
  query.set_probe_timeout_ms(kIsolationProbeTimeoutMs);
  return query;
}

// What the agent is asked about its rails' far ends (the agent bounds it
// again: at most 64 rails, a wait of 1..120 s).
v1::CablingQuery CablingQueryFor(const plan::Plan& plan, const plan::Node& node) {
  v1::CablingQuery query;
  for (const std::string& rail : node.rails) query.add_rails(rail);
  query.set_data_ip(node.data_ip);
  query.set_lldp_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(plan.fabric.lldp_wait)));
  return query;
}

void FetchInventories(std::vector<NodeState>& nodes, const plan::Plan& plan, Progress& progress,
                      const RerunScope* rerun) {
  std::vector<size_t> reachable;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].reachable) continue;
    if (rerun != nullptr && !rerun->Measures(nodes[i].node.name)) {
      // Taken over from the baseline: this node is not re-measured.
      const v1::NodeResult* old = nullptr;
      if (rerun->baseline != nullptr) {
        for (const auto& node : rerun->baseline->nodes()) {
          if (node.name() == nodes[i].node.name) old = &node;
        }
      }
      if (old != nullptr && old->has_inventory()) {
        nodes[i].inventory = old->inventory();
        progress.Line("inventory",
                      absl::StrCat(nodes[i].node.name, ": carried over from the baseline (",
                                   rerun->carried.from_started_at(), ")"));
        continue;
      }
    }
    reachable.push_back(i);
  }
  // Every agent listens for LLDP at the same time, so the wait is paid once
  // per run, on top of each call's own deadline.
  const bool cabling = plan::AsksForCabling(plan);
  const absl::Duration timeout =
      plan.agents.call_timeout + (cabling ? plan.fabric.lldp_wait : absl::ZeroDuration());
  FanOut(reachable.size(), [&](size_t k, std::function<void()> finished) {
    NodeState& state = nodes[reachable[k]];
    v1::GetInventoryRequest request;
    auto host = ParseHostPort(state.node.agent);
    if (host.ok()) request.set_dialed_host(host->host);
    if (!plan.other_fabrics.empty()) {
      *request.mutable_isolation() = IsolationQueryFor(plan, state.node);
    }
    if (cabling) *request.mutable_cabling() = CablingQueryFor(plan, state.node);
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

checks::NodeEvidence EvidenceOf(const NodeState& state) {
  checks::NodeEvidence evidence;
  evidence.node = &state.node;
  evidence.reachable = state.reachable;
  evidence.error = state.error;
  evidence.inventory = state.inventory ? &*state.inventory : nullptr;
  if (state.clock) {
    evidence.clock = checks::NodeClockOffset{state.node.name, state.clock->estimate.offset,
                                             state.clock->estimate.uncertainty()};
  }
  return evidence;
}

std::vector<v1::Finding> RunInventoryPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                           Progress& progress, const RerunScope* rerun) {
  FetchInventories(nodes, plan, progress, rerun);

  std::vector<checks::NodeEvidence> evidence;
  for (const NodeState& state : nodes) evidence.push_back(EvidenceOf(state));
  std::vector<v1::Finding> checks = checks::EvaluateInventoryChecks(plan, evidence);
  if (rerun != nullptr) {
    for (auto& finding : checks) {
      // Judged again, but from the baseline's facts about that node.
      if (!finding.node().empty() && !rerun->Measures(finding.node()) &&
          finding.id() != "connect.reachable") {
        *finding.mutable_carried() = rerun->carried;
      }
    }
  }
  return checks;
}

}  // namespace clustercert::controller
