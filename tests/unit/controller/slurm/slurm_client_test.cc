#include "controller/slurm/slurm_client.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/fake_command_runner.h"

namespace clustercert::controller::slurm {
namespace {

using clustercert::testing::FakeCommandRunner;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(CLUSTERCERT_FIXTURES) + "/slurm/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SlurmClientTest : public ::testing::Test {
 protected:
  void AnswerPartitionGpu() {
    runner_.AnswerText("scontrol --oneliner show partition gpu",
                       Fixture("show_partition_gpu_oneliner.txt"));
    runner_.AnswerText("scontrol show hostnames node[1-4]", Fixture("show_hostnames_node1-4.txt"));
    runner_.AnswerText("scontrol --oneliner show node node1,node2,node3,node4",
                       Fixture("show_node_oneliner_mixed.txt"));
  }

  FakeCommandRunner runner_;
  SlurmClient client_{runner_, absl::Seconds(7)};
};

TEST_F(SlurmClientTest, ListsAPartitionsNodesWithDeadlines) {
  AnswerPartitionGpu();
  auto selection = client_.ListNodes("gpu");
  ASSERT_TRUE(selection.ok()) << selection.status();
  EXPECT_EQ(selection->source, "partition gpu");
  ASSERT_EQ(selection->nodes.size(), 4u);
  EXPECT_EQ(selection->nodes[2].name, "node3");
  EXPECT_EQ(selection->nodes[2].addr, "10.201.1.3");
  ASSERT_EQ(runner_.timeouts().size(), 3u);
  for (absl::Duration timeout : runner_.timeouts()) EXPECT_EQ(timeout, absl::Seconds(7));
}

TEST_F(SlurmClientTest, ANameThatIsNoPartitionIsANodeList) {
  runner_.Answer("scontrol --oneliner show partition node1",
                 process::CommandResult{1, Fixture("show_partition_unknown_stdout.txt"), ""});
  runner_.AnswerText("scontrol show hostnames node1", "node1\n");
  runner_.AnswerText("scontrol --oneliner show node node1",
                     Fixture("show_node_oneliner_node1_node3.txt")
                         .substr(0, Fixture("show_node_oneliner_node1_node3.txt").find('\n') + 1));
  auto selection = client_.ListNodes("node1");
  ASSERT_TRUE(selection.ok()) << selection.status();
  EXPECT_EQ(selection->source, "node list node1");
  EXPECT_EQ(selection->nodes.size(), 1u);
}

TEST_F(SlurmClientTest, AHostlistSkipsThePartitionLookup) {
  runner_.AnswerText("scontrol show hostnames node[1-4]", Fixture("show_hostnames_node1-4.txt"));
  runner_.AnswerText("scontrol --oneliner show node node1,node2,node3,node4",
                     Fixture("show_node_oneliner_mixed.txt"));
  auto selection = client_.ListNodes("node[1-4]");
  ASSERT_TRUE(selection.ok()) << selection.status();
  EXPECT_EQ(runner_.calls().size(), 2u);
}

TEST_F(SlurmClientTest, RefusesAHostileSelectorBeforeRunningAnything) {
  for (const char* bad : {"gpu;reboot", "-h", "node[1-", "a b"}) {
    auto selection = client_.ListNodes(bad);
    EXPECT_EQ(selection.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  // "-h" and the others never reach scontrol.
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(SlurmClientTest, ANodeSlurmDoesNotDescribeIsAnError) {
  runner_.AnswerText("scontrol --oneliner show node node1,node9",
                     Fixture("show_node_oneliner_resumed.txt")
                         .substr(0, Fixture("show_node_oneliner_resumed.txt").find('\n') + 1));
  auto nodes = client_.ShowNodes({"node1", "node9"});
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(nodes.status().message().find("node9"), std::string::npos);
}

TEST_F(SlurmClientTest, ScontrolFailuresNameTheCommandAndSlurmsWords) {
  runner_.Answer("scontrol --oneliner show node nosuch",
                 process::CommandResult{1, Fixture("show_node_unknown_stdout.txt"), ""});
  auto nodes = client_.ShowNodes({"nosuch"});
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("`scontrol --oneliner show node nosuch` exited with 1: "
                                          "Node nosuch not found"),
            std::string::npos)
      << nodes.status();
  // No scontrol at all.
  auto missing = client_.ListNodes("node[1-2]");
  EXPECT_NE(missing.status().message().find("install slurm-client"), std::string::npos);
  runner_.Answer("scontrol show hostnames node[1-2]",
                 absl::DeadlineExceededError("scontrol did not finish within 7s; killed it"));
  EXPECT_EQ(client_.ListNodes("node[1-2]").status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(SlurmClientTest, DrainAndResumeBuildTheirArgvFromValidatedValues) {
  runner_.AnswerText(
      "scontrol update NodeName=node3 State=DRAIN Reason=clustercert: node3 MTU 1400 too small",
      "");
  runner_.AnswerText("scontrol update NodeName=node3 State=RESUME", "");
  EXPECT_TRUE(client_.Drain("node3", "node3 MTU\n1400 too small").ok());
  EXPECT_TRUE(client_.Resume("node3").ok());
  ASSERT_EQ(runner_.calls().size(), 2u);
  EXPECT_EQ(runner_.calls()[0],
            (std::vector<std::string>{"scontrol", "update", "NodeName=node3", "State=DRAIN",
                                      "Reason=clustercert: node3 MTU 1400 too small"}));
  EXPECT_FALSE(client_.Drain("node3 State=DOWN", "x").ok());
  EXPECT_FALSE(client_.Resume("-h").ok());
  EXPECT_EQ(runner_.calls().size(), 2u);
  runner_.Answer("scontrol update NodeName=node4 State=RESUME",
                 process::CommandResult{1, "", Fixture("update_unknown_node_stderr.txt")});
  absl::Status refused = client_.Resume("node4");
  EXPECT_NE(refused.message().find("Invalid node name specified"), std::string::npos) << refused;
}

}  // namespace
}  // namespace clustercert::controller::slurm
