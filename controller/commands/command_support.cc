#include "controller/commands/command_support.h"

#include <cstdio>

#include "controller/client/grpc_agent_client.h"
#include "controller/commands/diagnostics.h"
#include "controller/plan/plan_parser.h"

namespace clustercert::controller {

std::optional<plan::Plan> LoadPlanOrReport(const std::string& path) {
  auto loaded = plan::LoadPlan(path);
  if (!loaded.ok()) {
    // The plan's errors as a compiler prints its own: "plan.yaml:3:5: ...".
    std::fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
    Diagnostics().error("the plan has errors; nothing ran (docs/plan.md lists every key)");
    return std::nullopt;
  }
  return std::move(*loaded);
}

absl::StatusOr<ClientFactory> GrpcClientFactoryFor(const plan::Plan& plan) {
  auto factory = GrpcAgentClientFactory::Create(plan.agents);
  if (!factory.ok()) return factory.status();
  auto shared = std::make_shared<GrpcAgentClientFactory>(std::move(*factory));
  return ClientFactory(
      [shared](const plan::Node& node) -> absl::StatusOr<std::unique_ptr<AgentClient>> {
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

absl::StatusOr<std::vector<NodeState>> MakeSinkStates(const plan::Plan& plan,
                                                      const ClientFactory& factory) {
  std::vector<NodeState> sinks;
  for (const plan::UplinkTarget& target : plan.uplink.targets) {
    if (target.type != "agent" || target.agent.empty()) continue;
    plan::Node sink;
    sink.name = target.name;
    sink.agent = target.agent;
    sink.data_ip = target.data_ip;
    auto client = factory(sink);
    if (!client.ok()) return client.status();
    NodeState state;
    state.node = sink;
    state.client = std::move(*client);
    sinks.push_back(std::move(state));
  }
  return sinks;
}

std::optional<PreparedRun> PrepareRun(const std::vector<std::string>& args, const char* usage,
                                      const ClientFactory* factory_override, int* exit_code) {
  if (args.size() != 1) {
    std::fprintf(stderr, "%s\n", usage);
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  auto plan = LoadPlanOrReport(args[0]);
  if (!plan) {
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  absl::StatusOr<ClientFactory> factory = factory_override
                                              ? absl::StatusOr<ClientFactory>(*factory_override)
                                              : GrpcClientFactoryFor(*plan);
  absl::StatusOr<std::vector<NodeState>> nodes =
      factory.ok() ? MakeNodeStates(*plan, *factory)
                   : absl::StatusOr<std::vector<NodeState>>(factory.status());
  if (!nodes.ok()) {
    DiagnoseError(nodes.status());
    *exit_code = kExitCannotRun;
    return std::nullopt;
  }
  absl::StatusOr<std::vector<NodeState>> sinks = MakeSinkStates(*plan, *factory);
  if (!sinks.ok()) {
    DiagnoseError(sinks.status());
    *exit_code = kExitCannotRun;
    return std::nullopt;
  }
  return PreparedRun{std::move(*plan), std::move(*nodes), std::move(*sinks)};
}

}  // namespace clustercert::controller
