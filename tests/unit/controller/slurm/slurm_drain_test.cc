#include "controller/slurm/slurm_drain.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/fake_command_runner.h"

namespace clustercert::controller::slurm {
namespace {

using clustercert::testing::FakeCommandRunner;

v1::Finding Finding(const std::string& id, const std::string& node, v1::Finding::Status status,
                    const std::string& message) {
  v1::Finding finding;
  finding.set_id(id);
  finding.set_node(node);
  finding.set_status(status);
  finding.set_severity(v1::Finding::error);
  finding.set_message(message);
  return finding;
}

v1::Certificate FourNodes() {
  v1::Certificate certificate;
  for (const char* name : {"node1", "node2", "node3", "node4"}) {
    v1::NodeResult* node = certificate.add_nodes();
    node->set_name(name);
    node->set_reachable(true);
  }
  *certificate.add_checks() = Finding("mtu.netdev", "node1", v1::Finding::pass, "fine");
  *certificate.add_checks() =
      Finding("mtu.netdev", "node3", v1::Finding::fail, "node3 netdev data0 has MTU 1400.");
  *certificate.add_checks() = Finding("port.rate", "node3", v1::Finding::fail, "second finding");
  // A failing pair is filed under its client; it blames neither end alone.
  *certificate.add_checks() =
      Finding("pairwise.bandwidth", "node2", v1::Finding::fail, "node2->node3 slow");
  return certificate;
}

SlurmNode Node(const std::string& name, const std::string& state,
               std::vector<std::string> flags = {}, const std::string& reason = "") {
  SlurmNode node;
  node.name = name;
  node.addr = "10.0.0.1";
  node.hostname = name;
  node.state = state;
  node.flags = std::move(flags);
  node.reason = reason;
  return node;
}

TEST(SlurmDrainTest, VerdictsBlameANodeOnlyForItsOwnFindingsAndSuspects) {
  v1::Certificate certificate = FourNodes();
  v1::Suspect* suspect = certificate.add_suspects();
  suspect->set_node("node4");
  suspect->set_reason("every pair with node4 is slow");
  v1::Suspect* link = certificate.add_suspects();
  link->set_node("node1<->node2");
  const std::vector<NodeVerdict> verdicts = NodeVerdicts(certificate);
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_TRUE(verdicts[0].passed);
  EXPECT_TRUE(verdicts[1].passed);  // only its pair failed
  EXPECT_FALSE(verdicts[2].passed);
  EXPECT_EQ(verdicts[2].first_finding, "node3 netdev data0 has MTU 1400.");
  EXPECT_FALSE(verdicts[3].passed);
  EXPECT_EQ(verdicts[3].first_finding,
            "pairwise localisation names it: every pair with node4 is slow");
}

TEST(SlurmDrainTest, DrainsOnlyWhatItMayAndResumesOnlyWhatItDrained) {
  const std::vector<NodeVerdict> verdicts = {
      {"node1", true, ""},           // drained by clustercert before: resume
      {"node2", true, ""},           // drained by ops: leave
      {"node3", false, "MTU 1400"},  // idle: drain
      {"node4", false, "MTU 1400"},  // down by someone else: leave
      {"node5", false, "MTU 1400"},  // drained by clustercert, same finding: leave
      {"node6", false, "new"},       // drained by clustercert, other finding: drain again
      {"node7", false, "x"},         // not in Slurm: leave
  };
  const std::vector<SlurmNode> nodes = {
      Node("node1", "IDLE", {"DRAIN"}, "clustercert: port down"),
      Node("node2", "IDLE", {"DRAIN"}, "maintenance by ops"),
      Node("node3", "IDLE"),
      Node("node4", "DOWN", {"NOT_RESPONDING"}, "psu failed"),
      Node("node5", "IDLE", {"DRAIN"}, "clustercert: MTU 1400"),
      Node("node6", "MIXED", {"DRAIN"}, "clustercert: old"),
  };
  const std::vector<DrainAction> actions = PlanDrainActions(verdicts, nodes);
  ASSERT_EQ(actions.size(), 7u);
  EXPECT_EQ(actions[0].kind, DrainActionKind::kResume);
  EXPECT_EQ(actions[1].kind, DrainActionKind::kLeave);
  EXPECT_EQ(actions[2].kind, DrainActionKind::kDrain);
  EXPECT_EQ(actions[2].finding, "MTU 1400");
  EXPECT_EQ(actions[3].kind, DrainActionKind::kLeave);
  EXPECT_EQ(actions[4].kind, DrainActionKind::kLeave);
  EXPECT_EQ(actions[5].kind, DrainActionKind::kDrain);
  EXPECT_EQ(actions[6].kind, DrainActionKind::kLeave);
}

TEST(SlurmDrainTest, AppliesActionsAndCountsRefusals) {
  FakeCommandRunner runner;
  runner.AnswerText("scontrol update NodeName=node3 State=DRAIN Reason=clustercert: MTU 1400", "");
  runner.Answer("scontrol update NodeName=node1 State=RESUME",
                process::CommandResult{1, "", "slurm_update error: Access/permission denied"});
  SlurmClient client(runner, absl::Seconds(5));
  std::vector<std::string> lines;
  const int refused =
      ApplyDrainActions(client,
                        {{"node3", DrainActionKind::kDrain, "MTU 1400", "fails"},
                         {"node1", DrainActionKind::kResume, "", "passes now"},
                         {"node2", DrainActionKind::kLeave, "", "passes; IDLE"}},
                        [&lines](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(refused, 1);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "node3: drained (fails), reason \"clustercert: MTU 1400\"");
  EXPECT_NE(lines[1].find("node1: Slurm refused: "), std::string::npos);
  EXPECT_NE(lines[1].find("Access/permission denied"), std::string::npos);
  EXPECT_EQ(lines[2], "node2: no change (passes; IDLE)");
  EXPECT_EQ(runner.calls().size(), 2u);
}

}  // namespace
}  // namespace clustercert::controller::slurm
