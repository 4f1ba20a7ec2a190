// RunCertification with a node that stops answering after the connect phase
// and with a stop requested mid-phase, against fake agents; and the signal
// watcher that turns SIGINT/SIGTERM into that stop.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/completion.h"
#include "common/version.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/commands/certification_run.h"
#include "controller/commands/interrupt_watcher.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

// What the fleet saw, shared by every fake agent.
struct Fleet {
  std::mutex mutex;
  std::string silent;                   // the node that stops answering after connect
  std::map<std::string, int> calls;     // node -> calls that reached it
  std::map<std::string, int> silences;  // node -> calls it left unanswered
  std::map<std::string, int> open;      // node -> endpoints prepared, not closed
  std::function<void()> on_run;         // runs at each RunEndpoint (the stop)
};

// An agent that answers at once (9 Gb/s), except the fleet's silent node,
// which answers GetVersion and GetInventory and then nothing: each of its
// calls ends as one whose deadline passed unanswered.
class FleetAgent final : public testing::FakeAgentClient {
 public:
  FleetAgent(std::string node, Fleet& fleet) : node_(std::move(node)), fleet_(fleet) {}

  void GetVersion(absl::Duration, AgentCallback<v1::GetVersionResponse> done) override {
    v1::GetVersionResponse version;
    version.set_api_version(kApiVersion);
    version.set_node_name(node_);
    done(version, {});
  }
  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration t,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    if (Refused("PrepareEndpoint", t, done)) return;
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(request.spec().role() + "@" + node_);
    {
      std::lock_guard<std::mutex> lock(fleet_.mutex);
      ++fleet_.open[node_];
    }
    done(response, {});
  }
  void RunEndpoint(const v1::RunEndpointRequest&, absl::Duration t,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    if (Refused("RunEndpoint", t, done)) return;
    if (fleet_.on_run) fleet_.on_run();
    v1::RunEndpointResponse response;
    response.mutable_result()->mutable_bandwidth()->set_avg_gbps(9);
    response.mutable_result()->mutable_bandwidth()->set_seconds(1);
    done(response, {});
  }
  void CloseEndpoint(const v1::CloseEndpointRequest&, absl::Duration t,
                     AgentCallback<v1::CloseEndpointResponse> done) override {
    if (Refused("CloseEndpoint", t, done)) return;
    {
      std::lock_guard<std::mutex> lock(fleet_.mutex);
      --fleet_.open[node_];
    }
    done(v1::CloseEndpointResponse(), {});
  }

 protected:
  // Connect and inventory always answer; collectives are not in this fake;
  // every other call is counted, and the silent node lets it run out.
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    if (call == "GetInventory") return absl::OkStatus();
    if (absl::StrContains(call, "Collective")) {
      return absl::UnimplementedError("no collectives in this fake");
    }
    std::lock_guard<std::mutex> lock(fleet_.mutex);
    ++fleet_.calls[node_];
    if (fleet_.silent != node_) return absl::OkStatus();
    ++fleet_.silences[node_];
    return MarkNoAnswer(absl::DeadlineExceededError("Deadline Exceeded"));
  }

 private:
  std::string node_;
  Fleet& fleet_;
};

class RunInterruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_.cluster = "fake";
    plan_.fabric.type = plan::FabricType::kEthernet;
    plan_.fabric.link_rate_gbps = 10;
    plan_.pairwise.enabled = true;
    plan_.pairwise.engine = plan::PairwiseEngine::kTcp;
    plan_.pairwise.tests = {"write_bw"};
    plan_.pairwise.memory = {"host"};
    plan_.pairwise.duration = absl::Seconds(1);
    plan_.pairwise.min_fraction_of_line_rate = 0.8;
    for (int i = 1; i <= 4; ++i) {
      plan::Node node;
      node.name = "node" + std::to_string(i);
      node.agent = "127.0.0.1:" + std::to_string(7070 + i);
      node.data_ip = "10.0.0." + std::to_string(i);
      plan_.nodes.push_back(node);
      NodeState state;
      state.node = node;
      state.client = std::make_unique<FleetAgent>(node.name, fleet_);
      nodes_.push_back(std::move(state));
    }
  }

  CertificationResult Run(RunStop* stop = nullptr) {
    return RunCertification(plan_, nodes_, progress_, RealClock(), PhaseScope::kAll, nullptr,
                            nullptr, nullptr, stop);
  }

  static const v1::PhaseResult* Phase(const v1::Certificate& certificate, const std::string& name) {
    for (const auto& phase : certificate.phases()) {
      if (phase.name() == name) return &phase;
    }
    return nullptr;
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  Fleet fleet_;
  Progress progress_{stderr, /*quiet=*/true};
};

TEST_F(RunInterruptionTest, NodeSilentAfterConnectCostsOneTimedOutCallInThePhase) {
  fleet_.silent = "node3";
  CertificationResult result = Run();
  // One call to node3 went unanswered; every later one in the phase was not made.
  EXPECT_EQ(fleet_.silences["node3"], 1);
  EXPECT_EQ(fleet_.calls["node3"], 1);  // of the pairwise phase's calls

  const v1::Certificate& certificate = result.certificate;
  EXPECT_EQ(certificate.verdict(), "not-certified");
  int node3_cells = 0;
  for (const auto& pair : certificate.pairs()) {
    const bool touches = pair.client() == "node3" || pair.server() == "node3";
    if (!touches) {
      EXPECT_TRUE(pair.ok()) << pair.error();
      continue;
    }
    EXPECT_FALSE(pair.ok());
    EXPECT_NE(pair.verdict().status(), v1::Finding::pass);
    EXPECT_NE(pair.error().find("node3 stopped answering at "), std::string::npos) << pair.error();
    if (pair.retest_of().empty()) ++node3_cells;
  }
  EXPECT_EQ(node3_cells, 6);
  for (const auto& pair : certificate.pairs()) {
    // A retest never leans on the silent node as the good partner.
    if (!pair.retest_of().empty()) {
      EXPECT_NE(pair.server(), "node3");
    }
  }
  const v1::PhaseResult* pairwise = Phase(certificate, "pairwise");
  ASSERT_NE(pairwise, nullptr);
  EXPECT_EQ(pairwise->status(), v1::PhaseResult::fail);
  EXPECT_NE(pairwise->detail().find("node3 stopped answering at "), std::string::npos);
  EXPECT_NE(pairwise->detail().find("call(s) in the pairwise phase were not made: check that "
                                    "node-agent is running on node3 and not stopped"),
            std::string::npos)
      << pairwise->detail();
  for (const auto& [node, open] : fleet_.open) EXPECT_EQ(open, 0) << node;
  for (auto& state : nodes_) {
    EXPECT_EQ(state.health, nullptr);  // the run's guards are gone with it
    EXPECT_NE(dynamic_cast<FleetAgent*>(state.client.get()), nullptr);
  }
}

TEST_F(RunInterruptionTest, StopMidPairwiseRecordsAnInterruptedNeverCertifiedRun) {
  RunStop stop;
  std::atomic<int> runs{0};
  fleet_.on_run = [&] {
    if (++runs == 5) stop.Request("SIGINT", absl::FromUnixSeconds(1772366584));
  };
  CertificationResult result = Run(&stop);
  const v1::Certificate& certificate = result.certificate;
  ASSERT_TRUE(certificate.has_interrupted());
  EXPECT_EQ(certificate.interrupted().signal(), "SIGINT");
  EXPECT_EQ(certificate.interrupted().phase(), "pairwise");
  EXPECT_EQ(certificate.interrupted().at(), "2026-03-01T12:03:04.000Z");
  EXPECT_EQ(certificate.verdict(), "not-certified");
  ASSERT_GT(certificate.verdict_reasons_size(), 0);
  EXPECT_EQ(certificate.verdict_reasons(0),
            "the run was interrupted by SIGINT at 2026-03-01T12:03:04.000Z during the pairwise "
            "phase: only part of the plan was measured; run it again to completion");
  const v1::PhaseResult* pairwise = Phase(certificate, "pairwise");
  ASSERT_NE(pairwise, nullptr);
  EXPECT_EQ(pairwise->status(), v1::PhaseResult::interrupted);
  EXPECT_TRUE(absl::StartsWith(pairwise->detail(), "interrupted by SIGINT after "))
      << pairwise->detail();
  EXPECT_LT(certificate.pairs_size(), 12);  // no new cell started after the stop
  // Every endpoint prepared was closed again.
  for (const auto& [node, open] : fleet_.open) EXPECT_EQ(open, 0) << node;
  // Phases the plan has no section for keep saying so.
  EXPECT_EQ(Phase(certificate, "collectives")->detail(),
            "skipped: the plan has no collectives section");

  // The verdict stays not-certified whatever the rest says.
  v1::Certificate clean;
  *clean.mutable_interrupted() = certificate.interrupted();
  EXPECT_EQ(VerdictReasons(clean).size(), 1u);
}

TEST_F(RunInterruptionTest, StopBeforeAPhaseSkipsItWithoutACall) {
  RunStop stop;
  plan_.collectives.enabled = true;
  fleet_.on_run = [&] { stop.Request("SIGTERM", absl::Now()); };
  CertificationResult result = Run(&stop);
  const v1::PhaseResult* collectives = Phase(result.certificate, "collectives");
  ASSERT_NE(collectives, nullptr);
  EXPECT_EQ(collectives->status(), v1::PhaseResult::skipped);
  EXPECT_EQ(collectives->detail(),
            "not run: the run was interrupted by SIGTERM during the pairwise phase");
}

// In a child process of its own (a death test): a signal sent to the
// process must find every thread with the signals blocked, as in the
// controller, where the watcher starts before any other thread.
TEST(InterruptWatcherDeathTest, FirstSignalRequestsTheStopAndSetsTheExitCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        RunStop stop;
        Completion requested;
        stop.AddListener([&] { requested.Notify(); });
        stop.EnterPhase("collectives");
        InterruptWatcher watcher(stop, [] { return absl::FromUnixSeconds(1772366584); });
        if (watcher.exit_code() != 0) std::_Exit(1);
        ::kill(::getpid(), SIGTERM);
        requested.WaitFor(absl::Seconds(2));  // the watcher's Request wakes it
        const std::optional<StopRequest> request = stop.request();
        if (!request || request->signal != "SIGTERM" || request->phase != "collectives" ||
            request->at != absl::FromUnixSeconds(1772366584)) {
          std::_Exit(2);
        }
        std::_Exit(watcher.exit_code());
      },
      ::testing::ExitedWithCode(143), "controller: SIGTERM: stopping");
}

TEST(InterruptWatcherDeathTest, SecondSignalExitsAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        RunStop stop;
        Completion requested;
        stop.AddListener([&] { requested.Notify(); });
        InterruptWatcher watcher(stop, [] { return absl::Now(); });
        ::kill(::getpid(), SIGINT);
        requested.WaitFor(absl::Seconds(2));  // the watcher's Request wakes it
        ::kill(::getpid(), SIGINT);
        // The cleanup nobody waits for: never notified, so only the watcher's
        // exit ends this wait (the bound ends a failing test with code 0).
        Completion cleanup_done;
        cleanup_done.WaitFor(absl::Seconds(10));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(130), "second SIGINT: exiting now");
}

}  // namespace
}  // namespace clustercert::controller
