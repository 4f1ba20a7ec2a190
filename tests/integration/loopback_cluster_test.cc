// Starts real node-agents on loopback over fixture sysfs roots, runs the real
// controller against a plan, and reads back the certificate it wrote.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "clustercert/v1/certificate.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/controller_output.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) {
  return std::string(CLUSTERCERT_FIXTURES) + "/sysfs/" + name;
}

class LoopbackClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_it_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    agents_.clear();  // SIGTERM and reap before the files go
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Starts an agent on 127.0.0.1 with a kernel-chosen port; returns the port.
  int StartAgent(const std::string& name, const std::string& root,
                 std::vector<std::string> extra = {"--insecure"}) {
    extra.insert(extra.begin(), {"--sysfs-root", root});
    return StartLoopbackAgent(agents_, name, dir_.string(), extra);
  }

  // A port nothing listens on: bound once, then released.
  int DeadPort() {
    const std::string port_file = (dir_ / "dead.port").string();
    ChildProcess agent(
        {NODE_AGENT_BIN, "--listen", "127.0.0.1:0", "--insecure", "--port-file", port_file},
        (dir_ / "dead").string());
    for (int i = 0; i < 200 && ReadFile(port_file).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    int port = std::stoi(ReadFile(port_file));
    agent.Terminate();
    return port;
  }

  std::string WritePlan(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  static std::string NodeLine(const std::string& name, int port) {
    return "  - {name: " + name + ", agent: \"127.0.0.1:" + std::to_string(port) +
           "\", rails: [mlx5_0, mlx5_1], gpus: 4}\n";
  }

  std::string RocePlan(const std::string& nodes, const std::string& agents_extra = "") {
    return "cluster: it-roce\n"
           "fabric:\n"
           "  type: roce\n"
           "  link_rate_gbps: 200\n"
           "  active_mtu: 4096\n"
           "  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}\n"
           "nodes:\n" +
           nodes +
           "expect: {nvidia_peermem: true, pcie: {gen: 4, width: 16}, clock_offset_ms: 250, "
           "ntp_synced: false}\n"
           "agents: {" +
           (agents_extra.empty() ? std::string("insecure: true") : agents_extra) +
           ", connect_timeout_s: 1, call_timeout_s: 10, retries: 1}\n"
           "certificate: {out: " +
           (dir_ / "certs").string() + "}\n";
  }

  CommandResult Controller(std::vector<std::string> args) {
    args.insert(args.begin(), CONTROLLER_BIN);
    args.push_back("--color=never");
    return RunCommand(args, (dir_ / "controller").string());
  }

  static std::multiset<std::string> FindingIds(const v1::Certificate& c, const std::string& node) {
    std::multiset<std::string> ids;
    for (const auto& f : c.findings()) {
      if (f.node() == node) ids.insert(f.id());
    }
    return ids;
  }

  fs::path dir_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(LoopbackClusterTest, FourHealthyAgentsAreCertified) {
  std::string nodes;
  for (int i = 1; i <= 4; ++i) {
    const std::string name = "node" + std::to_string(i);
    nodes += NodeLine(name, StartAgent(name, Fixture("roce-healthy")));
  }
  const std::string plan = WritePlan("plan.yaml", RocePlan(nodes));
  CommandResult run = Controller({"run", plan});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.verdict(), "certified");
  EXPECT_EQ(certificate.cluster(), "it-roce");
  EXPECT_EQ(certificate.plan_sha256().size(), 64u);
  ASSERT_EQ(certificate.nodes_size(), 4);
  for (const auto& node : certificate.nodes()) {
    EXPECT_TRUE(node.reachable()) << node.name();
    EXPECT_EQ(node.inventory().rdma_devices_size(), 2) << node.name();
    EXPECT_EQ(node.inventory().management_netdev(), "lo") << node.name();
  }
  EXPECT_EQ(certificate.findings_size(), 0) << run.out;
  EXPECT_GT(certificate.checks_size(), 40);
  // The per-node table lists only what is not a pass or skip, with a count:
  // a healthy node is its title line.
  EXPECT_NE(run.out.find(" passed, "), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("port.rate"), std::string::npos) << run.out;
}

TEST_F(LoopbackClusterTest, BrokenNodeIsNamedWithEachFaultAndRemedy) {
  std::string nodes = NodeLine("node1", StartAgent("node1", Fixture("roce-healthy")));
  nodes += NodeLine("node2", StartAgent("node2", Fixture("roce-broken")));
  const std::string plan = WritePlan("plan.yaml", RocePlan(nodes));
  CommandResult run = Controller({"run", plan});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.verdict(), "not-certified");
  EXPECT_TRUE(FindingIds(certificate, "node1").empty());
  EXPECT_EQ(FindingIds(certificate, "node2"),
            (std::multiset<std::string>{"port.rate", "mtu.netdev", "mtu.active", "qos.pfc",
                                        "gpudirect.peermem", "pcie.nic", "pcie.nic"}));
  for (const auto& f : certificate.findings()) {
    EXPECT_FALSE(f.remedy().empty()) << f.id();
    EXPECT_NE(run.out.find(f.remedy()), std::string::npos) << f.id() << " remedy not printed";
  }
  EXPECT_NE(run.out.find("100 Gb/s"), std::string::npos);
}

TEST_F(LoopbackClusterTest, UnreachableNodeFailsAloneWithinTheDeadline) {
  std::string nodes;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "node" + std::to_string(i);
    nodes += NodeLine(name, StartAgent(name, Fixture("roce-healthy")));
  }
  nodes += NodeLine("node4", DeadPort());
  const std::string plan = WritePlan("plan.yaml", RocePlan(nodes));
  CommandResult run = Controller({"run", plan});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_LT(run.seconds, 15.0);
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(FindingIds(certificate, "node4"), (std::multiset<std::string>{"connect.reachable"}));
  for (const char* healthy : {"node1", "node2", "node3"}) {
    EXPECT_TRUE(FindingIds(certificate, healthy).empty()) << healthy;
  }
  EXPECT_FALSE(certificate.nodes(3).reachable());
  EXPECT_NE(certificate.nodes(3).error().find("did not answer"), std::string::npos);
  EXPECT_EQ(certificate.nodes(0).inventory().rdma_devices_size(), 2);
}

TEST_F(LoopbackClusterTest, NoReachableAgentExitsThree) {
  const std::string plan = WritePlan("plan.yaml", RocePlan(NodeLine("node1", DeadPort())));
  CommandResult run = Controller({"run", plan});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
}

TEST_F(LoopbackClusterTest, MalformedPlanExitsTwoAndNamesTheLine) {
  const std::string plan = WritePlan("bad.yaml",
                                     "cluster: it\n"
                                     "fabric: {type: roce, link_rate_gbps: -200}\n"
                                     "nodes: []\n");
  CommandResult run = Controller({"run", plan});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("bad.yaml:2:"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "certs"));
}

TEST_F(LoopbackClusterTest, MutualTlsAgentsAnswerAndPlaintextIsRefused) {
  const fs::path pki = dir_ / "pki";
  CommandResult made =
      RunCommand({"/bin/bash", std::string(CLUSTERCERT_SOURCE_DIR) + "/deploy/pki.sh", pki.string(),
                  "node1=127.0.0.1"},
                 (dir_ / "pki").string());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const int port =
      StartAgent("node1", Fixture("roce-healthy"),
                 {"--tls-cert", (pki / "node1.pem").string(), "--tls-key",
                  (pki / "node1.key").string(), "--tls-ca", (pki / "ca.pem").string()});
  const std::string tls = "tls: {ca: " + (pki / "ca.pem").string() +
                          ", cert: " + (pki / "controller.pem").string() +
                          ", key: " + (pki / "controller.key").string() + "}";
  CommandResult secure =
      Controller({"inventory", WritePlan("tls.yaml", RocePlan(NodeLine("node1", port), tls))});
  EXPECT_EQ(secure.exit_code, 0) << secure.out << secure.err;

  CommandResult plaintext =
      Controller({"inventory", WritePlan("plain.yaml", RocePlan(NodeLine("node1", port)))});
  EXPECT_EQ(plaintext.exit_code, 3) << plaintext.out << plaintext.err;
}

TEST_F(LoopbackClusterTest, AgentStopsCleanlyOnSigterm) {
  StartAgent("node1", Fixture("no-rdma"));
  EXPECT_EQ(agents_["node1"]->Terminate(), 0) << agents_["node1"]->Stderr();
  EXPECT_NE(agents_["node1"]->Stderr().find("stopped"), std::string::npos);
}

}  // namespace
}  // namespace clustercert::testing
