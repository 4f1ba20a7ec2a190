// Rejections in fabric and nodes: each case breaks one thing in BasePlan()
// and checks the exact file:line:col, key path and wording of the error.

#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

const std::vector<RejectCase> kFabricCases = {
    {"TypeUnknown",
     {{"type: roce", "type: rocev2"}},
     "type: |rocev2",
     "fabric.type is \"rocev2\"; it must be one of roce, infiniband, ethernet. Did you mean roce?"},
    {"TypeList",
     {{"type: roce", "type: [roce]"}},
     "type: |[roce]",
     "fabric.type is a list; it must be one of roce, infiniband, ethernet."},
    {"LinkRateNegative",
     {{"link_rate_gbps: 200", "link_rate_gbps: -200"}},
     "-200",
     "fabric.link_rate_gbps is -200; it must be a positive number of Gb/s, at most 3200 (e.g. 200 "
     "for HDR, 400 for NDR)."},
    {"LinkRateZero",
     {{"link_rate_gbps: 200", "link_rate_gbps: 0"}},
     "link_rate_gbps: |0",
     "fabric.link_rate_gbps is 0; it must be a positive number of Gb/s"},
    {"LinkRateTooHigh",
     {{"link_rate_gbps: 200", "link_rate_gbps: 4000"}},
     "4000",
     "fabric.link_rate_gbps is 4000; it must be a positive number of Gb/s, at most 3200"},
    {"LinkRateText",
     {{"link_rate_gbps: 200", "link_rate_gbps: fast"}},
     "fast",
     "fabric.link_rate_gbps is \"fast\"; it must be a positive number of Gb/s"},
    {"LinkRateQuoted",
     {{"link_rate_gbps: 200", "link_rate_gbps: \"200\""}},
     "\"200\"",
     "fabric.link_rate_gbps is \"200\"; it must be a positive number of Gb/s, at most 3200 (e.g. "
     "200 for HDR, 400 for NDR). Write it without quotes."},
    {"LinkRateMap",
     {{"link_rate_gbps: 200", "link_rate_gbps: {gbps: 200}"}},
     "{gbps",
     "fabric.link_rate_gbps is a map; it must be a positive number of Gb/s"},
    {"LinkRateEmpty",
     {{"link_rate_gbps: 200", "link_rate_gbps:"}},
     "link_rate_gbps:",
     "fabric.link_rate_gbps is empty; it must be a positive number of Gb/s"},
    {"ActiveMtuNotAPathMtu",
     {{"active_mtu: 4096", "active_mtu: 1500"}},
     "1500",
     "fabric.active_mtu is 1500; it must be one of 256, 512, 1024, 2048, 4096"},
    {"ActiveMtuFraction",
     {{"active_mtu: 4096", "active_mtu: 4096.5"}},
     "4096.5",
     "fabric.active_mtu is 4096.5; it must be one of 256, 512, 1024, 2048, 4096"},
    {"MinNetdevMtuTooLow",
     {{"min_netdev_mtu: 9000", "min_netdev_mtu: 500"}},
     "500",
     "fabric.min_netdev_mtu is 500; it must be an integer from 576 to 9216"},
    {"MinNetdevMtuTooHigh",
     {{"min_netdev_mtu: 9000", "min_netdev_mtu: 9500"}},
     "9500",
     "fabric.min_netdev_mtu is 9500; it must be an integer from 576 to 9216"},
    {"GidIndexTooHigh",
     {{"gid_index: 3", "gid_index: 256"}},
     "256",
     "fabric.roce.gid_index is 256; it must be an integer from 0 to 255"},
    {"GidIndexNegative",
     {{"gid_index: 3", "gid_index: -1"}},
     "-1",
     "fabric.roce.gid_index is -1; it must be an integer from 0 to 255"},
    {"PfcPriorityTooHigh",
     {{"pfc_priority: 3", "pfc_priority: 8"}},
     "pfc_priority: |8",
     "fabric.roce.pfc_priority is 8; it must be an integer from 0 to 7"},
    {"DscpTooHigh",
     {{"dscp: 26", "dscp: 64"}},
     "64",
     "fabric.roce.dscp is 64; it must be an integer from 0 to 63"},
    {"TrustUnknown",
     {{"trust: dscp", "trust: cos"}},
     "cos",
     "fabric.roce.trust is \"cos\"; it must be one of dscp, pcp."},
    {"EcnYes",
     {{"ecn: true", "ecn: yes"}},
     "yes",
     "fabric.roce.ecn is \"yes\"; it must be true or false."},
    {"RoceUnknownKeyTypo",
     {{"ecn: true", "ecm: true"}},
     "|ecm: true",
     "fabric.roce.ecm is not a known key; did you mean ecn? Keys allowed in fabric.roce: "
     "gid_index, pfc_priority, dscp, trust, ecn, lossless."},
    {"RoceUnknownKey",
     {{"ecn: true", "ecn: true, pfc: 3"}},
     "|pfc: 3",
     "fabric.roce.pfc is not a known key. Keys allowed in fabric.roce: gid_index, pfc_priority, "
     "dscp, trust, ecn, lossless."},
    {"RoceOnInfiniband",
     {{"type: roce", "type: infiniband"}},
     "roce: |{",
     "fabric.roce is set but fabric.type is infiniband; RoCE settings apply only to type roce"},
    {"FabricList",
     {{"fabric:\n  type: roce", "fabric: [roce]\nfabric_was:\n  type: roce"}},
     "fabric: |[roce]",
     "fabric is a list; it must be a map",
     2},
};

const std::vector<RejectCase> kNodeCases = {
    {"NodesEmpty",
     {{"nodes:\n  - name: node1", "nodes: []\nunused:\n  - name: node1"}},
     "nodes: |[]",
     "nodes is an empty list; it must be a non-empty list of nodes",
     2},
    {"NodesMap",
     {{"nodes:\n  - name: node1", "nodes: {node1: 1}\nunused:\n  - name: node1"}},
     "nodes: |{",
     "nodes is a map; it must be a non-empty list of nodes",
     2},
    {"NodeNotAMap",
     {{"  - name: node2\n    agent: 192.168.100.12:7070\n    data_ip: 10.10.1.2\n    rails: "
       "[mlx5_0, mlx5_1]\n    gpus: 4\n",
       "  - node2\n"}},
     "- |node2",
     "nodes[1] is \"node2\"; it must be a map with name, agent, data_ip, rails, gpus, leaf and "
     "cable."},
    {"NameMissing",
     {{"  - name: node1\n    agent", "  - agent"}},
     "- |agent: 192.168.100.11",
     "nodes[0].name is missing; it must be a name of letters, digits, '.', '_' and '-'"},
    {"NameWithSpace",
     {{"name: node1", "name: node 1"}},
     "node 1",
     "nodes[0].name is \"node 1\"; it must be a name of letters, digits, '.', '_' and '-'"},
    {"NameWithSlash",
     {{"name: node1", "name: rack1/node1"}},
     "rack1/node1",
     "nodes[0].name is \"rack1/node1\"; it must be a name of letters"},
    {"NameDuplicate",
     {{"name: node2", "name: node1"}},
     "|node1\n    agent: 192.168.100.12",
     "nodes[1].name is node1, already the name of nodes[0] (line 9); node names must be unique."},
    {"AgentMissing",
     {{"    agent: 192.168.100.11:7070\n", ""}},
     "- |name: node1",
     "nodes[0].agent is missing; it must be the node-agent's host:port"},
    {"AgentWithoutPort",
     {{"agent: 192.168.100.11:7070", "agent: 192.168.100.11"}},
     "192.168.100.11\n",
     "nodes[0].agent is \"192.168.100.11\"; it must be the node-agent's host:port with a port "
     "from 1 to 65535 (e.g. 192.168.100.11:7070; an IPv6 address goes in brackets, "
     "[fd00::11]:7070). The port is missing."},
    {"AgentPortZero",
     {{"agent: 192.168.100.11:7070", "agent: 192.168.100.11:0"}},
     "192.168.100.11:0",
     "nodes[0].agent is \"192.168.100.11:0\"; it must be the node-agent's"},
    {"AgentPortTooHigh",
     {{"agent: 192.168.100.11:7070", "agent: 192.168.100.11:70000"}},
     "192.168.100.11:70000",
     "nodes[0].agent is \"192.168.100.11:70000\"; it must be"},
    {"AgentBadIpv4",
     {{"agent: 192.168.100.11:7070", "agent: 192.168.100.311:7070"}},
     "192.168.100.311",
     "nodes[0].agent is \"192.168.100.311:7070\"; it must be"},
    {"AgentIpv6WithoutBrackets",
     {{"agent: 192.168.100.11:7070", "agent: fd00::11:7070"}},
     "fd00::11:7070",
     "nodes[0].agent is \"fd00::11:7070\"; it must be"},
    {"AgentNumber",
     {{"agent: 192.168.100.11:7070", "agent: 7070"}},
     "agent: |7070",
     "nodes[0].agent is 7070; it must be the node-agent's host:port"},
    {"AgentDuplicate",
     {{"agent: 192.168.100.12:7070", "agent: 192.168.100.11:7070"}},
     "|192.168.100.11:7070\n    data_ip: 10.10.1.2",
     "nodes[1].agent is 192.168.100.11:7070, already the agent of node1 (line 9); each node "
     "needs its own agent address."},
    {"AgentDuplicateIpv6",
     {{"agent: 192.168.100.11:7070", "agent: \"[FD00::11]:7070\""},
      {"agent: 192.168.100.12:7070", "agent: \"[fd00::11]:7070\""}},
     "\"[fd00::11]:7070\"",
     "nodes[1].agent is [fd00::11]:7070, already the agent of node1"},
    {"DataIpNotAnAddress",
     {{"data_ip: 10.10.1.1", "data_ip: 10.10.1"}},
     "10.10.1\n",
     "nodes[0].data_ip is \"10.10.1\"; it must be an IPv4 or IPv6 address"},
    {"DataIpWithPort",
     {{"data_ip: 10.10.1.1", "data_ip: 10.10.1.1:7070"}},
     "10.10.1.1:7070",
     "nodes[0].data_ip is \"10.10.1.1:7070\"; it must be an IPv4 or IPv6 address"},
    {"RailsMissingOnRoce",
     {{"data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_1]\n", "data_ip: 10.10.1.1\n"}},
     "- |name: node1",
     "nodes[0] (node1) has no rails; fabric.type is roce, so each node must list the RDMA "
     "devices to test (e.g. rails: [mlx5_0, mlx5_1])."},
    {"RailsEmptyOnInfiniband",
     {{"type: roce", "type: infiniband"},
      {"  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}\n", ""},
      {"data_ip: 10.10.1.2\n    rails: [mlx5_0, mlx5_1]", "data_ip: 10.10.1.2\n    rails: []"}},
     "rails: |[]",
     "nodes[1] (node2) has no rails; fabric.type is infiniband"},
    {"RailsText",
     {{"data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_1]", "data_ip: 10.10.1.1\n    rails: mlx5_0"}},
     "rails: |mlx5_0\n",
     "nodes[0].rails is \"mlx5_0\"; it must be a list of RDMA device names"},
    {"RailDuplicate",
     {{"data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_1]",
       "data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_0]"}},
     "[mlx5_0, |mlx5_0]",
     "nodes[0].rails[1] is mlx5_0, already listed as nodes[0].rails[0]; each rail may appear "
     "once per node."},
    {"RailBadName",
     {{"data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_1]",
       "data_ip: 10.10.1.1\n    rails: [mlx5_0, \"mlx5 1\"]"}},
     "\"mlx5 1\"",
     "nodes[0].rails[1] is \"mlx5 1\"; it must be an RDMA device name"},
    {"GpusTooMany",
     {{"gpus: 4\nexpect:", "gpus: 65\nexpect:"}},
     "65",
     "nodes[1].gpus is 65; it must be an integer from 0 to 64"},
    {"GpusNegative",
     {{"gpus: 4\nexpect:", "gpus: -1\nexpect:"}},
     "-1",
     "nodes[1].gpus is -1; it must be an integer from 0 to 64"},
    {"GpusText",
     {{"gpus: 4\nexpect:", "gpus: four\nexpect:"}},
     "four",
     "nodes[1].gpus is \"four\"; it must be an integer from 0 to 64"},
    {"NodeUnknownKeyTypo",
     {{"gpus: 4\nexpect:", "gpu: 4\nexpect:"}},
     "gpu: 4\nexpect:",
     "nodes[1].gpu is not a known key; did you mean gpus? Keys allowed in nodes[1]: name, agent, "
     "data_ip, rails, gpus, leaf, cable."},
};

class FabricRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(FabricRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Fabric, FabricRejectionTest, ::testing::ValuesIn(kFabricCases), CaseName);

class NodeRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(NodeRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Nodes, NodeRejectionTest, ::testing::ValuesIn(kNodeCases), CaseName);

TEST(NodesTest, MissingNodesPointsAtTheTopOfThePlan) {
  std::string text = BasePlan();
  const size_t begin = text.find("nodes:\n");
  const size_t end = text.find("expect:\n");
  text.erase(begin, end - begin);
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(std::string(plan.status().message()),
            "plans/t.yaml:1:1: nodes is missing; it must be a non-empty list of nodes, each a map "
            "with at least name and agent.");
}

TEST(NodesTest, RailsAreOptionalOnEthernet) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070"}
  - {name: b, agent: "10.0.0.2:7070", rails: []}
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->nodes[0].rails.empty());
  EXPECT_TRUE(plan->nodes[1].rails.empty());
}

TEST(NodesTest, AcceptsBracketedIpv6AndHostNames) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "[::1]:7070", data_ip: "fd00::1"}
  - {name: b, agent: "gpu-b.example.org:7070"}
  - {name: c, agent: "[fe80::1%eth0]:7071"}
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->nodes[0].agent, "[::1]:7070");
  EXPECT_EQ(plan->nodes[0].data_ip, "fd00::1");
  EXPECT_EQ(plan->nodes[1].agent, "gpu-b.example.org:7070");
}

TEST(NodesTest, PathsStayAlignedAfterABadEntry) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - just-a-name
  - {name: a, agent: "10.0.0.1:7070"}
  - {name: a, agent: "10.0.0.2:7070"}
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(ErrorLines(plan.status()),
              ::testing::ElementsAre(
                  "plans/t.yaml:4:5: nodes[0] is \"just-a-name\"; it must be a map with name, "
                  "agent, data_ip, rails, gpus, leaf and cable.",
                  "plans/t.yaml:6:12: nodes[2].name is a, already the name of nodes[1] (line 5); "
                  "node names must be unique."));
}

TEST(NodesTest, ParsesAThousandNodes) {
  std::string text = "cluster: big\nfabric: {type: roce}\nnodes:\n";
  for (int i = 0; i < 1024; ++i) {
    absl::StrAppend(&text, "  - {name: n", i, ", agent: \"10.0.", i / 256, ".", i % 256,
                    ":7070\", rails: [mlx5_0], gpus: 8}\n");
  }
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->nodes.size(), 1024u);
  EXPECT_EQ(plan->nodes[1023].agent, "10.0.3.255:7070");
}

// Three leaves of two nodes on the tcp engine, pattern `pattern`.
std::string LeafPlan(const std::string& leaves, const std::string& pattern) {
  std::string text = "cluster: lab\nfabric: {type: ethernet}\nnodes:\n";
  for (size_t i = 0; i < leaves.size(); ++i) {
    absl::StrAppend(
        &text, "  - {name: n", i, ", agent: \"10.0.0.", i + 1, ":7070\", data_ip: ", "10.1.0.",
        i + 1,
        leaves[i] == '-' ? std::string() : absl::StrCat(", leaf: leaf", std::string(1, leaves[i])),
        "}\n");
  }
  absl::StrAppend(&text, "pairwise: {engine: tcp, pattern: ", pattern, "}\n");
  return text;
}

TEST(NodesTest, LeafLabelsDrivePatternLeaf) {
  const absl::StatusOr<Plan> plan = ParsePlan(LeafPlan("112233", "leaf"), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->nodes[2].leaf, "leaf2");
  EXPECT_EQ(plan->pairwise.pattern, PairwisePattern::kLeaf);
}

TEST(NodesTest, LeavesAreForEveryNodeOrNone) {
  const absl::StatusOr<Plan> plan = ParsePlan(LeafPlan("11-2-3", "ring"), kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(
      ErrorLines(plan.status()),
      ::testing::ElementsAre(::testing::HasSubstr(
          "nodes n2, n4 have no leaf but node n0 has one; give every node its leaf switch (or "
          "rail group), or none.")));
}

TEST(NodesTest, PatternLeafNeedsLeaves) {
  const absl::StatusOr<Plan> plan = ParsePlan(LeafPlan("------", "leaf"), kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(ErrorLines(plan.status()),
              ::testing::ElementsAre(::testing::HasSubstr(
                  "pairwise.pattern is leaf but no node has a leaf; give each node its leaf "
                  "switch or rail group (nodes[].leaf), or choose another pattern.")));
}

TEST(NodesTest, LeafMustBeAName) {
  std::string text = LeafPlan("-12233", "leaf");
  text = Replace(text, "data_ip: 10.1.0.1}", "data_ip: 10.1.0.1, leaf: \"leaf 1\"}");
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message()).find("nodes[0].leaf is \"leaf 1\""),
            std::string::npos)
      << plan.status();
}

TEST(NodesTest, KeepsEachNodesSourceLocation) {
  const absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->nodes.size(), 2u);
  EXPECT_EQ(plan->nodes[0].location.line, 9);
  EXPECT_EQ(plan->nodes[0].location.column, 5);
  EXPECT_EQ(plan->nodes[1].location.line, 14);
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
