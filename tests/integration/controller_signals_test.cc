// The controller as a tool that stops properly (issue 15, deliverable 9):
// real node-agents on loopback and the real controller. A SIGSTOPped agent
// costs one call deadline per phase, not one per call; SIGINT mid-run ends
// the agents' tests, writes a partial certificate marked interrupted and
// exits 130 within seconds, and the next run is not refused.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "clustercert/v1/certificate.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/child_process.h"
#include "tests/integration/controller_output.h"

namespace clustercert::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class ControllerSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_signals_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (int n = 1; n <= 4; ++n) {
      ports_.push_back(
          StartLoopbackAgent(agents_, "node" + std::to_string(n), dir_.string(), {"--insecure"}));
    }
  }
  void TearDown() override {
    // A stopped agent takes SIGTERM only once it runs again.
    for (auto& [name, agent] : agents_) ::kill(agent->pid(), SIGCONT);
    agents_.clear();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Four loopback nodes and a tcp pair matrix (both directions: 12 cells of
  // `duration_s` each); no collectives or uplink, so the run is the matrix.
  std::string WritePlan(const std::string& name, double duration_s) {
    std::string plan =
        "cluster: it-signals\n"
        "fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}\n"
        "nodes:\n";
    for (int n = 1; n <= 4; ++n) {
      plan += "  - {name: node" + std::to_string(n) +
              ", agent: \"127.0.0.1:" + std::to_string(ports_[n - 1]) +
              "\", data_ip: 127.0.0.1, gpus: 0}\n";
    }
    plan +=
        "expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 250, "
        "management_separate: false}\n"
        "agents: {insecure: true, connect_timeout_s: 2, call_timeout_s: 20, retries: 0}\n"
        "pairwise: {engine: tcp, tests: [write_bw], duration_s: " +
        std::to_string(duration_s) +
        ", min_fraction_of_line_rate: 0.1}\n"
        "certificate: {out: " +
        (dir_ / "certs").string() + "}\n";
    const fs::path path = dir_ / name;
    std::ofstream(path) << plan;
    return path.string();
  }

  std::unique_ptr<ChildProcess> StartController(const std::string& plan, const std::string& log) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{CONTROLLER_BIN, "run", plan, "--color=never"},
        (dir_ / log).string());
  }

  // Waits until the controller's stderr holds `text`; false after `timeout_s`.
  static bool WaitForStderr(const ChildProcess& controller, const std::string& text,
                            double timeout_s) {
    const Clock::time_point start = Clock::now();
    while (SecondsSince(start) < timeout_s) {
      if (controller.Stderr().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  fs::path dir_;
  std::vector<int> ports_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

TEST_F(ControllerSignalsTest, StoppedAgentCostsOneDeadlineAndIsNamed) {
  auto controller = StartController(WritePlan("plan.yaml", 1), "controller");
  ASSERT_TRUE(WaitForStderr(*controller, "round 1/", 30)) << controller->Stderr();
  ASSERT_EQ(::kill(agents_["node3"]->pid(), SIGSTOP), 0);
  const Clock::time_point stopped = Clock::now();
  const int code = controller->Wait(200 * 1000);
  const double seconds = SecondsSince(stopped);
  const std::string out = controller->Stdout();
  const std::string err = controller->Stderr();
  ASSERT_EQ(code, 1) << out << err;
  // node3 is in 6 of the 12 cells (and in retests), each of which asks it at
  // least 3 times (counters, prepare, close) with 10 s deadlines: 180 s and
  // more when every call pays. One deadline (at most a run's, 41 s) is paid.
  EXPECT_LT(seconds, 75.0) << err;
  v1::Certificate certificate = CertificateFromOutput(out);
  EXPECT_EQ(certificate.verdict(), "not-certified");
  int node3_cells = 0;
  for (const auto& pair : certificate.pairs()) {
    if (pair.client() != "node3" && pair.server() != "node3") continue;
    if (!pair.retest_of().empty()) continue;
    ++node3_cells;
    EXPECT_NE(pair.verdict().status(), v1::Finding::pass) << pair.client() << "->" << pair.server();
  }
  EXPECT_EQ(node3_cells, 6);
  std::string pairwise_detail;
  for (const auto& phase : certificate.phases()) {
    if (phase.name() == "pairwise") pairwise_detail = phase.detail();
  }
  EXPECT_NE(pairwise_detail.find("node3 stopped answering at "), std::string::npos)
      << pairwise_detail;
  EXPECT_NE(pairwise_detail.find("check that node-agent is running on node3 and not stopped"),
            std::string::npos)
      << pairwise_detail;
  // One silence is paid for in the phase: one summary, and every later
  // call to node3 was refused at once.
  size_t summaries = 0;
  const std::string summary = "call(s) in the pairwise phase were not made";
  for (size_t at = err.find(summary); at != std::string::npos; at = err.find(summary, at + 1)) {
    ++summaries;
  }
  EXPECT_EQ(summaries, 1u) << err;
  ::kill(agents_["node3"]->pid(), SIGCONT);
}

TEST_F(ControllerSignalsTest, SigintMidRunWritesAnInterruptedCertificateAndFreesTheAgents) {
  const std::string plan = WritePlan("plan.yaml", 3);
  auto controller = StartController(plan, "controller");
  // A live progress line: a bandwidth test is running on two agents.
  ASSERT_TRUE(WaitForStderr(*controller, "Gb/s now", 60)) << controller->Stderr();
  ASSERT_EQ(::kill(controller->pid(), SIGINT), 0);
  const Clock::time_point signalled = Clock::now();
  const int code = controller->Wait(30 * 1000);
  const double seconds = SecondsSince(signalled);
  const std::string out = controller->Stdout();
  const std::string err = controller->Stderr();
  ASSERT_EQ(code, 130) << out << err;
  EXPECT_LT(seconds, 6.0) << err;
  EXPECT_NE(err.find("controller: SIGINT: stopping"), std::string::npos) << err;

  const std::string path = CertificatePathFromOutput(out);
  ASSERT_FALSE(path.empty()) << out;
  ASSERT_TRUE(fs::exists(path));
  for (const char* report : {"report.html", "report.md", "junit.xml"}) {
    EXPECT_TRUE(fs::exists(fs::path(path).parent_path() / report)) << report;
  }
  v1::Certificate certificate = CertificateFromOutput(out);
  ASSERT_TRUE(certificate.has_interrupted()) << out;
  EXPECT_EQ(certificate.interrupted().signal(), "SIGINT");
  EXPECT_EQ(certificate.interrupted().phase(), "pairwise");
  EXPECT_FALSE(certificate.interrupted().at().empty());
  EXPECT_EQ(certificate.verdict(), "not-certified");
  ASSERT_GT(certificate.verdict_reasons_size(), 0);
  EXPECT_EQ(certificate.verdict_reasons(0).rfind("the run was interrupted by SIGINT", 0), 0u)
      << certificate.verdict_reasons(0);
  for (const auto& phase : certificate.phases()) {
    if (phase.name() == "pairwise") {
      EXPECT_EQ(phase.status(), v1::PhaseResult::interrupted) << phase.detail();
    }
  }
  EXPECT_LT(certificate.pairs_size(), 12);  // it stopped before the matrix was done

  // verify recomputes the verdict: an interrupted run claimed certified is refused.
  std::string text = ReadFile(path);
  const std::string from = "\"verdict\": \"not-certified\"";
  ASSERT_NE(text.find(from), std::string::npos) << text.substr(0, 400);
  text.replace(text.find(from), from.size(), "\"verdict\": \"certified\"");
  const fs::path forged = dir_ / "forged.json";
  std::ofstream(forged) << text;
  CommandResult verify =
      RunCommand({CONTROLLER_BIN, "verify", forged.string()}, (dir_ / "verify").string());
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_NE((verify.out + verify.err).find("recorded certified, recomputed not-certified"),
            std::string::npos)
      << verify.out << verify.err;

  // The agents hold nothing: a run right after is not refused a device.
  CommandResult rerun =
      RunCommand({CONTROLLER_BIN, "run", WritePlan("again.yaml", 0.5), "--color=never"},
                 (dir_ / "again").string());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  v1::Certificate again = CertificateFromOutput(rerun.out);
  EXPECT_EQ(again.verdict(), "certified");
  for (const auto& pair : again.pairs()) EXPECT_TRUE(pair.ok()) << pair.error();
}

}  // namespace
}  // namespace clustercert::testing
