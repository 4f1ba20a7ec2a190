// The broker's state machine against scripted fake agents: the order of the
// calls, every prepared endpoint closed whatever fails, an end closed at once
// when its peer's run fails, and the events its caller polls progress by.
#include "controller/phases/peer_broker.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every call of both ends, in order, as "server Prepare".
struct CallLog {
  std::vector<std::string> calls;
};

// An agent whose named calls fail; RunEndpoint can be held until the test
// (or a CloseEndpoint of the same end, as the agent's cancel) answers it.
class ScriptedAgent final : public testing::FakeAgentClient {
 public:
  ScriptedAgent(std::string name, CallLog& log) : name_(std::move(name)), log_(log) {}

  std::string failing;  // the call that fails ("PrepareEndpoint"), or ""
  absl::Status failure = absl::UnavailableError("rxe0 is down");  // how it fails
  bool hold_run = false;
  AgentCallback<v1::RunEndpointResponse> held_run;

  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration t,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    if (Refused("PrepareEndpoint", t, done)) return;
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(name_ + "-ep");
    response.mutable_info()->set_address(name_);
    done(response, {});
  }
  void RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration t,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    if (Refused("RunEndpoint", t, done)) return;
    if (hold_run) {
      held_run = std::move(done);
      return;
    }
    v1::RunEndpointResponse response;
    response.mutable_result()->mutable_bandwidth()->set_avg_gbps(9);
    done(response, {});
  }
  void CloseEndpoint(const v1::CloseEndpointRequest& request, absl::Duration t,
                     AgentCallback<v1::CloseEndpointResponse> done) override {
    if (request.endpoint_id().empty()) {
      log_.calls.push_back(name_ + " Close test " + request.test_id());
      done(v1::CloseEndpointResponse(), {});
      return;
    }
    EXPECT_EQ(request.endpoint_id(), name_ + "-ep");
    log_.calls.push_back(name_ + " Close");
    if (held_run) std::exchange(held_run, nullptr)(absl::CancelledError("stopped"), {});
    done(v1::CloseEndpointResponse(), {});
  }

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    std::string step = call;
    step.erase(step.find("Endpoint"));
    log_.calls.push_back(name_ + " " + step);  // CloseEndpoint logs itself
    if (call == failing) return failure;
    return absl::OkStatus();
  }

 private:
  std::string name_;
  CallLog& log_;
};

class PeerBrokerTest : public ::testing::Test {
 protected:
  BrokeredRun Run() {
    return RunBrokeredTest({&server_, "server", {}}, {&client_, "client", {}}, "t1", Deadlines());
  }
  static BrokerDeadlines Deadlines() {
    BrokerDeadlines deadlines;
    deadlines.run = absl::Seconds(5);
    return deadlines;
  }
  CallLog log_;
  ScriptedAgent server_{"server", log_};
  ScriptedAgent client_{"client", log_};
};

TEST_F(PeerBrokerTest, PreparesServerFirstConnectsEachToTheOtherRunsBothThenClosesBoth) {
  BrokeredRun run = Run();
  EXPECT_EQ(run.error, "");
  EXPECT_TRUE(run.has_client_result && run.has_server_result);
  EXPECT_DOUBLE_EQ(run.server_result.bandwidth().avg_gbps(), 9);
  EXPECT_THAT(log_.calls,
              ElementsAre("server Prepare", "client Prepare", "server Connect", "client Connect",
                          "server Run", "client Run", "client Close", "server Close"));
}

TEST_F(PeerBrokerTest, AClientThatCannotPrepareLeavesNoServerEndpointOpen) {
  client_.failing = "PrepareEndpoint";
  BrokeredRun run = Run();
  EXPECT_EQ(run.error, "client prepare: rxe0 is down");
  EXPECT_FALSE(run.has_client_result || run.has_server_result);
  EXPECT_THAT(log_.calls, ElementsAre("server Prepare", "client Prepare", "server Close"));
}

TEST_F(PeerBrokerTest, AFailedConnectNamesTheEndAndRunsNothing) {
  server_.failing = "ConnectEndpoint";
  BrokeredRun run = Run();
  EXPECT_EQ(run.error, "server connect: rxe0 is down");
  EXPECT_FALSE(run.control_plane);  // the agent answered: its data plane failed
  EXPECT_THAT(log_.calls, ElementsAre("server Prepare", "client Prepare", "server Connect",
                                      "client Close", "server Close"));
}

// A prepare whose answer never came may still have made the endpoint: it is
// closed by test id, and the failure is the control plane's, not the link's.
TEST_F(PeerBrokerTest, AnUnansweredPrepareIsClosedByTestIdAndIsTheControlPlanes) {
  client_.failing = "PrepareEndpoint";
  client_.failure = MarkNoAnswer(absl::DeadlineExceededError("Deadline Exceeded"));
  BrokeredRun run = Run();
  EXPECT_EQ(run.error, "client prepare: Deadline Exceeded");
  EXPECT_TRUE(run.control_plane);
  EXPECT_THAT(log_.calls, ElementsAre("server Prepare", "client Prepare", "client Close test t1",
                                      "server Close"));
}

TEST_F(PeerBrokerTest, ABusyAgentIsTheControlPlanesAndNeedsNoCloseByTestId) {
  server_.failing = "PrepareEndpoint";
  server_.failure = absl::ResourceExhaustedError("busy: rxe0 write_bw test 'n7 -> n1'");
  BrokeredRun run = Run();
  EXPECT_TRUE(run.control_plane);
  EXPECT_THAT(log_.calls, ElementsAre("server Prepare"));
}

TEST_F(PeerBrokerTest, AnEndWhoseAgentVanishedMidRunIsTheControlPlanes) {
  client_.failing = "RunEndpoint";
  client_.failure = MarkNoAnswer(absl::UnavailableError("Socket closed"));
  server_.hold_run = true;
  BrokeredRun run = Run();
  EXPECT_THAT(run.error, HasSubstr("client run: Socket closed"));
  EXPECT_TRUE(run.control_plane);
}

// A verbs client whose QP broke answers at once; the server would wait for
// its deadline, so it is closed at once and both failures are named.
TEST_F(PeerBrokerTest, WhenOneRunFailsTheOtherEndIsClosedAtOnce) {
  client_.failing = "RunEndpoint";
  server_.hold_run = true;
  BrokeredRun run = Run();
  EXPECT_THAT(run.error, HasSubstr("client run: rxe0 is down"));
  EXPECT_THAT(run.error, HasSubstr("server run: stopped"));
  EXPECT_EQ(server_.held_run, nullptr);  // answered by the close
  EXPECT_THAT(log_.calls,
              ElementsAre("server Prepare", "client Prepare", "server Connect", "client Connect",
                          "server Run", "client Run", "server Close", "client Close"));
}

TEST_F(PeerBrokerTest, EventsTellWhenBothRunAndWhenTheyAnswered) {
  CallLoop loop;
  std::vector<std::string> events;
  BrokerEvents hooks;
  hooks.running = [&](const std::string& client, const std::string& server) {
    events.push_back("running " + client + " " + server);
  };
  hooks.runs_answered = [&] { events.push_back("answered"); };
  bool finished = false;
  hooks.finished = [&](const BrokeredRun& run) {
    EXPECT_EQ(run.error, "");
    events.push_back("finished");
    finished = true;
  };
  server_.hold_run = true;
  StartBrokeredTest(loop, {&server_, "server", {}}, {&client_, "client", {}}, "t1", Deadlines(),
                    hooks);
  loop.RunUntil([&] { return !events.empty() && server_.held_run != nullptr; });
  EXPECT_THAT(events, ElementsAre("running client-ep server-ep"));
  v1::RunEndpointResponse response;
  std::exchange(server_.held_run, nullptr)(response, {});
  loop.RunUntil([&] { return finished; });
  EXPECT_THAT(events, ElementsAre("running client-ep server-ep", "answered", "finished"));
}

}  // namespace
}  // namespace clustercert::controller
