// Gloo sweeps (allreduce, and every other operation) through four real node-agents on loopback: the
// agents start the ranks as worker processes, the controller relays their
// rendezvous, and the certificate carries each scope's sweep and verdicts.
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

class LoopbackCollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_coll_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    agents_.clear();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  int StartAgent(const std::string& name) {
    return StartLoopbackAgent(agents_, name, dir_.string(), {"--insecure"});
  }

  // Four agents; `data_ips` overrides a node's data address.
  std::string Plan(const std::string& collectives, std::map<std::string, std::string> data_ips = {},
                   int gpus = 0) {
    std::string plan =
        "cluster: it-collectives\n"
        "fabric: {type: ethernet, min_netdev_mtu: 1500}\n"
        "nodes:\n";
    for (int n = 1; n <= 4; ++n) {
      const std::string name = "node" + std::to_string(n);
      const int port = StartAgent(name);
      const std::string ip = data_ips.count(name) ? data_ips[name] : "127.0.0.1";
      plan += "  - {name: " + name + ", agent: \"127.0.0.1:" + std::to_string(port) +
              "\", data_ip: " + ip + ", gpus: " + std::to_string(gpus) + "}\n";
    }
    plan +=
        "expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 250, "
        "management_separate: false}\n"
        "agents: {insecure: true, connect_timeout_s: 2, call_timeout_s: 20, retries: 0}\n"
        "collectives: " +
        collectives +
        "\n"
        "certificate: {out: " +
        (dir_ / "certs").string() + "}\n";
    const fs::path path = dir_ / "plan.yaml";
    std::ofstream(path) << plan;
    return path.string();
  }

  CommandResult Controller(const std::string& plan) {
    return RunCommand({CONTROLLER_BIN, "run", plan, "--color=never"},
                      (dir_ / "controller").string());
  }

  static std::map<std::string, std::string> Statuses(const v1::Certificate& certificate) {
    std::map<std::string, std::string> out;
    for (const auto& check : certificate.checks()) {
      if (check.id().rfind("collectives.", 0) == 0) {
        out[check.key()] = v1::Finding::Status_Name(check.status());
      }
    }
    return out;
  }

  fs::path dir_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(LoopbackCollectivesTest, FourAgentsRunEveryScopeAndCertify) {
  CommandResult run = Controller(
      Plan("{backend: gloo, transport: tcp, ranks_per_node: 2, sizes: {min: 8, max: 1M, factor: "
           "4}, warmup_iters: 1, iters: 5, min_busbw_gbytes: 0.001, timeout_s: 60}"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.verdict(), "certified");
  // The 1-node sweep on every node (each node's own bus), then 2-node and all-nodes.
  ASSERT_EQ(certificate.collectives_size(), 6);
  const std::vector<std::pair<std::string, int>> expected = {
      {"1-node", 2}, {"1-node", 2}, {"1-node", 2}, {"1-node", 2}, {"2-node", 4}, {"all-nodes", 8}};
  for (int i = 0; i < 6; ++i) {
    const v1::CollectiveSweep& sweep = certificate.collectives(i);
    EXPECT_EQ(sweep.scope(), expected[i].first);
    EXPECT_EQ(sweep.ranks(), expected[i].second);
    EXPECT_TRUE(sweep.ok()) << sweep.error();
    EXPECT_EQ(sweep.backend(), "gloo");
    EXPECT_EQ(sweep.transport(), "tcp");
    ASSERT_EQ(sweep.rows_size(), 9);  // 8 B .. 512 KiB by x4 (the next, 2 MiB, is past max)
    EXPECT_EQ(sweep.rows(0).bytes(), 8);
    EXPECT_EQ(sweep.rows(8).bytes(), 512 << 10);
    for (const auto& row : sweep.rows()) {
      EXPECT_EQ(row.oop_wrong(), 0);
      EXPECT_EQ(row.ip_wrong(), 0);
      EXPECT_GT(row.oop_time_us(), 0);
    }
    EXPECT_GT(sweep.rows(8).oop_busbw_gbytes(), 0);
    // busbw = algbw * 2(n-1)/n on the recorded figures.
    const double n = sweep.ranks();
    EXPECT_NEAR(sweep.rows(8).oop_busbw_gbytes(),
                sweep.rows(8).oop_algbw_gbytes() * 2 * (n - 1) / n, 1e-9);
    EXPECT_NE(sweep.table().find("#wrong"), std::string::npos);
    int bound = 0;
    for (const auto& note : sweep.notes())
      bound += note.find("transport tcp 127.0.0.1") != std::string::npos;
    EXPECT_EQ(bound, sweep.ranks()) << "every rank binds the data address";
    // What gloo's tcp device says it is, not the echo of the arguments: the
    // loopback interface, the data address, and a pair's bound socket on it.
    ASSERT_EQ(sweep.gloo_devices_size(), sweep.ranks());
    for (const v1::GlooDevice& device : sweep.gloo_devices()) {
      EXPECT_EQ(device.transport(), "tcp") << device.description();
      EXPECT_EQ(device.interface(), "lo") << device.description();
      EXPECT_EQ(device.address(), "127.0.0.1") << device.description();
      EXPECT_EQ(device.bound().rfind("[127.0.0.1]:", 0), 0u) << device.bound();
      EXPECT_EQ(device.asked(), "tcp 127.0.0.1");
    }
  }
  EXPECT_EQ(Statuses(certificate)["collectives.transport@all-nodes"], "pass");
  auto statuses = Statuses(certificate);
  EXPECT_EQ(statuses["collectives.run@all-nodes"], "pass");
  EXPECT_EQ(statuses["collectives.correctness@all-nodes"], "pass");
  EXPECT_EQ(statuses["collectives.busbw@all-nodes"], "pass");
  EXPECT_EQ(statuses["collectives.busbw@node1/1-node"], "skipped");
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(certificate.collectives(i).nodes(0), "node" + std::to_string(i + 1));
    // Every node's intra-node figure against the median: judged, a warning for gloo.
    EXPECT_NE(statuses["collectives.intra_node@node" + std::to_string(i + 1) + "/1-node"], "");
  }
  for (const auto& check : certificate.checks()) {
    if (check.id() == "collectives.intra_node") {
      EXPECT_NE(check.status(), v1::Finding::skipped) << check.message();
      EXPECT_EQ(check.severity(), v1::Finding::warning);
    }
  }
  // Judged (1-node has 2 ranks), but loopback TCP timings are too noisy to
  // expect a pass: gloo over tcp makes it a warning, which never blocks.
  EXPECT_NE(statuses["collectives.scaling@1-node -> 2-node"], "");
  EXPECT_NE(statuses["collectives.scaling@1-node -> 2-node"], "skipped");
  for (const auto& check : certificate.checks()) {
    if (check.id() == "collectives.scaling") {
      EXPECT_EQ(check.severity(), v1::Finding::warning);
    }
  }
  // The sweep is printed the way nccl-tests prints it.
  EXPECT_NE(run.err.find("#       size         count      type   redop    root     time   algbw"),
            std::string::npos)
      << run.err;
}

// collectives.operations: one real gloo sweep per scope per operation through
// the agents, each with nccl-tests' sizes, its own busbw factor, #wrong 0
// and its own verdicts.
TEST_F(LoopbackCollectivesTest, EveryOperationSweepsThroughTheAgents) {
  CommandResult run = Controller(
      Plan("{backend: gloo, transport: tcp, ranks_per_node: 2, scopes: [2-node, all-nodes], "
           "operations: [all_reduce, alltoall, all_gather, reduce_scatter], sizes: {min: 8, "
           "max: 256K, factor: 4}, warmup_iters: 1, iters: 3, min_busbw_gbytes: 0.0001, "
           "timeout_s: 60}"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.verdict(), "certified");
  const std::vector<std::string> operations = {"", "alltoall", "all_gather", "reduce_scatter"};
  ASSERT_EQ(certificate.collectives_size(), 8);
  for (int i = 0; i < 8; ++i) {
    const v1::CollectiveSweep& sweep = certificate.collectives(i);
    SCOPED_TRACE(sweep.scope() + " " + sweep.operation());
    EXPECT_EQ(sweep.scope(), i < 4 ? "2-node" : "all-nodes");
    EXPECT_EQ(sweep.operation(), operations[i % 4]) << "all_reduce is left empty";
    EXPECT_TRUE(sweep.ok()) << sweep.error();
    const bool all_reduce = sweep.operation().empty();
    const double n = sweep.ranks();
    // 8 B .. 128 KiB by x4; the others need 16 bytes a rank: from 128 B.
    ASSERT_EQ(sweep.rows_size(), all_reduce ? 8 : 6);
    EXPECT_EQ(sweep.rows(0).bytes(), all_reduce ? 8 : 128);
    EXPECT_EQ(sweep.rows(0).count(), all_reduce ? 2 : 32 / static_cast<int>(n));
    for (const auto& row : sweep.rows()) {
      EXPECT_EQ(row.oop_wrong(), 0) << row.bytes();
      EXPECT_EQ(row.has_in_place(), sweep.operation() != "alltoall");
      if (row.has_in_place()) EXPECT_EQ(row.ip_wrong(), 0) << row.bytes();
      EXPECT_EQ(row.redop(), all_reduce || sweep.operation() == "reduce_scatter" ? "sum" : "none");
      const double factor = (all_reduce ? 2 : 1) * (n - 1) / n;
      EXPECT_NEAR(row.oop_busbw_gbytes(), row.oop_algbw_gbytes() * factor, 1e-9);
    }
    if (!all_reduce) {
      EXPECT_EQ(
          sweep.table().rfind("# Collective test starting: " + sweep.operation() + "_perf\n", 0),
          0u)
          << sweep.table();
    }
  }
  auto statuses = Statuses(certificate);
  for (const std::string label : {"2-node", "2-node alltoall", "all-nodes all_gather",
                                  "all-nodes reduce_scatter", "all-nodes alltoall"}) {
    EXPECT_EQ(statuses["collectives.run@" + label], "pass") << label;
    EXPECT_EQ(statuses["collectives.correctness@" + label], "pass") << label;
    EXPECT_EQ(statuses["collectives.busbw@" + label], "pass") << label;
  }
  EXPECT_NE(statuses["collectives.scaling@1-node -> 2-node alltoall"], "");
  EXPECT_NE(run.err.find("# Collective test starting: alltoall_perf"), std::string::npos)
      << run.err;
}

TEST_F(LoopbackCollectivesTest, RankThatCannotBindFailsItsScopesNotTheRun) {
  // 192.0.2.1 (TEST-NET-1) is on no interface here: node2's ranks cannot
  // bind it, so every scope with node2 fails, with node2 named; nothing hangs.
  const auto start = std::chrono::steady_clock::now();
  CommandResult run = Controller(
      Plan("{backend: gloo, transport: tcp, sizes: {min: 8, max: 64K, factor: 8}, iters: 2, "
           "timeout_s: 30}",
           {{"node2", "192.0.2.1"}}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(90));
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  // 1-node on each node (node2's own fails too), 2-node (node1, node2), all-nodes.
  ASSERT_EQ(certificate.collectives_size(), 6);
  for (int i : {0, 2, 3}) {
    EXPECT_TRUE(certificate.collectives(i).ok()) << certificate.collectives(i).error();
  }
  for (int i : {1, 4, 5}) {
    const v1::CollectiveSweep& sweep = certificate.collectives(i);
    EXPECT_FALSE(sweep.ok());
    EXPECT_NE(sweep.error().find("node2"), std::string::npos) << sweep.error();
    EXPECT_NE(sweep.error().find("192.0.2.1"), std::string::npos) << sweep.error();
  }
  auto statuses = Statuses(certificate);
  EXPECT_EQ(statuses["collectives.run@node1/1-node"], "pass");
  EXPECT_EQ(statuses["collectives.run@node2/1-node"], "fail");
  EXPECT_EQ(statuses["collectives.run@2-node"], "fail");
  EXPECT_EQ(statuses["collectives.run@all-nodes"], "fail");
  EXPECT_EQ(certificate.verdict(), "not-certified");
}

TEST_F(LoopbackCollectivesTest, NcclWithoutGpusIsSkippedWithAReasonAndNotCertified) {
  CommandResult run = Controller(Plan("{backend: nccl, sizes: {min: 8, max: 1M}}", {}, 1));
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  v1::Certificate certificate = CertificateFromOutput(run.out);
  EXPECT_EQ(certificate.collectives_size(), 0);
  std::string detail;
  for (const auto& phase : certificate.phases()) {
    if (phase.name() == "collectives") {
      EXPECT_EQ(phase.status(), v1::PhaseResult::skipped);
      detail = phase.detail();
    }
  }
  EXPECT_EQ(detail.rfind("skipped: node1 has 0 usable GPU(s)", 0), 0u) << detail;
  EXPECT_NE(detail.find("backend: gloo"), std::string::npos) << detail;
  bool reason = false;
  for (const auto& why : certificate.verdict_reasons()) {
    reason = reason || why.find("collectives phase, which did not run") != std::string::npos;
  }
  EXPECT_TRUE(reason);
}

}  // namespace
}  // namespace clustercert::testing
