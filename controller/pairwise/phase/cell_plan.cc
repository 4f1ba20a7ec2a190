#include "controller/pairwise/phase/cell_plan.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/pairwise/gpu_rail_map.h"

namespace clustercert::controller {

std::string CudaMemoryFor(const NodeState& node, const std::string& rail) {
  static constexpr const char* kOrder[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  auto rank = [](const std::string& relation) {
    for (int i = 0; i < 5; ++i) {
      if (relation == kOrder[i]) return i;
    }
    return 5;
  };
  if (!node.inventory || rail.empty()) return "cuda:0";
  const v1::GpuNicPath* nearest = nullptr;
  for (const auto& path : node.inventory->gpu_nic_paths()) {
    if (path.nic() != rail) continue;
    if (nearest == nullptr || rank(path.relation()) < rank(nearest->relation())) nearest = &path;
  }
  if (nearest == nullptr) return "cuda:0";
  for (const auto& gpu : node.inventory->gpu_runtime().gpus()) {
    if (absl::EqualsIgnoreCase(gpu.pci_bus_id(), nearest->gpu_pci())) {
      return absl::StrCat("cuda:", gpu.index());
    }
  }
  return "cuda:0";
}

PlannedClass PlannedClassFor(const plan::Plan& plan) {
  PlannedClass planned;
  if (plan.pairwise.engine != plan::PairwiseEngine::kVerbs) return planned;
  if (plan.fabric.type == plan::FabricType::kRoce) {
    planned.traffic_class = static_cast<uint32_t>(plan::RoceTrafficClass(plan.fabric.roce));
  } else if (plan.fabric.type == plan::FabricType::kInfiniband) {
    planned.service_level = static_cast<uint32_t>(plan.fabric.infiniband.service_level);
  }
  return planned;
}

void ApplyPlannedClass(const PlannedClass& planned, v1::PeerTestSpec& spec) {
  if (planned.traffic_class) spec.set_traffic_class(*planned.traffic_class);
  if (planned.service_level) spec.set_service_level(*planned.service_level);
}

std::string MemoryFor(const Side& side, const TestItem& item, const std::string& role) {
  if (!absl::StartsWith(item.memory, "cuda")) return "host";
  if (role == "server" && !item.server_gpu.empty()) return item.server_gpu;
  if (role == "client" && item.memory != "cuda") return item.memory;
  return CudaMemoryFor(*side.state, side.device);
}

namespace {

const v1::RdmaPort* FirstPort(const NodeState& node, const std::string& rail) {
  if (!node.inventory) return nullptr;
  for (const auto& device : node.inventory->rdma_devices()) {
    if (device.name() == rail && device.ports_size() > 0) return &device.ports(0);
  }
  return nullptr;
}

const v1::Netdev* NetdevWithAddress(const NodeState& node, const std::string& ip) {
  if (!node.inventory || ip.empty()) return nullptr;
  for (const auto& netdev : node.inventory->netdevs()) {
    for (const auto& address : netdev.ipv4()) {
      if (address == ip) return &netdev;
    }
  }
  return nullptr;
}

Side DescribeSide(NodeState& node, const std::string& rail) {
  Side side;
  side.state = &node;
  side.device = rail;
  if (!rail.empty()) {
    if (const v1::RdmaPort* port = FirstPort(node, rail)) {
      side.netdev = port->netdev();
      if (port->has_rate_gbps()) side.rate_gbps = port->rate_gbps();
    }
  } else if (const v1::Netdev* netdev = NetdevWithAddress(node, node.node.data_ip)) {
    side.netdev = netdev->name();
    if (netdev->has_speed_mbps() && netdev->speed_mbps() > 0) {
      side.rate_gbps = netdev->speed_mbps() / 1000.0;
    }
  }
  return side;
}

// The cells one pair runs on one rail: each host item as it is; a cuda item
// once per GPU of the client that is nearest this rail (pairwise.cuda_gpus
// bounds them), each against the server's GPU in the same position on its
// rail. Without a GPU map (no inventory GPUs) a cuda item stays one cell on
// the GPU nearest the rail.
std::vector<TestItem> CellsOnRail(const std::vector<TestItem>& items,
                                  const std::vector<v1::GpuRail>& client_map,
                                  const std::string& client_rail,
                                  const std::vector<v1::GpuRail>& server_map,
                                  const std::string& server_rail) {
  std::vector<TestItem> cells;
  const std::vector<std::string> client_gpus = pairwise::GpusOnRail(client_map, client_rail);
  const std::vector<std::string> server_gpus = pairwise::GpusOnRail(server_map, server_rail);
  for (const TestItem& item : items) {
    if (item.memory != "cuda" || client_map.empty()) {
      cells.push_back(item);
      continue;
    }
    for (size_t k = 0; k < client_gpus.size(); ++k) {
      cells.push_back({item.test, client_gpus[k],
                       server_gpus.empty() ? std::string() : server_gpus[k % server_gpus.size()]});
    }
  }
  return cells;
}

}  // namespace

absl::StatusOr<std::vector<pairwise::schedule::Round>> ScheduleRounds(
    const plan::Plan& plan, const std::vector<NodeState>& nodes, const RerunScope* rerun) {
  auto rounds = pairwise::schedule::BuildSchedule(plan);
  if (!rounds.ok() || rerun == nullptr) return rounds;
  std::vector<pairwise::schedule::Round> kept;
  for (auto& round : *rounds) {
    std::vector<pairwise::schedule::PairTest> tests;
    for (const auto& test : round.tests) {
      if (rerun->Measures(nodes[test.client].node.name) ||
          rerun->Measures(nodes[test.server].node.name)) {
        tests.push_back(test);
      }
    }
    if (!tests.empty()) kept.push_back({std::move(tests), round.idle});
  }
  return kept;
}

void CarryBaselineCells(const RerunScope* rerun, std::vector<v1::PairResult>& pairs) {
  if (rerun == nullptr || rerun->baseline == nullptr) return;
  for (const v1::PairResult& old : rerun->baseline->pairs()) {
    if (!old.retest_of().empty() || rerun->Measures(old.client()) ||
        rerun->Measures(old.server())) {
      continue;
    }
    v1::PairResult carried = old;
    *carried.mutable_carried() = rerun->carried;
    pairs.push_back(std::move(carried));
  }
}

CellPlanner::CellPlanner(const plan::Plan& plan, std::vector<NodeState>& nodes)
    : plan_(plan), nodes_(nodes), tcp_(plan.pairwise.engine == plan::PairwiseEngine::kTcp) {
  for (const auto& memory : plan.pairwise.memory) {
    for (const auto& test : plan.pairwise.tests) items_.push_back({test, memory, ""});
  }
  gpu_maps_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size() && !tcp_; ++i) {
    if (nodes[i].inventory) {
      gpu_maps_[i] = pairwise::MapGpusToRails(*nodes[i].inventory, nodes[i].node.rails,
                                              plan.pairwise.cuda_gpus);
    }
  }
}

std::vector<TestItem> CellPlanner::Cells(int client, int server, int rail) const {
  if (tcp_ || rail < 0) return items_;
  return CellsOnRail(items_, gpu_maps_[client], RailName(client, rail), gpu_maps_[server],
                     RailName(server, rail));
}

Side CellPlanner::SideOf(int node, int rail) const {
  return DescribeSide(nodes_[node], (tcp_ || rail < 0) ? std::string() : RailName(node, rail));
}

double CellPlanner::LineRate(const Side& a, const Side& b) const {
  double rate = plan_.fabric.link_rate_gbps;
  for (const Side* side : {&a, &b}) {
    if (side->rate_gbps > 0) rate = rate > 0 ? std::min(rate, side->rate_gbps) : side->rate_gbps;
  }
  return rate;
}

}  // namespace clustercert::controller
