// RunScopeThroughAgents against scripted fake agents: the rendezvous relay,
// rows, and every way a scope can end badly (a crashed rank, a hung rank, an
// agent that stops answering) ends in an error result, never a hang.
#include "controller/collectives/agent_collective_run.h"

#include <map>
#include <mutex>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "sweep/sweep_row.h"
#include "tests/support/fake_agent_client.h"
#include "tests/support/simulated_clock.h"

namespace clustercert::controller {
namespace {

enum class Script { kHealthy, kCrash, kHang, kLost };

struct Fleet {
  std::mutex mutex;
  std::map<std::string, int> stops;                     // node -> StopCollective calls
  std::map<std::string, std::vector<std::string>> got;  // node -> keys delivered
};

class ScriptedAgent final : public testing::FakeAgentClient {
 public:
  ScriptedAgent(std::string node, int rank, Script script, Fleet& fleet)
      : node_(std::move(node)), rank_(rank), script_(script), fleet_(fleet) {}

  void StartCollective(const v1::StartCollectiveRequest& request, absl::Duration,
                       AgentCallback<v1::StartCollectiveResponse> done) override {
    EXPECT_EQ(request.spec().ranks_size(), 1);
    v1::StartCollectiveResponse response;
    response.set_job_id("job@" + node_);
    done(response, {});
  }

  // Healthy: publishes its key on the first poll, then waits until it has
  // every other rank's key, then reports a row and finishes.
  void PollCollective(const v1::PollCollectiveRequest& request, absl::Duration,
                      AgentCallback<v1::PollCollectiveResponse> done) override {
    if (script_ == Script::kLost && polls_ >= 1) {
      done(absl::UnavailableError("connection refused"), {});
      return;
    }
    ++polls_;
    {
      std::lock_guard<std::mutex> lock(fleet_.mutex);
      for (const auto& entry : request.deliveries()) fleet_.got[node_].push_back(entry.key());
      have_ += request.deliveries_size();
    }
    v1::PollCollectiveResponse response;
    v1::CollectiveRankStatus* status = response.add_ranks();
    status->set_rank(rank_);
    status->set_state("running");
    if (polls_ == 1) {
      v1::StoreEntry* entry = response.add_published();
      entry->set_key("rank" + std::to_string(rank_));
      entry->set_value("addr-" + node_);
    }
    if (script_ == Script::kCrash && polls_ >= 2) {
      status->set_state("failed");
      status->set_error("was killed by signal 11 (SIGSEGV)");
      response.set_finished(true);
    } else if (script_ == Script::kHealthy && have_ >= 1 && !finished_) {
      sweep::SweepRow row;
      row.bytes = 1024;
      row.count = 256;
      row.out_of_place = {10.0 * (rank_ + 1), 0, 0, 0};
      row.in_place = {12.0, 0, 0, 0};
      v1::CollectiveRowReport* report = response.add_rows();
      report->set_rank(rank_);
      report->set_line(sweep::EncodeRowLine(row));
      status->set_state("done");
      status->add_notes("transport tcp 10.0.0." + std::to_string(rank_ + 1));
      response.set_finished(true);
      finished_ = true;
    }
    done(response, {});
  }
  void StopCollective(const v1::StopCollectiveRequest&, absl::Duration,
                      AgentCallback<v1::StopCollectiveResponse> done) override {
    {
      std::lock_guard<std::mutex> lock(fleet_.mutex);
      ++fleet_.stops[node_];
    }
    done(v1::StopCollectiveResponse(), {});
  }

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    if (absl::StrContains(call, "Endpoint") || call == "ReadPortCounters") {
      return absl::UnimplementedError("no peer tests here");
    }
    return absl::OkStatus();
  }

 private:
  std::string node_;
  int rank_;
  Script script_;
  Fleet& fleet_;
  int polls_ = 0;
  int have_ = 0;
  bool finished_ = false;
};

struct Scope {
  std::vector<NodeState> states;
  std::vector<v1::CollectiveJobSpec> specs;
  std::vector<NodeState*> pointers;
};

Scope MakeScope(const std::vector<Script>& scripts, Fleet& fleet) {
  Scope scope;
  scope.states.resize(scripts.size());
  for (size_t i = 0; i < scripts.size(); ++i) {
    NodeState& state = scope.states[i];
    state.node.name = "node" + std::to_string(i + 1);
    state.client =
        std::make_unique<ScriptedAgent>(state.node.name, static_cast<int>(i), scripts[i], fleet);
    v1::CollectiveJobSpec spec;
    spec.set_world_size(static_cast<int>(scripts.size()));
    spec.add_ranks()->set_rank(static_cast<int>(i));
    scope.specs.push_back(spec);
  }
  for (auto& state : scope.states) scope.pointers.push_back(&state);
  return scope;
}

// On a simulated clock: the polling, the grace and the deadline take no
// wall time, and what they took is read off the clock.
ScopeRunSettings FastSettings(Clock& clock) {
  ScopeRunSettings settings;
  settings.clock = &clock;
  settings.job_name = "collectives/test";
  settings.job_timeout = absl::Seconds(30);
  settings.call_timeout = absl::Seconds(1);
  settings.poll_interval = absl::Milliseconds(20);
  settings.failure_grace = absl::Seconds(10);
  return settings;
}

TEST(RunScopeThroughAgents, RelaysKeysAndCollectsRows) {
  Fleet fleet;
  ::clustercert::testing::SimulatedClock clock;
  Scope scope = MakeScope({Script::kHealthy, Script::kHealthy, Script::kHealthy}, fleet);
  int streamed = 0;
  ScopeRunResult result = RunScopeThroughAgents(scope.pointers, scope.specs, FastSettings(clock),
                                                [&](const RankRow&) { ++streamed; });
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(streamed, 3);
  EXPECT_EQ(result.notes.size(), 3u);
  // Every node got the other two nodes' keys and not its own.
  for (int i = 1; i <= 3; ++i) {
    const auto& keys = fleet.got["node" + std::to_string(i)];
    EXPECT_EQ(keys.size(), 2u);
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "rank" + std::to_string(i - 1)), 0);
  }
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(fleet.stops["node" + std::to_string(i)], 1);
}

TEST(RunScopeThroughAgents, CrashedRankIsAnErrorAndEveryJobIsStopped) {
  Fleet fleet;
  ::clustercert::testing::SimulatedClock clock;
  Scope scope = MakeScope({Script::kHang, Script::kCrash}, fleet);
  const absl::Time start = clock.Now();
  ScopeRunResult result =
      RunScopeThroughAgents(scope.pointers, scope.specs, FastSettings(clock), {});
  // The hung rank got the failure grace, not the job's deadline.
  EXPECT_GE(clock.Now() - start, absl::Seconds(10));
  EXPECT_LT(clock.Now() - start, absl::Seconds(11));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("node2 rank 1: was killed by signal 11"), std::string::npos)
      << result.error;
  EXPECT_EQ(fleet.stops["node1"], 1);
  EXPECT_EQ(fleet.stops["node2"], 1);
}

TEST(RunScopeThroughAgents, HungRanksEndAtTheDeadline) {
  Fleet fleet;
  ::clustercert::testing::SimulatedClock clock;
  Scope scope = MakeScope({Script::kHang, Script::kHang}, fleet);
  const absl::Time start = clock.Now();
  ScopeRunResult result =
      RunScopeThroughAgents(scope.pointers, scope.specs, FastSettings(clock), {});
  // The controller's own deadline: the job's plus the grace, polled every 20 ms.
  const absl::Duration took = clock.Now() - start;
  EXPECT_GE(took, absl::Seconds(40));
  EXPECT_LT(took, absl::Seconds(40) + absl::Milliseconds(40));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("collectives.timeout_s"), std::string::npos) << result.error;
  EXPECT_EQ(result.rank_errors.size(), 2u);
  EXPECT_EQ(fleet.stops["node1"], 1);
}

TEST(RunScopeThroughAgents, LostAgentEndsTheScope) {
  Fleet fleet;
  ::clustercert::testing::SimulatedClock clock;
  Scope scope = MakeScope({Script::kHang, Script::kLost}, fleet);
  ScopeRunResult result =
      RunScopeThroughAgents(scope.pointers, scope.specs, FastSettings(clock), {});
  EXPECT_FALSE(result.ok);
  bool named = false;
  for (const auto& error : result.rank_errors) {
    named = named || error.find("node2: the agent stopped answering") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace clustercert::controller
