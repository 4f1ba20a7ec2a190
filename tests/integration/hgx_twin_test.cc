// The HGX-class twin end to end: four real node-agents on loopback, each with
// --sysfs-root at an 8-GPU, 8-rail HGX H200 tree (tests/fixtures/sysfs/
// hgx-h200-*), and the real `controller run` with an inventory-only 4-node
// RoCE plan. The healthy twin is certified; with node3 replaced by the tree
// whose PCIe switch redirects peer-to-peer, node3's pcie.acs findings are in
// certificate.json and the run exits 1.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>

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

class HgxTwinClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_hgx_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    agents_.clear();  // SIGTERM and reap before the files go
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // node1..node4 on the twin's trees, `node3_tree` in node3's place.
  std::string StartTwin(const std::string& node3_tree) {
    std::string nodes;
    for (int n = 1; n <= 4; ++n) {
      const std::string name = "node" + std::to_string(n);
      const std::string tree = n == 3 ? node3_tree : "hgx-h200-node" + std::to_string(n);
      const int port = StartLoopbackAgent(agents_, name, dir_.string(),
                                          {"--sysfs-root", Fixture(tree), "--insecure"});
      nodes += "  - {name: " + name + ", agent: \"127.0.0.1:" + std::to_string(port) +
               "\", rails: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7], "
               "gpus: 8}\n";
    }
    return nodes;
  }

  // plans/4node-roce.yaml's inventory expectations, no test sections. On
  // loopback the agents' management netdev is lo, which carries no RDMA
  // device, so management_separate holds; the host's clock need not be
  // NTP-disciplined.
  std::string WritePlan(const std::string& nodes) {
    const fs::path path = dir_ / "plan.yaml";
    std::ofstream(path) << "cluster: hgx-twin\n"
                           "fabric:\n"
                           "  type: roce\n"
                           "  link_rate_gbps: 400\n"
                           "  active_mtu: 4096\n"
                           "  min_netdev_mtu: 9000\n"
                           "  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, "
                           "ecn: true}\n"
                           "nodes:\n"
                        << nodes
                        << "expect: {nvidia_peermem: true, pcie: {gen: 5, width: 16}, "
                           "clock_offset_ms: 250, ntp_synced: false, max_gpu_nic_relation: PHB}\n"
                           "agents: {insecure: true, connect_timeout_s: 2, call_timeout_s: 20, "
                           "retries: 1}\n"
                           "certificate: {out: "
                        << (dir_ / "certs").string() << "}\n";
    return path.string();
  }

  CommandResult Run(const std::string& plan) {
    return RunCommand({CONTROLLER_BIN, "run", plan, "--color=never"},
                      (dir_ / "controller").string(), 60);
  }

  fs::path dir_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(HgxTwinClusterTest, HealthyTwinIsCertified) {
  const std::string plan = WritePlan(StartTwin("hgx-h200-node3"));
  CommandResult run = Run(plan);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_LT(run.seconds, 20.0);
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.verdict(), "certified");
  EXPECT_EQ(certificate.findings_size(), 0) << run.out;
  ASSERT_EQ(certificate.nodes_size(), 4);
  for (const auto& node : certificate.nodes()) {
    EXPECT_TRUE(node.reachable()) << node.name();
    EXPECT_EQ(node.inventory().rdma_devices_size(), 8) << node.name();
    EXPECT_EQ(node.inventory().gpu_nic_paths_size(), 64) << node.name();
  }
  // The checks ran on every rail and GPU rather than being skipped.
  std::multiset<std::string> passed;
  for (const auto& check : certificate.checks()) {
    if (check.status() == v1::Finding::pass) passed.insert(check.id());
  }
  EXPECT_EQ(passed.count("port.rate"), 32u);
  EXPECT_EQ(passed.count("topology.gpu_nic"), 32u);
  EXPECT_EQ(passed.count("pcie.acs"), 4u);
  EXPECT_EQ(passed.count("consistency.nic_firmware"), 1u);
}

TEST_F(HgxTwinClusterTest, AcsRedirectOnNode3IsNamedInTheCertificate) {
  const std::string plan = WritePlan(StartTwin("hgx-h200-acs-on"));
  CommandResult run = Run(plan);
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string path = CertificatePathFromOutput(run.out);
  ASSERT_FALSE(path.empty()) << run.out;
  EXPECT_EQ(fs::path(path).filename(), "certificate.json");
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.verdict(), "not-certified");
  std::multiset<std::string> findings;
  for (const auto& f : certificate.findings()) {
    findings.insert(f.id() + " " + f.node() + " " + f.device());
    EXPECT_FALSE(f.remedy().empty()) << f.id();
  }
  EXPECT_EQ(findings, (std::multiset<std::string>{
                          "pcie.acs node3 0000:39:00.0", "pcie.acs node3 0000:39:01.0",
                          "pcie.acs node3 0000:39:02.0", "pcie.acs node3 0000:39:03.0"}))
      << run.out;
  EXPECT_NE(ReadFile(path).find("ReqRedir+ CmpltRedir+"), std::string::npos);
}

}  // namespace
}  // namespace clustercert::testing
