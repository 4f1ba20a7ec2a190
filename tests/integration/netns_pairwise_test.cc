// Four hosts in network namespaces (management and data on separate
// bridges), a real node-agent in each, the real controller in a fifth: the
// tcp engine's pairwise matrix must fail exactly the pairs touching the host
// whose data link is slowed, and name it.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <thread>

#include "clustercert/v1/certificate.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/controller_output.h"
#include "tests/integration/test_pki.h"
#include "tests/support/environment_skip.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;

const std::string kLab = std::string(CLUSTERCERT_SOURCE_DIR) + "/tests/integration/netns_lab.sh";

class NetnsPairwiseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) SKIP_FOR_ENVIRONMENT("root") << "needs root to create network namespaces";
    prefix_ = "cc" + std::to_string(::getpid() % 100000);
    dir_ = fs::temp_directory_path() / ("clustercert_netns_" + prefix_);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    CommandResult up = RunCommand({"/bin/bash", kLab, "up", prefix_}, (dir_ / "lab").string());
    if (up.exit_code != 0)
      SKIP_FOR_ENVIRONMENT("netns") << "cannot build the namespace lab here: " << up.err;
    // Off loopback the agents serve mutual TLS only (--insecure is loopback-only).
    pki_ = TestPki::Make((dir_ / "pki").string(), {"node1=10.201.1.1", "node2=10.201.1.2",
                                                   "node3=10.201.1.3", "node4=10.201.1.4"});
  }

  void TearDown() override {
    agents_.clear();
    if (prefix_.empty()) return;
    RunCommand({"/bin/bash", kLab, "down", prefix_}, (dir_ / "lab-down").string());
    CommandResult list = RunCommand({"/usr/sbin/ip", "netns", "list"}, (dir_ / "list").string());
    EXPECT_EQ(list.out.find(prefix_ + "-"), std::string::npos) << "namespaces left: " << list.out;
    if (!HasFailure()) fs::remove_all(dir_);
  }

  std::string Ns(const std::string& name) const { return prefix_ + "-" + name; }

  void StartAgents() {
    for (int n = 1; n <= 4; ++n) {
      const std::string name = "node" + std::to_string(n);
      const std::string port_file = (dir_ / (name + ".port")).string();
      std::vector<std::string> argv = {"/usr/sbin/ip",
                                       "netns",
                                       "exec",
                                       Ns("n" + std::to_string(n)),
                                       NODE_AGENT_BIN,
                                       "--listen",
                                       "10.201.1." + std::to_string(n) + ":7070",
                                       "--node-name",
                                       name,
                                       "--port-file",
                                       port_file};
      for (const std::string& flag : pki_.AgentFlags(name)) argv.push_back(flag);
      agents_[name] = std::make_unique<ChildProcess>(argv, (dir_ / name).string());
      for (int i = 0; i < 200 && ReadFile(port_file).empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
      ASSERT_FALSE(ReadFile(port_file).empty()) << name << ": " << agents_[name]->Stderr();
    }
  }

  // The four hosts with their management and data addresses, and how to
  // reach their agents; shared by every plan of this lab.
  std::string NodesAndAgents() const {
    std::string text;
    for (int n = 1; n <= 4; ++n) {
      const std::string i = std::to_string(n);
      text += "  - {name: node" + i + ", agent: \"10.201.1." + i + ":7070\", data_ip: 10.201.2." +
              i + ", gpus: 0}\n";
    }
    return text +
           "expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 250}\n"
           "agents: {" +
           pki_.PlanTls() + ", connect_timeout_s: 2, call_timeout_s: 20, retries: 0}\n";
  }

  std::string WritePlan(double duration_s, const std::string& signing_key = "") {
    std::string plan =
        "cluster: netns-lab\n"
        "fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}\n"
        "nodes:\n";
    plan += NodesAndAgents();
    plan +=
        "pairwise: {engine: tcp, pattern: all-pairs, tests: [write_bw], memory: [host], "
        "duration_s: " +
        std::to_string(duration_s) +
        ", min_fraction_of_line_rate: 0.5}\n"
        "certificate: {out: " +
        (dir_ / "certs").string() +
        (signing_key.empty() ? std::string() : ", signing_key: " + signing_key) + "}\n";
    const fs::path path = dir_ / "plan.yaml";
    std::ofstream(path) << plan;
    return path.string();
  }

  // Gloo sweeps only (no pairwise), ranks bound to the data bridge.
  std::string WriteCollectivesPlan(const std::string& name, double floor) {
    std::string plan =
        "cluster: netns-lab\n"
        "fabric: {type: ethernet, min_netdev_mtu: 1500}\n"
        "nodes:\n";
    plan += NodesAndAgents();
    plan +=
        "collectives: {backend: gloo, transport: tcp, scopes: [2-node, all-nodes], sizes: {min: "
        "1K, max: 256K, factor: 4}, warmup_iters: 1, iters: 4, timeout_s: 120, "
        "min_busbw_gbytes: " +
        std::to_string(floor) +
        "}\n"
        "certificate: {out: " +
        (dir_ / "certs").string() + "}\n";
    const fs::path path = dir_ / name;
    std::ofstream(path) << plan;
    return path.string();
  }

  std::vector<std::string> ControllerArgv(const std::string& plan) const {
    return {"/usr/sbin/ip", "netns", "exec", Ns("ctl"),
            CONTROLLER_BIN, "run",   plan,   "--color=never"};
  }

  std::string prefix_;
  fs::path dir_;
  TestPki pki_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(NetnsPairwiseTest, SlowHostFailsExactlyItsPairsAndIsLocalised) {
  CommandResult slow =
      RunCommand({"/bin/bash", kLab, "slow", prefix_, "3", "100mbit"}, (dir_ / "slow").string());
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  StartAgents();
  CommandResult run = RunCommand(ControllerArgv(WritePlan(1)), (dir_ / "controller").string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);

  int cells = 0;
  for (const auto& pair : certificate.pairs()) {
    if (!pair.retest_of().empty()) continue;
    ++cells;
    const bool touches_node3 = pair.client() == "node3" || pair.server() == "node3";
    EXPECT_TRUE(pair.ok()) << pair.client() << "->" << pair.server() << ": " << pair.error();
    EXPECT_EQ(pair.verdict().status(), touches_node3 ? v1::Finding::fail : v1::Finding::pass)
        << pair.client() << "->" << pair.server() << " " << pair.value() << " Gb/s";
  }
  EXPECT_EQ(cells, 12);  // every ordered pair of 4 nodes: each node sends and receives
  ASSERT_GE(certificate.suspects_size(), 1) << run.out;
  EXPECT_EQ(certificate.suspects(0).node(), "node3") << certificate.suspects(0).reason();
  EXPECT_NE(run.out.find("suspect node3"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("pairwise write_bw host"), std::string::npos) << run.out;  // the matrix
}

// Only what node3 receives is slowed (the switch port's egress towards it):
// the cells where node3 is the server fail, those where it sends pass, and
// the suspect names node3's receive side.
TEST_F(NetnsPairwiseTest, SlowReceivePathIsLocalisedWithItsSide) {
  CommandResult slow =
      RunCommand({"/bin/bash", kLab, "slow-rx", prefix_, "3", "100mbit"}, (dir_ / "slow").string());
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  StartAgents();
  CommandResult run = RunCommand(ControllerArgv(WritePlan(1)), (dir_ / "controller").string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  for (const auto& pair : certificate.pairs()) {
    if (!pair.retest_of().empty()) continue;
    EXPECT_EQ(pair.verdict().status(),
              pair.server() == "node3" ? v1::Finding::fail : v1::Finding::pass)
        << pair.client() << "->" << pair.server() << " " << pair.value() << " Gb/s";
  }
  ASSERT_GE(certificate.suspects_size(), 1) << run.out;
  EXPECT_EQ(certificate.suspects(0).node(), "node3") << certificate.suspects(0).reason();
  EXPECT_EQ(certificate.suspects(0).side(), "receive") << certificate.suspects(0).reason();
  EXPECT_NE(run.out.find("only where node3 receives"), std::string::npos) << run.out;
}

// pairwise.incast over the tcp engine: after a short ring matrix, 2 hosts
// write into each host in turn, the receiver's 2 ends sharing its data
// plane. Only what node3 receives is slowed, so only the round into node3
// misses the aggregate floor; every sender runs in every round.
TEST_F(NetnsPairwiseTest, IncastRoundsIntoEachHostAndTheSlowReceiverFails) {
  CommandResult slow =
      RunCommand({"/bin/bash", kLab, "slow-rx", prefix_, "3", "100mbit"}, (dir_ / "slow").string());
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  StartAgents();
  const std::string plan =
      "cluster: netns-lab\n"
      "fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}\n"
      "nodes:\n" +
      NodesAndAgents() +
      "pairwise: {engine: tcp, pattern: ring, directions: one, tests: [write_bw], memory: [host], "
      "duration_s: 2, min_fraction_of_line_rate: 0.05, incast: {senders: 2, "
      "min_fraction_of_line_rate: 0.5, min_fairness: 0.05}}\n"
      "certificate: {out: " +
      (dir_ / "certs").string() + "}\n";
  const fs::path path = dir_ / "incast.yaml";
  std::ofstream(path) << plan;
  CommandResult run = RunCommand(ControllerArgv(path.string()), (dir_ / "controller").string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);

  ASSERT_EQ(certificate.incast_size(), 4) << run.out;
  std::map<std::string, std::string> bandwidth;  // receiver -> incast.bandwidth status
  std::map<std::string, int> fairness;           // receiver -> incast.fairness findings
  for (const v1::Finding& check : certificate.checks()) {
    if (check.id() == "incast.bandwidth") {
      bandwidth[check.node()] = v1::Finding::Status_Name(check.status());
    }
    if (check.id() == "incast.fairness") ++fairness[check.node()];
  }
  for (const v1::IncastResult& round : certificate.incast()) {
    const std::string& receiver = round.receiver();
    EXPECT_TRUE(round.error().empty()) << receiver << ": " << round.error();
    EXPECT_EQ(round.engine(), "tcp");
    ASSERT_EQ(round.senders_size(), 2) << receiver;
    for (const v1::IncastSender& sender : round.senders()) {
      EXPECT_TRUE(sender.ok()) << sender.node() << " -> " << receiver << ": " << sender.error();
      EXPECT_GT(sender.gbps(), 0) << sender.node() << " -> " << receiver;
      EXPECT_NE(sender.node(), receiver);
    }
    EXPECT_GT(round.aggregate_gbps(), 0) << receiver;
    EXPECT_GT(round.fairness(), 0) << receiver;
    EXPECT_LE(round.fairness(), 1) << receiver;
    EXPECT_DOUBLE_EQ(round.line_rate_gbps(), 1) << receiver;
    EXPECT_EQ(bandwidth[receiver], receiver == "node3" ? "fail" : "pass")
        << receiver << " " << round.aggregate_gbps() << " Gb/s";
    EXPECT_EQ(fairness[receiver], 1) << receiver;
  }
  // The ring after node4 wraps: node4's senders are node1 and node2.
  EXPECT_EQ(certificate.incast(3).receiver(), "node4");
  EXPECT_EQ(certificate.incast(3).senders(0).node(), "node1");
  EXPECT_NE(run.err.find("incast 3/4: node4, node1 -> node3: "), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("incast into node3 from node4, node1"), std::string::npos) << run.out;
  EXPECT_LT(run.seconds, 40) << "the matrix and 4 rounds of 2 s each";
}

// Another fabric behind an L3 router on the data bridge: only node2 was
// given a route to it through data0, so only node2's data plane reaches it;
// isolation.routes and isolation.probe fail there and pass elsewhere. The
// probe target answers with a RST (nothing listens): an answer all the same.
TEST_F(NetnsPairwiseTest, DataPlaneReachingAnotherFabricFailsThatNodeOnly) {
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{"inference", prefix_}, {"leak", prefix_, "2"}}) {
    std::vector<std::string> argv = {"/bin/bash", kLab};
    argv.insert(argv.end(), step.begin(), step.end());
    CommandResult result = RunCommand(argv, (dir_ / step[0]).string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
  }
  StartAgents();
  std::string plan =
      "cluster: netns-lab\n"
      "fabric: {type: ethernet, min_netdev_mtu: 1500}\n"
      "nodes:\n" +
      NodesAndAgents() +
      "other_fabrics: [{name: inference, subnets: [10.202.0.0/24], probe: "
      "[\"10.202.0.10:8000\"]}]\n"
      "certificate: {out: " +
      (dir_ / "certs").string() + "}\n";
  const fs::path path = dir_ / "isolation.yaml";
  std::ofstream(path) << plan;
  CommandResult run = RunCommand(ControllerArgv(path.string()), (dir_ / "controller").string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  int judged = 0;
  for (const v1::Finding& check : certificate.checks()) {
    if (check.id() != "isolation.routes" && check.id() != "isolation.probe") continue;
    ++judged;
    EXPECT_EQ(check.status(), check.node() == "node2" ? v1::Finding::fail : v1::Finding::pass)
        << check.node() << " " << check.id() << ": " << check.message();
    if (check.node() == "node2" && check.id() == "isolation.probe") {
      EXPECT_NE(check.observed().find("data0 reached 10.202.0.10:8000 (inference): refused"),
                std::string::npos)
          << check.observed();
    }
  }
  EXPECT_EQ(judged, 8);
  EXPECT_NE(run.out.find("node2's training data plane reaches another fabric"), std::string::npos)
      << run.out;
}

// A re-certification: a healthy signed run; node3's link slowed (the bad
// cable); diff names node3 and its pairs; the cable "swapped" (shaping
// removed) and only node3 re-run against the slowed baseline: the carried
// cells keep their age, the result verifies, and diff says nothing regressed.
TEST_F(NetnsPairwiseTest, DiffNamesTheSlowedHostAndAPartialRerunClearsIt) {
  const std::string key = (dir_ / "signing.key").string();
  CommandResult keygen =
      RunCommand({CONTROLLER_BIN, "keygen", "--out", key}, (dir_ / "keygen").string());
  ASSERT_EQ(keygen.exit_code, 0) << keygen.err;
  StartAgents();
  const std::string plan = WritePlan(1, key);
  auto certificate_path = [](const CommandResult& run) {
    return CertificatePathFromOutput(run.out);
  };

  CommandResult healthy = RunCommand(ControllerArgv(plan), (dir_ / "healthy").string());
  ASSERT_EQ(healthy.exit_code, 0) << healthy.out << healthy.err;
  CommandResult slow =
      RunCommand({"/bin/bash", kLab, "slow", prefix_, "3", "100mbit"}, (dir_ / "slow").string());
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  CommandResult slowed = RunCommand(ControllerArgv(plan), (dir_ / "slowed").string());
  ASSERT_EQ(slowed.exit_code, 1) << slowed.out << slowed.err;

  CommandResult diff = RunCommand({CONTROLLER_BIN, "diff", certificate_path(healthy),
                                   certificate_path(slowed), "--noise", "0.5", "--color=never"},
                                  (dir_ / "diff").string());
  EXPECT_EQ(diff.exit_code, 1) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("node3 is in 6 of 6 regressed pairs"), std::string::npos) << diff.out;
  for (const char* pair : {"node1->node3", "node2->node3", "node3->node4", "node3->node1",
                           "node3->node2", "node4->node3"}) {
    EXPECT_NE(diff.out.find(std::string("REGRESSION ") + pair), std::string::npos) << pair << "\n"
                                                                                   << diff.out;
  }

  CommandResult fast =
      RunCommand({"/bin/bash", kLab, "fast", prefix_, "3"}, (dir_ / "fast").string());
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  std::vector<std::string> rerun_argv = ControllerArgv(plan);
  for (const std::string& arg : {std::string("--baseline"), certificate_path(slowed),
                                 std::string("--only"), std::string("node3")}) {
    rerun_argv.push_back(arg);
  }
  CommandResult rerun = RunCommand(rerun_argv, (dir_ / "rerun").string());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  v1::Certificate recertified = CertificateFromOutput(rerun.out);
  int carried = 0;
  for (const auto& pair : recertified.pairs()) {
    const bool touches_node3 = pair.client() == "node3" || pair.server() == "node3";
    EXPECT_EQ(pair.has_carried(), !touches_node3) << pair.client() << "->" << pair.server();
    if (pair.has_carried()) {
      ++carried;
      EXPECT_GE(pair.carried().age_s(), 0);
      EXPECT_EQ(pair.carried().from_started_at(), CertificateFromOutput(slowed.out).started_at());
    }
  }
  EXPECT_EQ(carried, 6);  // both directions of the 3 pairs without node3
  ASSERT_EQ(recertified.baseline().only_nodes_size(), 1);
  EXPECT_EQ(recertified.baseline().only_nodes(0), "node3");

  CommandResult verify =
      RunCommand({CONTROLLER_BIN, "verify", certificate_path(rerun), "--pubkey", key + ".pub"},
                 (dir_ / "verify").string());
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("carried over"), std::string::npos) << verify.out;

  CommandResult back = RunCommand({CONTROLLER_BIN, "diff", certificate_path(slowed),
                                   certificate_path(rerun), "--noise", "0.9", "--color=never"},
                                  (dir_ / "diff-back").string());
  EXPECT_EQ(back.exit_code, 0) << back.out << back.err;
}

TEST_F(NetnsPairwiseTest, AgentKilledMidRunFailsOnlyItsPairs) {
  StartAgents();
  ChildProcess controller(ControllerArgv(WritePlan(3)), (dir_ / "controller").string());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // inside round 1
  agents_.erase("node4");  // SIGTERM, then SIGKILL if it lingers
  const int code = controller.Wait(240'000);
  EXPECT_EQ(code, 1) << controller.Stderr();
  const std::string out = controller.Stdout();
  v1::Certificate certificate = CertificateFromOutput(out);
  int node4_cells = 0, others_ok = 0;
  for (const auto& pair : certificate.pairs()) {
    if (!pair.retest_of().empty()) continue;
    if (pair.client() == "node4" || pair.server() == "node4") {
      ++node4_cells;
      if (!pair.ok()) {
        EXPECT_NE(pair.error().find("node4"), std::string::npos) << pair.error();
      }
    } else {
      EXPECT_TRUE(pair.ok()) << pair.client() << "->" << pair.server() << ": " << pair.error();
      others_ok += pair.ok() ? 1 : 0;
    }
  }
  EXPECT_EQ(node4_cells, 6);  // node4 as client and as server
  EXPECT_EQ(others_ok, 6);
  EXPECT_EQ(certificate.verdict(), "not-certified");
}

// The all-nodes gloo sweep crosses node3's slowed link; the 2-node sweep
// (node1, node2) does not. The floor sits at a quarter of the healthy
// all-nodes busbw, measured first in the same lab.
TEST_F(NetnsPairwiseTest, GlooSweepBusbwDropsAcrossSlowHostAndFailsTheFloor) {
  StartAgents();
  CommandResult healthy = RunCommand(ControllerArgv(WriteCollectivesPlan("healthy.yaml", 0.000001)),
                                     (dir_ / "healthy").string());
  ASSERT_EQ(healthy.exit_code, 0) << healthy.out << healthy.err;
  v1::Certificate before = CertificateFromOutput(healthy.out);
  ASSERT_EQ(before.collectives_size(), 2);
  const v1::CollectiveSweep& healthy_all = before.collectives(1);
  ASSERT_EQ(healthy_all.scope(), "all-nodes");
  ASSERT_TRUE(healthy_all.ok()) << healthy_all.error();
  for (const auto& note : healthy_all.notes()) {
    EXPECT_NE(note.find("10.201.2."), std::string::npos) << "ranks bind the data plane: " << note;
  }
  const double healthy_busbw = healthy_all.large_busbw_gbytes();
  ASSERT_GT(healthy_busbw, 0);

  CommandResult slow =
      RunCommand({"/bin/bash", kLab, "slow", prefix_, "3", "20mbit"}, (dir_ / "slow").string());
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  CommandResult run =
      RunCommand(ControllerArgv(WriteCollectivesPlan("slowed.yaml", healthy_busbw / 4)),
                 (dir_ / "slowed").string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate after = CertificateFromOutput(run.out);
  ASSERT_EQ(after.collectives_size(), 2);
  const v1::CollectiveSweep& slowed_all = after.collectives(1);
  EXPECT_TRUE(slowed_all.ok()) << slowed_all.error();
  EXPECT_LT(slowed_all.large_busbw_gbytes(), healthy_busbw / 4)
      << "healthy " << healthy_busbw << " GB/s";
  std::map<std::string, std::string> busbw;
  for (const auto& check : after.checks()) {
    if (check.id() == "collectives.busbw")
      busbw[check.device()] = v1::Finding::Status_Name(check.status());
  }
  EXPECT_EQ(busbw["2-node"], "pass") << "node1<->node2 does not cross node3's link";
  EXPECT_EQ(busbw["all-nodes"], "fail");
  EXPECT_EQ(after.verdict(), "not-certified");
}

}  // namespace
}  // namespace clustercert::testing
