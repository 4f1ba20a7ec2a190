// The port.flap reads (link_flap_reads.h): which rail ports a run watches,
// one ReadPortCounters per port, and a node that does not answer.
#include "controller/phases/link_flap_reads.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

using ::testing::HasSubstr;

// An agent whose carrier count goes up by `step` on every read.
class CountingAgent : public testing::FakeAgentClient {
 public:
  explicit CountingAgent(uint64_t step, bool answers = true) : step_(step), answers_(answers) {}

  void ReadPortCounters(const v1::ReadPortCountersRequest& request, absl::Duration,
                        AgentCallback<v1::ReadPortCountersResponse> done) override {
    requests.push_back(request);
    if (!answers_) {
      done(absl::DeadlineExceededError("Deadline Exceeded"), {});
      return;
    }
    v1::ReadPortCountersResponse response;
    auto* value = response.mutable_counters()->add_values();
    value->set_source("sysfs");
    value->set_name("carrier_changes");
    value->set_value(2 + step_ * reads_++);
    done(std::move(response), {});
  }

  std::vector<v1::ReadPortCountersRequest> requests;

 private:
  uint64_t step_;
  bool answers_;
  uint64_t reads_ = 0;
};

NodeState Node(const std::string& name, const std::string& data_ip,
               std::unique_ptr<AgentClient> client) {
  NodeState state;
  state.node.name = name;
  state.node.data_ip = data_ip;
  state.node.rails = {"mlx5_0", "mlx5_1"};
  state.client = std::move(client);
  state.reachable = true;
  v1::Inventory inventory;
  for (const char* rail : {"mlx5_0", "mlx5_1"}) {
    auto* device = inventory.add_rdma_devices();
    device->set_name(rail);
    device->add_ports()->set_netdev(std::string("enp_") + rail);
  }
  auto* netdev = inventory.add_netdevs();
  netdev->set_name("data0");
  netdev->add_cidrs(data_ip + "/24");
  state.inventory = inventory;
  return state;
}

TEST(LinkFlapReadsTest, RoceWatchesEveryPlanRailWithItsNetdev) {
  std::vector<NodeState> nodes;
  nodes.push_back(Node("node1", "10.0.0.1", std::make_unique<CountingAgent>(0)));
  plan::Plan plan;
  plan.fabric.type = plan::FabricType::kRoce;
  std::vector<FlapPort> ports = FlapPortsOf(plan, nodes, nullptr);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[1].rail, "mlx5_1");
  EXPECT_EQ(ports[1].device, "mlx5_1");
  EXPECT_EQ(ports[1].netdev, "enp_mlx5_1");
}

TEST(LinkFlapReadsTest, EthernetWatchesTheNetdevHoldingDataIp) {
  std::vector<NodeState> nodes;
  nodes.push_back(Node("node1", "10.0.0.1", std::make_unique<CountingAgent>(0)));
  nodes.push_back(Node("node2", "10.0.0.2", std::make_unique<CountingAgent>(1)));
  nodes.push_back(Node("node3", "10.0.0.3", nullptr));  // never connected
  nodes[2].reachable = false;
  plan::Plan plan;
  plan.fabric.type = plan::FabricType::kEthernet;
  std::vector<FlapPort> ports = FlapPortsOf(plan, nodes, nullptr);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].rail, "data0");
  EXPECT_EQ(ports[0].device, "");
  EXPECT_EQ(ports[0].netdev, "data0");

  const std::vector<checks::FlapRead> first = ReadFlapCounters(nodes, ports);
  const std::vector<checks::FlapRead> last = ReadFlapCounters(nodes, ports);
  auto* agent = static_cast<CountingAgent*>(nodes[1].client.get());
  ASSERT_EQ(agent->requests.size(), 2u);
  EXPECT_EQ(agent->requests[0].device(), "");
  EXPECT_EQ(agent->requests[0].port(), 0u);
  EXPECT_EQ(agent->requests[0].netdev(), "data0");

  std::vector<v1::LinkFlaps> flaps = FlapsOfRun(nodes, ports, first, last);
  ASSERT_EQ(flaps.size(), 2u);
  EXPECT_EQ(checks::JudgeFlaps(flaps[0]).status(), v1::Finding::pass);
  // node2's carrier rose by one between the reads: a flap on node2 only.
  v1::Finding node2 = checks::JudgeFlaps(flaps[1]);
  EXPECT_EQ(node2.status(), v1::Finding::fail);
  EXPECT_EQ(node2.node(), "node2");
  EXPECT_THAT(node2.message(), HasSubstr("node2 data0 lost its link 1 time"));
}

TEST(LinkFlapReadsTest, ANodeThatDoesNotAnswerIsUnknownAndARerunWatchesOnlyItsNodes) {
  std::vector<NodeState> nodes;
  nodes.push_back(Node("node1", "10.0.0.1", std::make_unique<CountingAgent>(0, false)));
  nodes.push_back(Node("node2", "10.0.0.2", std::make_unique<CountingAgent>(0)));
  plan::Plan plan;
  plan.fabric.type = plan::FabricType::kEthernet;
  RerunScope rerun;
  rerun.only = {"node1"};
  std::vector<FlapPort> ports = FlapPortsOf(plan, nodes, &rerun);
  ASSERT_EQ(ports.size(), 1u);
  const std::vector<checks::FlapRead> reads = ReadFlapCounters(nodes, ports);
  std::vector<v1::LinkFlaps> flaps = FlapsOfRun(nodes, ports, reads, reads);
  ASSERT_EQ(flaps.size(), 1u);
  EXPECT_THAT(flaps[0].error(), HasSubstr("node1 did not answer ReadPortCounters"));
  EXPECT_EQ(checks::JudgeFlaps(flaps[0]).status(), v1::Finding::unknown);
}

}  // namespace
}  // namespace clustercert::controller
