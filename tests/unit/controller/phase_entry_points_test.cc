// Each phase's entry point (connect, inventory, collectives, uplink) and
// RunCertification end to end, against the shared fake agent
// (tests/support/fake_agent_client.h): what each phase makes of agents that
// answer, refuse or speak another API version. Pairwise has its own file.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/time_format.h"
#include "common/version.h"
#include "controller/commands/certification_run.h"
#include "controller/phases/collectives_phase.h"
#include "controller/phases/connect_phase.h"
#include "controller/phases/inventory_phase.h"
#include "controller/phases/uplink_phase.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"
#include "tests/support/simulated_clock.h"

namespace clustercert::controller {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// How one fake node behaves, set by the test before the phase runs.
struct Behaviour {
  uint32_t api_version = kApiVersion;
  absl::Status inventory = absl::OkStatus();  // GetInventory's answer when not OK
  double gbps = 9;                            // RunEndpoint's bandwidth
  int unavailable = 0;  // GetVersion calls answered UNAVAILABLE before the first answer
};

// A node-agent that answers GetVersion with its name and the behaviour's API
// version, GetInventory with one RDMA device, and peer tests at `gbps`.
class NodeAgent final : public testing::FakeAgentClient {
 public:
  NodeAgent(std::string node, const Behaviour& behaviour)
      : node_(std::move(node)), behaviour_(behaviour) {}

  void GetVersion(absl::Duration, AgentCallback<v1::GetVersionResponse> done) override {
    if (silent_calls_ < behaviour_.unavailable) {
      ++silent_calls_;
      return done(absl::UnavailableError("connection refused"), {});
    }
    v1::GetVersionResponse version;
    version.set_api_version(behaviour_.api_version);
    version.set_agent_version("0.0-test");
    version.set_node_name(node_);
    version.set_unix_time_us(absl::ToUnixMicros(absl::Now()));
    done(version, {});
  }
  void GetInventory(const v1::GetInventoryRequest&, absl::Duration,
                    AgentCallback<v1::GetInventoryResponse> done) override {
    if (!behaviour_.inventory.ok()) return done(behaviour_.inventory, {});
    v1::GetInventoryResponse response;
    response.mutable_inventory()->add_rdma_devices()->set_name("mlx5_0");
    done(response, {});
  }
  void RunEndpoint(const v1::RunEndpointRequest&, absl::Duration t,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    if (Refused("RunEndpoint", t, done)) return;
    v1::RunEndpointResponse response;
    response.mutable_result()->mutable_bandwidth()->set_avg_gbps(behaviour_.gbps);
    response.mutable_result()->mutable_bandwidth()->set_seconds(1);
    // A tcp endpoint records its route's MTU to the peer (mtu.path).
    response.mutable_result()->mutable_path_mtu()->set_local_route_mtu(9000);
    response.mutable_result()->mutable_path_mtu()->set_route_mtu(9000);
    done(response, {});
  }

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    if (absl::StrContains(call, "Collective")) {
      return absl::UnimplementedError("no collectives in this fake");
    }
    return absl::OkStatus();
  }

 private:
  std::string node_;
  const Behaviour& behaviour_;
  int silent_calls_ = 0;
};

class PhaseEntryPointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_.cluster = "fake";
    plan_.fabric.type = plan::FabricType::kEthernet;
    plan_.fabric.link_rate_gbps = 10;
    plan_.agents.retries = 0;
    for (int i = 1; i <= 3; ++i) {
      plan::Node node;
      node.name = "node" + std::to_string(i);
      node.agent = "127.0.0.1:" + std::to_string(7070 + i);
      node.data_ip = "10.0.0." + std::to_string(i);
      plan_.nodes.push_back(node);
    }
  }

  // The plan's nodes, each with a fake agent behaving as behaviours_ says.
  std::vector<NodeState> Nodes() {
    std::vector<NodeState> nodes;
    for (const plan::Node& node : plan_.nodes) {
      NodeState state;
      state.node = node;
      state.client = std::make_unique<NodeAgent>(node.name, behaviours_[node.name]);
      nodes.push_back(std::move(state));
    }
    return nodes;
  }

  std::vector<NodeState> Connected() {
    std::vector<NodeState> nodes = Nodes();
    RunConnectPhase(nodes, plan_.agents, progress_, clock_);
    return nodes;
  }

  plan::Plan plan_;
  std::map<std::string, Behaviour> behaviours_;
  Progress progress_{stderr, /*quiet=*/true};
  ::clustercert::testing::SimulatedClock clock_;
};

TEST_F(PhaseEntryPointTest, ConnectReachesEveryAgentOfThisApiVersion) {
  behaviours_["node2"].api_version = kApiVersion + 1;
  std::vector<NodeState> nodes = Nodes();
  EXPECT_EQ(RunConnectPhase(nodes, plan_.agents, progress_, clock_), 2);
  EXPECT_TRUE(nodes[0].reachable);
  EXPECT_FALSE(nodes[1].reachable);
  EXPECT_TRUE(nodes[2].reachable);
  EXPECT_THAT(nodes[1].error,
              AllOf(HasSubstr("agent at 127.0.0.1:7072 speaks API v"),
                    HasSubstr("install the same clustercert release on the node and here")));
  EXPECT_EQ(nodes[0].version.node_name(), "node1");
  EXPECT_TRUE(nodes[0].clock.has_value());  // from the GetVersion round trip
}

// A silent agent is asked again after a pause that grows with the attempt
// (250 ms, then 500 ms), paced by the run's clock: no wall time passes here.
TEST_F(PhaseEntryPointTest, ConnectRetriesASilentAgentAfterGrowingPauses) {
  plan_.agents.retries = 3;
  behaviours_["node2"].unavailable = 2;
  std::vector<NodeState> nodes = Nodes();
  EXPECT_EQ(RunConnectPhase(nodes, plan_.agents, progress_, clock_), 3);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(absl::Milliseconds(250), absl::Milliseconds(500)));
}

TEST_F(PhaseEntryPointTest, InventoryKeepsEachNodesAnswerAndNamesAFailure) {
  behaviours_["node3"].inventory = absl::PermissionDeniedError("caller not allowed");
  std::vector<NodeState> nodes = Connected();
  const std::vector<v1::Finding> checks = RunInventoryPhase(nodes, plan_, progress_);
  ASSERT_TRUE(nodes[0].inventory.has_value());
  EXPECT_EQ(nodes[0].inventory->rdma_devices(0).name(), "mlx5_0");
  EXPECT_FALSE(nodes[2].inventory.has_value());
  EXPECT_EQ(nodes[2].error, "PERMISSION_DENIED: caller not allowed");
  EXPECT_FALSE(checks.empty());
  bool node3_failed = false;
  for (const v1::Finding& finding : checks) {
    if (finding.node() == "node3" && finding.status() == v1::Finding::fail) node3_failed = true;
  }
  EXPECT_TRUE(node3_failed) << "the node without an inventory fails a check";
}

// The nccl backend on nodes without GPUs does not run at all, and says so
// (skipped, never pass): the plan's gpus are 0 here.
TEST_F(PhaseEntryPointTest, CollectivesWithNcclAndNoGpusAreSkippedWithTheReason) {
  plan_.collectives.enabled = true;
  plan_.collectives.backend = plan::CollectiveBackend::kNccl;
  std::vector<NodeState> nodes = Connected();
  RunInventoryPhase(nodes, plan_, progress_);
  const CollectivesOutcome outcome = RunCollectivesPhase(nodes, plan_, progress_, clock_);
  EXPECT_THAT(outcome.not_run,
              AllOf(HasSubstr("skipped: "), HasSubstr("the nccl backend needs one GPU per rank")));
  EXPECT_TRUE(outcome.sweeps.empty());
  EXPECT_TRUE(outcome.checks.empty());
}

// An agent that cannot run uplink flows (the fake keeps the RPC
// unimplemented) fails each of its runs with the reason; none passes.
TEST_F(PhaseEntryPointTest, UplinkRunsOneRowPerNodeTargetAndFlowCount) {
  plan_.uplink.enabled = true;
  plan::UplinkTarget target;
  target.type = "http";
  target.url = "http://10.0.9.1:8080/dataset.bin";
  target.name = target.url;
  plan_.uplink.targets = {target};
  plan_.uplink.flows = {1, 4};
  plan_.uplink.duration = absl::Seconds(1);
  std::vector<NodeState> nodes = Connected();
  std::vector<NodeState> sinks;
  const UplinkOutcome outcome = RunUplinkPhase(nodes, sinks, plan_, progress_, clock_);
  ASSERT_EQ(outcome.uplink.throughput_size(), 6);
  std::vector<int> flows;
  for (const v1::UplinkThroughput& run : outcome.uplink.throughput()) {
    EXPECT_FALSE(run.ok()) << run.node();
    EXPECT_FALSE(run.error().empty()) << run.node();
    EXPECT_EQ(run.target(), target.url);
    if (run.node() == "node1") flows.push_back(run.flows());
  }
  EXPECT_THAT(flows, ElementsAre(1, 4));
}

// End to end: every phase in order, each judged. The fake inventories are
// bare (one RDMA device, no ports), so the node checks block certification
// while every pairwise cell passes at 9 of 10 Gb/s.
TEST_F(PhaseEntryPointTest, CertificationRunsThePhasesInOrderAndJudgesEach) {
  plan_.pairwise.enabled = true;
  plan_.pairwise.engine = plan::PairwiseEngine::kTcp;
  plan_.pairwise.tests = {"write_bw"};
  plan_.pairwise.memory = {"host"};
  plan_.pairwise.duration = absl::Seconds(1);
  std::vector<NodeState> nodes = Nodes();
  const absl::Time started = clock_.Now();
  const CertificationResult result = RunCertification(plan_, nodes, progress_, clock_);
  EXPECT_EQ(result.reachable, 3);
  std::vector<std::string> phases;
  for (const v1::PhaseResult& phase : result.certificate.phases()) phases.push_back(phase.name());
  EXPECT_THAT(phases, ElementsAre("connect", "inventory", "pairwise", "collectives", "uplink"));
  int cells = 0;
  for (const v1::PairResult& pair : result.certificate.pairs()) {
    ++cells;
    EXPECT_EQ(pair.verdict().status(), v1::Finding::pass) << pair.client() << "->" << pair.server();
    EXPECT_DOUBLE_EQ(pair.value(), 9);
  }
  EXPECT_EQ(cells, 6);  // 3 nodes, both directions
  EXPECT_EQ(result.certificate.verdict(), "not-certified");
  EXPECT_THAT(result.certificate.verdict_reasons(),
              ElementsAre(HasSubstr("check(s) of severity error failed or are unknown")));
  std::map<std::string, v1::PhaseResult::Status> status;
  for (const v1::PhaseResult& phase : result.certificate.phases()) {
    status[phase.name()] = phase.status();
  }
  EXPECT_EQ(status["connect"], v1::PhaseResult::pass);
  EXPECT_EQ(status["inventory"], v1::PhaseResult::fail);
  EXPECT_EQ(status["pairwise"], v1::PhaseResult::pass);
  EXPECT_EQ(status["collectives"], v1::PhaseResult::skipped);
  EXPECT_EQ(status["uplink"], v1::PhaseResult::skipped);
  // The run's times are the injected clock's.
  EXPECT_EQ(result.certificate.started_at(), FormatUtc(started));
}

}  // namespace
}  // namespace clustercert::controller
