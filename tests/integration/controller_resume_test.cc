// Runs that survive the controller (issue 17, item 4): real node-agents on
// loopback and the real controller. A controller SIGKILLed mid-pairwise is
// resumed from the journal in its output directory: only the cells it had
// not completed are measured, and the certificate holds every cell of an
// uninterrupted run with the same verdicts, the taken-over cells marked and
// the resume recorded. The agents free a killed controller's devices at
// once (its calls are cancelled when its connection closes), so the resume
// is never refused a device.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/journal.pb.h"
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

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// "node1->node2 write_bw host" (+ " retest of ..."): what a cell is.
std::string CellKey(const v1::PairResult& pair) {
  std::string key = pair.client() + "->" + pair.server() + " " + pair.test() + " " + pair.memory();
  if (!pair.retest_of().empty()) key += " retest of " + pair.retest_of();
  return key;
}

std::map<std::string, v1::Finding::Status> Verdicts(const v1::Certificate& certificate) {
  std::map<std::string, v1::Finding::Status> verdicts;
  for (const auto& pair : certificate.pairs()) verdicts[CellKey(pair)] = pair.verdict().status();
  return verdicts;
}

class ControllerResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustercert_resume_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (int n = 1; n <= 4; ++n) {
      ports_.push_back(
          StartLoopbackAgent(agents_, "node" + std::to_string(n), dir_.string(), {"--insecure"}));
    }
  }
  void TearDown() override {
    agents_.clear();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Four loopback nodes and a tcp pair matrix (both directions: 12 cells of
  // `duration_s` each, two at a time); no collectives or uplink.
  std::string WritePlan(const std::string& name, double duration_s) {
    std::string plan =
        "cluster: it-resume\n"
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

  // The run directory the controller named on its "[output]" line, once it
  // has; empty after `timeout_s`.
  static std::string OutputDir(const ChildProcess& controller, double timeout_s) {
    const Clock::time_point start = Clock::now();
    while (SecondsSince(start) < timeout_s) {
      const std::string err = controller.Stderr();
      const size_t at = err.find("[output] ");
      if (at != std::string::npos) {
        const size_t from = at + 9;
        return err.substr(from, err.find(' ', from) - from);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

  // Waits until the journal in `run_dir` holds at least `cells` cells;
  // returns how many it holds then (0 after `timeout_s`).
  static size_t WaitForJournaledCells(const std::string& run_dir, size_t cells, double timeout_s) {
    const Clock::time_point start = Clock::now();
    while (SecondsSince(start) < timeout_s) {
      const size_t held = Count(ReadFile(run_dir + "/journal.jsonl"), "{\"pair\":");
      if (held >= cells) return held;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

  // What the agents logged about endpoints a cancelled call closed.
  std::string AgentLogs() const {
    std::string logs;
    for (const auto& [name, agent] : agents_) logs += agent->Stderr();
    return logs;
  }

  fs::path dir_;
  std::vector<int> ports_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
};

// The "done when": killed mid-pairwise and resumed, the certificate
// equals (cells, verdicts) an uninterrupted run's.
TEST_F(ControllerResumeTest, KilledMidPairwiseAndResumedEqualsAnUninterruptedRun) {
  const std::string plan = WritePlan("plan.yaml", 1);
  CommandResult whole =
      RunCommand({CONTROLLER_BIN, "run", plan, "--color=never"}, (dir_ / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  const v1::Certificate uninterrupted = CertificateFromOutput(whole.out);
  ASSERT_EQ(uninterrupted.pairs_size(), 12);

  auto controller = StartController(plan, "killed");
  const std::string run_dir = OutputDir(*controller, 30);
  ASSERT_FALSE(run_dir.empty()) << controller->Stderr();
  const size_t journaled = WaitForJournaledCells(run_dir, 4, 60);
  ASSERT_EQ(::kill(controller->pid(), SIGKILL), 0);
  controller->Wait(10 * 1000);
  // Some but not all: the rest must be measured by the resume.
  const size_t held = Count(ReadFile(run_dir + "/journal.jsonl"), "{\"pair\":");
  ASSERT_GE(journaled, 4u);
  ASSERT_LT(held, 12u) << "the controller finished before it was killed";
  EXPECT_FALSE(fs::exists(run_dir + "/certificate.json"));

  CommandResult resumed =
      RunCommand({CONTROLLER_BIN, "run", plan, "--resume", run_dir, "--color=never"},
                 (dir_ / "resumed").string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.err.find("[resume] taking over what the run started"), std::string::npos)
      << resumed.err;
  EXPECT_EQ(CertificatePathFromOutput(resumed.out), run_dir + "/certificate.json");
  const v1::Certificate certificate = CertificateFromOutput(resumed.out);

  EXPECT_EQ(Verdicts(certificate), Verdicts(uninterrupted));  // the same cells, the same verdicts
  EXPECT_EQ(certificate.verdict(), uninterrupted.verdict());
  int carried = 0;
  for (const auto& pair : certificate.pairs()) {
    EXPECT_TRUE(pair.ok()) << CellKey(pair) << ": " << pair.error();  // no device refused
    if (!pair.has_carried()) continue;
    ++carried;
    EXPECT_EQ(pair.carried().from_journal(), run_dir + "/journal.jsonl");
  }
  EXPECT_EQ(carried, static_cast<int>(held));
  ASSERT_TRUE(certificate.has_resumed());
  EXPECT_EQ(certificate.resumed().pairs(), static_cast<int>(held));
  EXPECT_EQ(certificate.resumed().journal(), run_dir + "/journal.jsonl");
  EXPECT_FALSE(certificate.resumed().from_started_at().empty());

  // verify recomputes every verdict of the merged matrix.
  CommandResult verify = RunCommand({CONTROLLER_BIN, "verify", run_dir + "/certificate.json"},
                                    (dir_ / "verify").string());
  EXPECT_NE(verify.out.find("recomputed from the recorded values and the embedded plan: all match"),
            std::string::npos)
      << verify.out << verify.err;
  EXPECT_NE(verify.out.find("resumed: " + std::to_string(held) + " pair cell(s)"),
            std::string::npos)
      << verify.out;

  // The resume appended to the same journal; the finished run is not resumed again.
  const std::string journal = ReadFile(run_dir + "/journal.jsonl");
  EXPECT_EQ(Count(journal, "{\"pair\":"), 12u);
  EXPECT_EQ(Count(journal, "{\"resumed_at\":"), 1u);
  CommandResult again =
      RunCommand({CONTROLLER_BIN, "run", plan, "--resume", run_dir}, (dir_ / "again").string());
  EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
  EXPECT_NE(again.err.find("there is nothing to resume"), std::string::npos) << again.err;
}

// A journal is resumed only with the plan that wrote it, and the refusal
// names the file and both digests.
TEST_F(ControllerResumeTest, AnotherPlanOrADirectoryWithoutAJournalIsRefused) {
  const std::string plan = WritePlan("plan.yaml", 1);
  auto controller = StartController(plan, "killed");
  const std::string run_dir = OutputDir(*controller, 30);
  ASSERT_FALSE(run_dir.empty()) << controller->Stderr();
  ASSERT_GE(WaitForJournaledCells(run_dir, 1, 60), 1u);
  ASSERT_EQ(::kill(controller->pid(), SIGKILL), 0);
  controller->Wait(10 * 1000);

  const std::string edited = WritePlan("edited.yaml", 2);
  CommandResult refused =
      RunCommand({CONTROLLER_BIN, "run", edited, "--resume", run_dir}, (dir_ / "refused").string());
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("was made from another plan: its journal " + run_dir +
                             "/journal.jsonl records plan sha256 "),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find(edited + " has sha256 "), std::string::npos) << refused.err;

  CommandResult no_journal = RunCommand({CONTROLLER_BIN, "run", plan, "--resume", dir_.string()},
                                        (dir_ / "no_journal").string());
  EXPECT_EQ(no_journal.exit_code, 2) << no_journal.out << no_journal.err;
  EXPECT_NE(no_journal.err.find("there is no run journal " + (dir_ / "journal.jsonl").string()),
            std::string::npos)
      << no_journal.err;
}

// The issue 34 attack: a journaled cell's value edited (a slow pair made
// 900 Gb/s), and a line copied in from another run's journal. Neither is
// taken over: each is named on a [resume] line and measured again; the
// intact lines are taken over as before.
TEST_F(ControllerResumeTest, AnEditedOrForeignJournalLineIsMeasuredAgain) {
  const std::string plan = WritePlan("plan.yaml", 0.5);
  // Another run of the same plan, whose first cell line is copied over.
  auto other = StartController(plan, "other");
  const std::string other_dir = OutputDir(*other, 30);
  ASSERT_FALSE(other_dir.empty()) << other->Stderr();
  ASSERT_GE(WaitForJournaledCells(other_dir, 1, 60), 1u);
  // SIGTERM, not SIGKILL: that run closes its endpoints before it exits, so
  // the run below is never told a device is busy with it.
  ASSERT_EQ(::kill(other->pid(), SIGTERM), 0);
  other->Wait(10 * 1000);
  std::string foreign;
  {
    std::ifstream in(other_dir + "/journal.jsonl");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("{\"pair\":", 0) == 0) {
        foreign = line;
        break;
      }
    }
  }
  ASSERT_FALSE(foreign.empty());

  auto controller = StartController(plan, "killed");
  const std::string run_dir = OutputDir(*controller, 30);
  ASSERT_FALSE(run_dir.empty()) << controller->Stderr();
  ASSERT_GE(WaitForJournaledCells(run_dir, 3, 60), 3u);
  ASSERT_EQ(::kill(controller->pid(), SIGKILL), 0);
  controller->Wait(10 * 1000);

  // The first measured cell made 900 Gb/s; the foreign line appended. A
  // cell the agents refused as busy (the killed run's endpoints close a
  // moment after its kill) holds no value, and is measured again anyway.
  std::vector<std::string> lines;
  {
    std::ifstream in(run_dir + "/journal.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  const auto measured = [](const std::string& line) {
    return line.rfind("{\"pair\":", 0) == 0 &&
           line.find("\"control_plane\":true") == std::string::npos &&
           line.find("\"value\":") != std::string::npos;
  };
  const auto target = std::find_if(lines.begin(), lines.end(), measured);
  ASSERT_NE(target, lines.end()) << "no measured cell among " << lines.size() << " lines";
  const size_t target_line = static_cast<size_t>(target - lines.begin()) + 1;
  const size_t value = target->find("\"value\":");
  const size_t value_end = target->find(',', value);
  target->replace(value, value_end - value, "\"value\":900");
  v1::PairResult edited;
  {
    const size_t mac = target->rfind(",\"mac\":");
    const std::string record = target->substr(0, mac) + "}";
    v1::JournalRecord parsed;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(record, &parsed).ok()) << record;
    edited = parsed.pair();
  }
  {
    std::ofstream out(run_dir + "/journal.jsonl", std::ios::trunc);
    for (const std::string& line : lines) out << line << "\n";
    out << foreign << "\n";
  }
  // What a resume takes over: the intact cells that were not control-plane
  // failures (those are always measured again).
  const size_t held = static_cast<size_t>(std::count_if(
                          lines.begin(), lines.end(),
                          [](const std::string& line) {
                            return line.rfind("{\"pair\":", 0) == 0 &&
                                   line.find("\"control_plane\":true") == std::string::npos;
                          })) -
                      1;

  CommandResult resumed =
      RunCommand({CONTROLLER_BIN, "run", plan, "--resume", run_dir, "--color=never"},
                 (dir_ / "resumed").string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.err.find("line " + std::to_string(target_line) + " of " + run_dir +
                             "/journal.jsonl is not taken over: its MAC does not match"),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("line " + std::to_string(lines.size() + 1) + " of " + run_dir +
                             "/journal.jsonl is not taken over: its MAC does not match"),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("2 journal line(s) ignored"), std::string::npos) << resumed.err;
  const v1::Certificate certificate = CertificateFromOutput(resumed.out);
  EXPECT_EQ(certificate.resumed().ignored_lines(), 2);
  EXPECT_EQ(certificate.resumed().pairs(), static_cast<int>(held));
  bool found = false;
  for (const auto& pair : certificate.pairs()) {
    if (CellKey(pair) != CellKey(edited)) continue;
    found = true;
    EXPECT_FALSE(pair.has_carried()) << CellKey(pair) << " was taken over from the edited line";
    EXPECT_LT(pair.value(), 900) << CellKey(pair);
  }
  EXPECT_TRUE(found) << CellKey(edited);
}

// A controller killed while a test runs: both agents close their endpoint
// as soon as its connection closes (before issue 17 they held the device
// to the end of the run and for the 60 s lease after it).
TEST_F(ControllerResumeTest, AKilledControllersRunningTestIsFreedAtOnce) {
  auto controller = StartController(WritePlan("plan.yaml", 20), "killed");
  const Clock::time_point start = Clock::now();
  while (controller->Stderr().find("Gb/s now") == std::string::npos && SecondsSince(start) < 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(controller->Stderr().find("Gb/s now"), std::string::npos) << controller->Stderr();
  ASSERT_EQ(::kill(controller->pid(), SIGKILL), 0);
  const Clock::time_point killed = Clock::now();
  const std::string closed = "call was cancelled (its controller";
  while (Count(AgentLogs(), closed) < 2 && SecondsSince(killed) < 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double seconds = SecondsSince(killed);
  controller->Wait(10 * 1000);
  ASSERT_GE(Count(AgentLogs(), closed), 2u) << AgentLogs();
  std::printf("both endpoints of the running test freed %.3f s after SIGKILL\n", seconds);
  EXPECT_LT(seconds, 3.0);  // the test itself had ~19 s left
}

}  // namespace
}  // namespace clustercert::testing
