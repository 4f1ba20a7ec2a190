#include "controller/commands/command_support.h"

#include <cstdio>

#include "controller/client/grpc_agent_client.h"
#include "controller/plan/plan_parser.h"

namespace clustercert::controller {

std::optional<plan::Plan> LoadPlanOrReport(const std::string& path) {
  auto loaded = plan::LoadPlan(path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
    std::fprintf(stderr, "controller: the plan has errors; nothing ran (docs/plan.md lists every key)\n");
    return std::nullopt;
  }
  return std::move(*loaded);
}

absl::StatusOr<ClientFactory> GrpcClientFactoryFor(const plan::Plan& plan) {
  auto factory = GrpcAgentClientFactory::Create(plan.agents);
  if (!factory.ok()) return factory.status();
  auto shared = std::make_shared<GrpcAgentClientFactory>(std::move(*factory));
  return ClientFactory([shared](const plan::Node& node)
                           -> absl::StatusOr<std::unique_ptr<AgentClient>> {
    return shared->Connect(node.agent);
  });
}

absl::StatusOr<std::vector<NodeState>> MakeNodeStates(const plan::Plan& plan,
                                                      const ClientFactory& factory) {
  std::vector<NodeState> nodes;
  nodes.reserve(plan.nodes.size());
  for (const auto& node : plan.nodes) {
    auto client = factory(node);
    if (!client.ok()) return client.status();
    NodeState state;
    state.node = node;
    state.client = std::move(*client);
    nodes.push_back(std::move(state));
  }
  return nodes;
}

}  // namespace clustercert::controller
