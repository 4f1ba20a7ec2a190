#include "controller/commands/command_support.h"

#include <cstdio>

#include "common/file_limit.h"
#include "controller/client/grpc_agent_client.h"
#include "controller/commands/diagnostics.h"
#include "controller/pairwise/schedule/pattern_budget.h"
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
  if (loaded->pairwise.enabled && loaded->pairwise.budget > absl::ZeroDuration()) {
    // The budget picks the pattern before anything runs, so a budget too
    // short for any pattern is a plan error like the others.
    auto choice = pairwise::schedule::ChoosePattern(*loaded);
    if (!choice.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(),
                   std::string(choice.status().message()).c_str());
      Diagnostics().error("the plan has errors; nothing ran (docs/plan.md lists every key)");
      return std::nullopt;
    }
    Diagnostics().info("{}", choice->summary);
  }
  return std::move(*loaded);
}

namespace {

// A gRPC channel per agent (a socket, sometimes two while it reconnects),
// plus what the controller itself opens: certificate, reports, journal.
constexpr uint64_t kFilesPerAgent = 4;
constexpr uint64_t kFilesOfItsOwn = 256;

// Raises the open-file limit for the plan's agents, and says so when the
// hard limit keeps it too low (nodes past it would fail to connect with
// "Too many open files", which is the controller's fault, not theirs).
void RaiseFileLimitFor(const plan::Plan& plan) {
  const uint64_t agents = plan.nodes.size() + plan.uplink.targets.size();
  const uint64_t wanted = kFilesOfItsOwn + kFilesPerAgent * agents;
  const OpenFileLimit limit = RaiseOpenFileLimit(wanted);
  if (limit.after >= wanted) return;
  Diagnostics().warn(
      "the open-file limit is {} (hard limit {}), below the {} that {} agents may need: raise "
      "it before the run (ulimit -n {}, or LimitNOFILE={} for a service), or agents past it "
      "fail to connect with 'Too many open files'",
      limit.after, limit.hard, wanted, agents, wanted, wanted);
}

}  // namespace

absl::StatusOr<ClientFactory> GrpcClientFactoryFor(const plan::Plan& plan) {
  RaiseFileLimitFor(plan);
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
                                      const ClientFactory* factory_override, int* exit_code,
                                      const PlanResolver& resolve) {
  if (args.size() != 1) {
    std::fprintf(stderr, "%s\n", usage);
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  *exit_code = kExitUsage;
  auto plan = LoadPlanOrReport(args[0]);
  if (plan && resolve) plan = resolve(*std::move(plan), exit_code);
  if (!plan) return std::nullopt;
  if (plan->nodes.empty()) {
    Diagnostics().error(
        "{} lists no nodes: its slurm section takes them from Slurm; run with --slurm-nodes "
        "PARTITION|NODELIST (docs/slurm.md) or add a nodes list",
        args[0]);
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
