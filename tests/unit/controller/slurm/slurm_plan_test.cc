#include "controller/slurm/slurm_plan.h"

#include <string>

#include "controller/plan/node_pattern.h"
#include "controller/plan/plan_parser.h"
#include "gtest/gtest.h"

namespace clustercert::controller::slurm {
namespace {

constexpr char kSlurmPlan[] =
    "cluster: lab\n"
    "fabric: {type: ethernet, min_netdev_mtu: 1500}\n"
    "slurm:\n"
    "  agent: \"{addr}:7070\"\n"
    "  data_ip: \"10.201.2.{n}\"\n"
    "  node_defaults: {rails: [mlx5_0], gpus: 8, leaf: leaf1}\n"
    "  timeout_s: 4\n"
    "agents: {insecure: true}\n";

SlurmNode Node(const std::string& name, const std::string& addr) {
  SlurmNode node;
  node.name = name;
  node.addr = addr;
  node.hostname = name;
  node.state = "IDLE";
  return node;
}

plan::Plan Parse(const std::string& text) {
  auto plan = plan::ParsePlan(text, "plan.yaml");
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : plan::Plan();
}

TEST(SlurmPlanTest, TheSlurmSectionIsParsedAndNodesBecomeOptional) {
  const plan::Plan plan = Parse(kSlurmPlan);
  EXPECT_TRUE(plan.slurm.enabled);
  EXPECT_EQ(plan.slurm.agent, "{addr}:7070");
  EXPECT_EQ(plan.slurm.data_ip, "10.201.2.{n}");
  EXPECT_EQ(plan.slurm.rails, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(plan.slurm.gpus, 8);
  EXPECT_EQ(plan.slurm.timeout, absl::Seconds(4));
  EXPECT_TRUE(plan.nodes.empty());
}

TEST(SlurmPlanTest, BadPatternsAreErrorsAtTheirLine) {
  auto plan = plan::ParsePlan(
      "cluster: lab\n"
      "slurm:\n"
      "  agent: \"{address}:7070\"\n"
      "  data_ip: \"{name}\"\n"
      "  node_defaults: {gpu: 8}\n",
      "plan.yaml");
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("plan.yaml:3:10: slurm.agent is \"{address}:7070\""), std::string::npos)
      << message;
  EXPECT_NE(message.find("{address} is not a placeholder"), std::string::npos) << message;
  EXPECT_NE(message.find("plan.yaml:4:12: slurm.data_ip is \"{name}\""), std::string::npos)
      << message;
  EXPECT_NE(message.find("gpu"), std::string::npos) << message;
  // No port: never a host:port.
  EXPECT_FALSE(plan::ParsePlan("cluster: lab\nslurm: {agent: \"{addr}\"}\n", "p").ok());
  // Without a slurm section nodes stays required.
  EXPECT_FALSE(plan::ParsePlan("cluster: lab\n", "p").ok());
}

TEST(SlurmPlanTest, PatternsExpandWithSlurmsFacts) {
  EXPECT_EQ(plan::TrailingNumber("gpu017"), "17");
  EXPECT_EQ(plan::TrailingNumber("node0"), "0");
  EXPECT_EQ(plan::TrailingNumber("login"), "");
  const plan::NodeFacts facts{"gpu017", "10.0.1.17", "gpu017.cluster", "17"};
  EXPECT_EQ(*plan::ExpandNodePattern("{hostname}:7070", facts), "gpu017.cluster:7070");
  EXPECT_EQ(*plan::ExpandNodePattern("10.9.{n}.1", facts), "10.9.17.1");
  EXPECT_FALSE(plan::ExpandNodePattern("{n}", plan::NodeFacts{"login", "a", "b", ""}).ok());
  EXPECT_FALSE(plan::ExpandNodePattern("{addr}:7070 ; x", facts).ok());
  EXPECT_FALSE(plan::ExpandNodePattern("{addr", facts).ok());
}

TEST(SlurmPlanTest, ANodeGetsItsPlanEntryElseThePatterns) {
  plan::Plan plan = Parse(std::string(kSlurmPlan) +
                          "nodes:\n  - {name: node2, agent: \"192.0.2.2:9999\", gpus: 1}\n");
  auto node1 = PlanNodeFor(plan, Node("node1", "10.201.1.1"));
  ASSERT_TRUE(node1.ok()) << node1.status();
  EXPECT_EQ(node1->agent, "10.201.1.1:7070");
  EXPECT_EQ(node1->data_ip, "10.201.2.1");
  EXPECT_EQ(node1->gpus, 8);
  EXPECT_EQ(node1->leaf, "leaf1");
  auto node2 = PlanNodeFor(plan, Node("node2", "10.201.1.2"));
  ASSERT_TRUE(node2.ok());
  EXPECT_EQ(node2->agent, "192.0.2.2:9999");
  EXPECT_EQ(node2->gpus, 1);
  // An IPv6 NodeAddr needs brackets in the pattern.
  auto v6 = PlanNodeFor(plan, Node("node3", "fd00::3"));
  EXPECT_NE(v6.status().message().find("[{addr}]:PORT"), std::string::npos) << v6.status();
  // {n} of a name without digits.
  EXPECT_FALSE(PlanNodeFor(plan, Node("login", "10.201.1.9")).ok());
}

TEST(SlurmPlanTest, WithoutASlurmSectionOnlyPlanNodesAreKnown) {
  plan::Plan plan = Parse(
      "cluster: lab\nfabric: {type: ethernet}\nagents: {insecure: true}\nnodes:\n  - {name: node1, "
      "agent: "
      "\"127.0.0.1:7070\"}\n");
  EXPECT_TRUE(PlanNodeFor(plan, Node("node1", "10.0.0.1")).ok());
  auto missing = PlanNodeFor(plan, Node("node2", "10.0.0.2"));
  EXPECT_NE(missing.status().message().find("add `slurm:"), std::string::npos);
}

TEST(SlurmPlanTest, TheResolvedPlanEmbedsSlurmsNodesAndParsesAgain) {
  plan::Plan plan = Parse(std::string(kSlurmPlan) +
                          "nodes:\n"
                          "  # a comment inside the block\n"
                          "  - name: node9\n"
                          "    agent: \"192.0.2.9:7070\"\n"
                          "certificate: {out: certs/}\n");
  auto resolved = PlanWithSlurmNodes(
      plan, {Node("node1", "10.201.1.1"), Node("node2", "10.201.1.2")}, "partition gpu");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  ASSERT_EQ(resolved->nodes.size(), 2u);
  EXPECT_EQ(resolved->nodes[1].agent, "10.201.1.2:7070");
  EXPECT_EQ(resolved->certificate.out, "certs/");
  EXPECT_EQ(resolved->text.find("node9"), std::string::npos);
  EXPECT_NE(resolved->text.find("# nodes: from Slurm (partition gpu)"), std::string::npos);
  EXPECT_NE(resolved->sha256, plan.sha256);
  // Two Slurm nodes at one NodeAddr: one agent for two nodes is the plan's error.
  auto clash = PlanWithSlurmNodes(plan, {Node("node1", "10.201.1.1"), Node("node2", "10.201.1.1")},
                                  "partition gpu");
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("each node needs its own agent address"),
            std::string::npos)
      << clash.status();
}

}  // namespace
}  // namespace clustercert::controller::slurm
