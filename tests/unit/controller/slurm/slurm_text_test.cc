#include "controller/slurm/slurm_text.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace clustercert::controller::slurm {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(CLUSTERCERT_FIXTURES) + "/slurm/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SlurmTextTest, ParsesRealOnelinerOutputWithDrainDownAndReasons) {
  auto nodes = ParseNodeLines(Fixture("show_node_oneliner_mixed.txt"), 10);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 4u);
  const SlurmNode& node1 = (*nodes)[0];
  EXPECT_EQ(node1.name, "node1");
  EXPECT_EQ(node1.addr, "127.0.0.1");
  EXPECT_EQ(node1.hostname, "node1");
  EXPECT_EQ(node1.StateText(), "IDLE+DRAIN");
  EXPECT_EQ(node1.reason,
            "clustercert: node1 netdev data0 has MTU 1400, plan expects at least 1500.");
  EXPECT_TRUE(node1.DrainedByClustercert());

  const SlurmNode& node2 = (*nodes)[1];
  EXPECT_EQ(node2.addr, "10.201.1.2");
  EXPECT_EQ(node2.hostname, "host-2");
  EXPECT_EQ(node2.state, "UNKNOWN");
  EXPECT_TRUE(node2.Drained());
  EXPECT_TRUE(node2.HasFlag("NOT_RESPONDING"));
  // The reason keeps its ':' and '=' and loses Slurm's " [user@time]".
  EXPECT_EQ(node2.reason, "maintenance by ops: cable=bad");
  EXPECT_FALSE(node2.DrainedByClustercert());

  const SlurmNode& node3 = (*nodes)[2];
  EXPECT_TRUE(node3.Down());
  EXPECT_FALSE(node3.Drained());
  EXPECT_EQ(node3.reason, "psu failed");

  EXPECT_EQ((*nodes)[3].reason, "");
  EXPECT_EQ((*nodes)[3].StateText(), "UNKNOWN+NOT_RESPONDING");
}

TEST(SlurmTextTest, ResumedNodeHasNoReason) {
  auto nodes = ParseNodeLines(Fixture("show_node_oneliner_resumed.txt"), 10);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_FALSE((*nodes)[0].Drained());
  EXPECT_EQ((*nodes)[0].reason, "");
}

TEST(SlurmTextTest, RefusesMoreNodesThanAskedFor) {
  auto nodes = ParseNodeLines(Fixture("show_node_oneliner_mixed.txt"), 2);
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(SlurmTextTest, RefusesHostileNodeFields) {
  EXPECT_FALSE(ParseNodeLine("NodeName=../etc NodeAddr=1.2.3.4 NodeHostName=a State=IDLE").ok());
  EXPECT_FALSE(ParseNodeLine("NodeName=n1 NodeAddr=1.2.3.4;rm NodeHostName=a State=IDLE").ok());
  EXPECT_FALSE(ParseNodeLine("NodeName=n1 NodeAddr=1.2.3.4 NodeHostName=a State=idle").ok());
  EXPECT_FALSE(ParseNodeLine("NodeName=n1 NodeAddr= NodeHostName=a State=IDLE").ok());
  EXPECT_FALSE(ParseNodeLine("Nodes=n1 NodeAddr=1.2.3.4 NodeHostName=a State=IDLE").ok());
  EXPECT_FALSE(ParseNodeLine("NodeName=n1 NodeAddr=1.2.3.4 NodeHostName=a State=IDLE\x01").ok());
  EXPECT_TRUE(ParseNodeLine("NodeName=n1 NodeAddr=fd00::1 NodeHostName=a State=MIXED+DRAIN").ok());
}

TEST(SlurmTextTest, PartitionNodeListFromRealOutput) {
  auto list = ParsePartitionNodeList(Fixture("show_partition_gpu_oneliner.txt"));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, "node[1-4]");
  EXPECT_EQ(ParsePartitionNodeList("PartitionName=empty Nodes=(null) State=UP").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SlurmTextTest, HostnamesFromRealOutput) {
  auto names = ParseHostnames(Fixture("show_hostnames_node1-4.txt"), 10);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  EXPECT_FALSE(ParseHostnames(Fixture("show_hostnames_node1-4.txt"), 3).ok());
  // What Slurm prints for an unbalanced 'bad[' (exit 0) is still refused.
  EXPECT_FALSE(ParseHostnames(Fixture("show_hostnames_bad_stdout.txt"), 10).ok());
  EXPECT_FALSE(ParseHostnames("", 10).ok());
}

TEST(SlurmTextTest, NodeListsAreValidatedBeforeSlurmSeesThem) {
  for (const char* good : {"node1", "node[1-4]", "gpu[001-016,020],login1", "a.b-c_d[1]"}) {
    EXPECT_TRUE(ValidateNodeList(good).ok()) << good;
  }
  for (const char* bad : {"", "node[1-4", "node]", "[1-2]", "node[[1]]", "node[a-b]", "node;reboot",
                          "node 1", "-h", "node[1-2]x[3]$"}) {
    EXPECT_FALSE(ValidateNodeList(bad).ok()) << bad;
  }
  EXPECT_FALSE(ValidateNodeList(std::string(5000, 'a')).ok());
  EXPECT_TRUE(IsSlurmName("gpu-017.rack_2"));
  EXPECT_FALSE(IsSlurmName("gpu[1]"));
  EXPECT_FALSE(IsSlurmName(std::string(65, 'a')));
}

TEST(SlurmTextTest, ReasonIsPrefixedPrintableOneLineAndBounded) {
  EXPECT_EQ(ClustercertReason("node1 port\tdown\n\nnow\x01!"),
            "clustercert: node1 port down now !");
  const std::string reason = ClustercertReason(std::string(500, 'x'));
  EXPECT_EQ(reason.size(), kMaxReasonLength);
  EXPECT_EQ(reason.substr(0, 13), "clustercert: ");
  EXPECT_EQ(reason.substr(reason.size() - 3), "...");
  EXPECT_EQ(ClustercertReason("caf\xc3\xa9"), "clustercert: caf");
}

}  // namespace
}  // namespace clustercert::controller::slurm
