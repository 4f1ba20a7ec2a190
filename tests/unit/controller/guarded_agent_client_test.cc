// NodeHealth and GuardedAgentClient against a scripted agent: a node that
// stops answering costs one call deadline per phase, its later calls are
// answered at once with a sentence naming it, and a stop ends the work in
// flight while the releases are still made, briefly.
#include "controller/client/guarded_agent_client.h"

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

const absl::Time kNoon =
    absl::FromCivil(absl::CivilSecond(2026, 3, 1, 12, 3, 4), absl::UTCTimeZone());

// How the scripted agent answers each call.
enum class Answer { kOk, kSilent, kOwnDeadline, kHold };

// An agent whose every call is recorded (name and deadline) and answered as
// scripted: at once, as a call whose deadline passed unanswered, with the
// agent's own DEADLINE_EXCEEDED, or held until the test releases it.
class ScriptedAgent final : public testing::FakeAgentClient {
 public:
  struct Call {
    std::string name;
    absl::Duration timeout;
  };

  Answer answer = Answer::kOk;
  std::map<std::string, Answer> per_call;  // overrides `answer` for one call name
  std::vector<Call> calls;

  int Count(const std::string& name) const {
    int n = 0;
    for (const Call& call : calls) n += call.name == name ? 1 : 0;
    return n;
  }

 protected:
  absl::Status OnCall(const std::string& name, absl::Duration timeout) override {
    calls.push_back({name, timeout});
    switch (AnswerFor(name)) {
      case Answer::kSilent:
        return MarkNoAnswer(absl::DeadlineExceededError("Deadline Exceeded"));
      case Answer::kOwnDeadline:
        return absl::DeadlineExceededError("peer 10.0.0.3 sent nothing for 30 s");
      case Answer::kOk:
      case Answer::kHold:
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }
  bool Holds(const std::string& name) override { return AnswerFor(name) == Answer::kHold; }

 private:
  Answer AnswerFor(const std::string& name) const {
    auto it = per_call.find(name);
    return it != per_call.end() ? it->second : answer;
  }
};

// Makes one call and keeps its answer.
template <typename Response>
struct Kept {
  bool answered = false;
  absl::StatusOr<Response> result = absl::UnknownError("no answer");
  AgentCallback<Response> Callback() {
    return [this](absl::StatusOr<Response> answer, CallTiming) {
      EXPECT_FALSE(answered) << "answered twice";
      answered = true;
      result = std::move(answer);
    };
  }
};

class GuardedAgentClientTest : public ::testing::Test {
 protected:
  GuardedAgentClientTest()
      : health_(std::make_shared<NodeHealth>([] { return kNoon; })),
        guard_(agent_, "node3", health_, &stop_) {
    health_->BeginPhase("pairwise");
  }

  absl::Status Counters(absl::Duration timeout = absl::Seconds(10)) {
    Kept<v1::ReadPortCountersResponse> kept;
    guard_.ReadPortCounters(v1::ReadPortCountersRequest(), timeout, kept.Callback());
    EXPECT_TRUE(kept.answered);
    return kept.result.status();
  }

  ScriptedAgent agent_;
  RunStop stop_;
  std::shared_ptr<NodeHealth> health_;
  GuardedAgentClient guard_;
};

TEST_F(GuardedAgentClientTest, DeadNodeCostsOneTimedOutCallPerPhase) {
  agent_.answer = Answer::kSilent;
  const absl::Status first = Counters();
  EXPECT_EQ(first.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(first.message(),
            "node3 stopped answering at 12:03:04 UTC (ReadPortCounters deadline 10s); its later "
            "calls in the pairwise phase are not made: check that node-agent is running on node3 "
            "and not stopped (systemctl status clustercert-agent; state T in ps means it was "
            "stopped: kill -CONT it)");
  for (int i = 0; i < 5; ++i) {
    const absl::Status later = Counters();
    EXPECT_EQ(later.code(), absl::StatusCode::kUnavailable);
    EXPECT_TRUE(absl::StartsWith(later.message(),
                                 "node3 stopped answering at 12:03:04 UTC (ReadPortCounters "
                                 "deadline 10s) and is not asked again in the pairwise phase: "
                                 "check that node-agent is running on node3"))
        << later.message();
  }
  Kept<v1::CloseEndpointResponse> close;  // even releases: it cannot answer them
  guard_.CloseEndpoint(v1::CloseEndpointRequest(), absl::Seconds(10), close.Callback());
  EXPECT_FALSE(close.result.ok());
  EXPECT_EQ(agent_.calls.size(), 1u);  // one deadline paid, not seven

  ASSERT_EQ(health_->Stalls().size(), 1u);
  EXPECT_EQ(NodeHealth::Summary(health_->Stalls()[0], "pairwise"),
            "node3 stopped answering at 12:03:04 UTC (ReadPortCounters deadline 10s); its "
            "remaining 6 call(s) in the pairwise phase were not made: check that node-agent is "
            "running on node3 and not stopped (systemctl status clustercert-agent; state T in ps "
            "means it was stopped: kill -CONT it)");

  // The next phase asks it once more (a transient stall costs one call per
  // phase), and again only once.
  health_->BeginPhase("collectives");
  Kept<v1::StartCollectiveResponse> start;
  guard_.StartCollective(v1::StartCollectiveRequest(), absl::Seconds(30), start.Callback());
  Kept<v1::PollCollectiveResponse> poll;
  guard_.PollCollective(v1::PollCollectiveRequest(), absl::Seconds(30), poll.Callback());
  EXPECT_EQ(agent_.Count("StartCollective"), 1);
  EXPECT_EQ(agent_.Count("PollCollective"), 0);
  EXPECT_NE(poll.result.status().message().find("not asked again in the collectives phase"),
            std::string::npos)
      << poll.result.status();
}

TEST_F(GuardedAgentClientTest, AgentsOwnTimeoutsAndShortPollsDoNotCondemnTheNode) {
  // The agent answered (its data plane timed out): it is alive.
  agent_.answer = Answer::kOwnDeadline;
  EXPECT_EQ(Counters().message(), "peer 10.0.0.3 sent nothing for 30 s");
  // A 1 s progress poll that missed proves little on a busy host.
  agent_.answer = Answer::kSilent;
  EXPECT_EQ(Counters(absl::Seconds(1)).message(), "Deadline Exceeded");
  agent_.answer = Answer::kOk;
  EXPECT_TRUE(Counters().ok());
  EXPECT_EQ(agent_.calls.size(), 3u);
  EXPECT_TRUE(health_->Stalls().empty());
  EXPECT_FALSE(health_->Stalled("node3"));
}

TEST_F(GuardedAgentClientTest, ConnectPhaseRetriesItselfAndIsNotJudged) {
  health_->BeginPhase("connect", /*judges=*/false);
  agent_.answer = Answer::kSilent;
  EXPECT_EQ(Counters().message(), "Deadline Exceeded");
  EXPECT_EQ(Counters().message(), "Deadline Exceeded");
  EXPECT_EQ(agent_.calls.size(), 2u);
}

TEST_F(GuardedAgentClientTest, CallsInFlightEndWhenTheNodeIsFoundSilent) {
  agent_.per_call["RunEndpoint"] = Answer::kHold;
  Kept<v1::RunEndpointResponse> run;
  guard_.RunEndpoint(v1::RunEndpointRequest(), absl::Seconds(41), run.Callback());
  EXPECT_FALSE(run.answered);
  agent_.answer = Answer::kSilent;
  EXPECT_FALSE(Counters().ok());
  ASSERT_TRUE(run.answered);  // not after its own 41 s
  EXPECT_NE(run.result.status().message().find("node3 stopped answering"), std::string::npos);
  agent_.held.front()();  // the late answer is dropped, not given twice
}

TEST_F(GuardedAgentClientTest, StopEndsWorkInFlightAndStillReleasesBriefly) {
  agent_.per_call["RunEndpoint"] = Answer::kHold;
  agent_.per_call["PrepareEndpoint"] = Answer::kHold;
  Kept<v1::RunEndpointResponse> run;
  guard_.RunEndpoint(v1::RunEndpointRequest(), absl::Seconds(41), run.Callback());
  Kept<v1::PrepareEndpointResponse> prepare;
  guard_.PrepareEndpoint(v1::PrepareEndpointRequest(), absl::Seconds(10), prepare.Callback());

  ASSERT_TRUE(stop_.Request("SIGINT", kNoon));
  ASSERT_TRUE(run.answered);
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(run.result.status().message(),
            "the run was interrupted by SIGINT before node3 answered RunEndpoint");
  // A prepare in flight is left to answer: its caller must learn what to close.
  EXPECT_FALSE(prepare.answered);
  agent_.held[1]();
  EXPECT_TRUE(prepare.answered);
  EXPECT_TRUE(prepare.result.ok());

  // Nothing new starts; releases are made with a short deadline.
  EXPECT_EQ(Counters().message(),
            "ReadPortCounters to node3 not made: the run was interrupted by SIGINT");
  Kept<v1::CloseEndpointResponse> close;
  guard_.CloseEndpoint(v1::CloseEndpointRequest(), absl::Seconds(10), close.Callback());
  Kept<v1::StopCollectiveResponse> stop_job;
  guard_.StopCollective(v1::StopCollectiveRequest(), absl::Seconds(30), stop_job.Callback());
  EXPECT_TRUE(close.result.ok());
  EXPECT_TRUE(stop_job.result.ok());
  ASSERT_EQ(agent_.calls.size(), 4u);  // run, prepare, close, stop
  EXPECT_EQ(agent_.calls[2].name, "CloseEndpoint");
  EXPECT_EQ(agent_.calls[2].timeout, GuardedAgentClient::kCleanupDeadline);
  EXPECT_EQ(agent_.calls[3].timeout, GuardedAgentClient::kCleanupDeadline);
  EXPECT_FALSE(stop_.Request("SIGTERM", kNoon));  // the first request stands
  EXPECT_EQ(stop_.request()->signal, "SIGINT");
  EXPECT_EQ(stop_.request()->phase, "connect");  // nothing entered a phase here
}

}  // namespace
}  // namespace clustercert::controller
