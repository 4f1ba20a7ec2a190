#include "controller/collectives/collective_job_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "controller/checks/nccl_env_checks.h"

namespace clustercert::controller {
namespace {

const v1::RdmaDevice* FirstRail(const NodeState& node) {
  if (!node.inventory || node.node.rails.empty()) return nullptr;
  for (const v1::RdmaDevice& device : node.inventory->rdma_devices()) {
    if (device.name() == node.node.rails.front()) return &device;
  }
  return nullptr;
}

// The IPv4 address of the first rail's netdev, from the inventory.
std::string RailAddress(const NodeState& node) {
  const v1::RdmaDevice* rail = FirstRail(node);
  if (rail == nullptr || !node.inventory) return "";
  for (const v1::RdmaPort& port : rail->ports()) {
    if (port.netdev().empty()) continue;
    for (const v1::Netdev& netdev : node.inventory->netdevs()) {
      if (netdev.name() == port.netdev() && netdev.ipv4_size() > 0) return netdev.ipv4(0);
    }
  }
  return "";
}

}  // namespace

std::map<std::string, std::string> NcclEnvFor(const plan::Plan& plan, const NodeState& node) {
  std::map<std::string, std::string> env = plan.collectives.env;
  // The rails, GID, traffic class, service level and bootstrap interface
  // follow from the plan; a value the plan's env sets wins (collectives.env
  // says when the two disagree).
  const v1::Inventory* inventory = node.inventory ? &*node.inventory : nullptr;
  for (const auto& [name, value] : checks::DerivedNcclEnv(plan, node.node, inventory)) {
    env.insert({name, value});
  }
  env.insert({"NCCL_DEBUG", "INFO"});
  return env;
}

std::string GlooTransportFor(const plan::Plan& plan, const NodeState& node) {
  switch (plan.collectives.transport) {
    case plan::GlooTransport::kTcp:
      return "tcp";
    case plan::GlooTransport::kIbverbs:
      return "ibverbs";
    case plan::GlooTransport::kAuto:
      break;
  }
  return FirstRail(node) != nullptr ? "ibverbs" : "tcp";
}

absl::StatusOr<v1::CollectiveJobSpec> BuildJobSpec(const plan::Plan& plan, const NodeState& node,
                                                   RankBlock block, int world_size,
                                                   const std::string& operation) {
  const plan::Collectives& collectives = plan.collectives;
  v1::CollectiveJobSpec spec;
  // Empty for all_reduce, so the spec reads as it did before operations.
  if (operation != "all_reduce") spec.set_operation(operation);
  const bool nccl = collectives.backend == plan::CollectiveBackend::kNccl;
  spec.set_backend(nccl ? "nccl" : "gloo");
  spec.set_world_size(world_size);
  for (int i = 0; i < block.count; ++i) {
    v1::CollectiveRank* rank = spec.add_ranks();
    rank->set_rank(block.first_rank + i);
    rank->set_local_rank(i);
    rank->set_cuda_device(-1);
  }
  v1::CollectiveSweepSpec* sweep = spec.mutable_sweep();
  sweep->set_min_bytes(collectives.sizes.min_bytes);
  sweep->set_max_bytes(collectives.sizes.max_bytes);
  sweep->set_factor(collectives.sizes.factor);
  sweep->set_warmup_iters(collectives.warmup_iters);
  sweep->set_iters(collectives.iters);
  sweep->set_in_place(true);
  if (nccl) {
    for (const auto& [name, value] : NcclEnvFor(plan, node)) (*spec.mutable_env())[name] = value;
  } else {
    for (const auto& [name, value] : collectives.env) (*spec.mutable_env())[name] = value;
  }
  spec.set_timeout_ms(
      static_cast<uint32_t>(std::lround(absl::ToDoubleMilliseconds(collectives.timeout))));
  if (nccl) return spec;

  const std::string transport = GlooTransportFor(plan, node);
  spec.set_transport(transport);
  if (transport == "ibverbs") {
    const v1::RdmaDevice* rail = FirstRail(node);
    if (rail == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(node.node.name, " has no live RDMA device ",
                       node.node.rails.empty() ? "(the plan lists no rails)"
                                               : absl::StrCat("named ", node.node.rails.front()),
                       " for gloo's ibverbs transport: list a working rail for the node, or set "
                       "collectives.transport: tcp."));
    }
    spec.set_ib_device(rail->name());
    spec.set_ib_port(rail->ports_size() > 0 ? rail->ports(0).port() : 1);
    spec.set_gid_index(plan.fabric.type == plan::FabricType::kRoce ? plan.fabric.roce.gid_index
                                                                   : 0);
    return spec;
  }
  std::string address = node.node.data_ip.empty() ? RailAddress(node) : node.node.data_ip;
  if (address.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        node.node.name,
        " has no data-plane address for gloo's tcp transport: set the node's data_ip in the "
        "plan (or give it a rail whose netdev has an IPv4 address); collectives never run over "
        "the management address ",
        node.node.agent, "."));
  }
  spec.set_bind_ip(address);
  return spec;
}

}  // namespace clustercert::controller
