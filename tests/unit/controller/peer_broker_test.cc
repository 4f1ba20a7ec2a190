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
  uint32_t lease_s = 0;   // the last prepare's
  int busy_prepares = 0;  // this many prepares first find the device busy

  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration t,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    if (Refused("PrepareEndpoint", t, done)) return;
    lease_s = request.lease_s();
    if (busy_prepares > 0) {
      --busy_prepares;
      done(absl::ResourceExhaustedError("busy: tcp 10.0.0.1 is in test 't0'"), {});
      return;
    }
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(name_ + "-ep");
    response.mutable_info()->set_address(name_);
    done(response, {});
  }
  // Each end reports the route to its peer as the agent measured it at
  // connect: 9000 toward a hop that answered 1500.
  void ConnectEndpoint(const v1::ConnectEndpointRequest& request, absl::Duration t,
                       AgentCallback<v1::ConnectEndpointResponse> done) override {
    if (Refused("ConnectEndpoint", t, done)) return;
    v1::ConnectEndpointResponse response;
    response.mutable_path_mtu()->set_peer_address(request.peer().address());
    response.mutable_path_mtu()->set_local_route_mtu(9000);
    response.mutable_path_mtu()->set_route_mtu(1500);
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

// The agent answered, but no longer holds the endpoint (its lease ran out
// while the keep-alives were stuck): the control plane lost it, not the link.
TEST_F(PeerBrokerTest, AnEndpointWhoseLeaseRanOutIsTheControlPlanes) {
  for (const char* step : {"ConnectEndpoint", "RunEndpoint"}) {
    SCOPED_TRACE(step);
    ScriptedAgent server{"server", log_};
    ScriptedAgent client{"client", log_};
    client.failing = step;
    client.failure = absl::NotFoundError(
        "no endpoint client-ep on this agent for this caller: it was closed, or its lease ran "
        "out (the controller took too long between calls)");
    server.hold_run = std::string(step) == "RunEndpoint";
    BrokeredRun run =
        RunBrokeredTest({&server, "server", {}}, {&client, "client", {}}, "t1", Deadlines());
    EXPECT_THAT(run.error, HasSubstr("lease ran out"));
    EXPECT_TRUE(run.control_plane);
  }
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

// Issue 35: a stalled run returns no result, so the path MTU each end
// measured while connecting is what mtu.path judges the cell on.
TEST_F(PeerBrokerTest, AFailedRunKeepsThePathMtuBothEndsMeasuredAtConnect) {
  client_.failing = "RunEndpoint";
  server_.hold_run = true;
  BrokeredRun run = Run();
  EXPECT_FALSE(run.has_client_result || run.has_server_result);
  ASSERT_TRUE(run.client_path_mtu.has_value());
  ASSERT_TRUE(run.server_path_mtu.has_value());
  EXPECT_EQ(run.client_path_mtu->peer_address(), "server");
  EXPECT_EQ(run.client_path_mtu->route_mtu(), 1500u);
  EXPECT_EQ(run.server_path_mtu->peer_address(), "client");
}

TEST_F(PeerBrokerTest, AFailedConnectKeepsOnlyTheEndThatConnected) {
  client_.failing = "ConnectEndpoint";
  BrokeredRun run = Run();
  EXPECT_TRUE(run.server_path_mtu.has_value());
  EXPECT_FALSE(run.client_path_mtu.has_value());
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

// Issue 17: the lease asked for is short, so that a killed controller's
// endpoints go within seconds; the ends a live test waits with are touched
// by its keep-alive. An end whose call is out is not (the agent holds it to
// the call's deadline), and a finished test touches nothing.
TEST_F(PeerBrokerTest, TheKeepAliveTouchesOnlyTheEndsThatWait) {
  CallLoop loop;
  bool finished = false;
  BrokerEvents hooks;
  hooks.finished = [&](const BrokeredRun&) { finished = true; };
  server_.hold_run = true;
  const std::function<void()> keep_alive = StartBrokeredTest(
      loop, {&server_, "server", {}}, {&client_, "client", {}}, "t1", Deadlines(), hooks);
  auto settle = [&loop] {  // runs what is queued so far
    bool marker = false;
    loop.Post([&marker] { marker = true; });
    loop.RunUntil([&marker] { return marker; });
  };
  loop.RunUntil([&] { return server_.held_run != nullptr; });
  settle();  // the client's run has answered; the server's is out
  EXPECT_EQ(server_.lease_s, 10u);
  EXPECT_EQ(client_.lease_s, 10u);
  const size_t before = log_.calls.size();
  keep_alive();
  settle();
  EXPECT_THAT(std::vector<std::string>(log_.calls.begin() + before, log_.calls.end()),
              ElementsAre("client Get"));
  std::exchange(server_.held_run, nullptr)(v1::RunEndpointResponse(), {});
  loop.RunUntil([&] { return finished; });
  const size_t after = log_.calls.size();
  keep_alive();
  settle();
  EXPECT_EQ(log_.calls.size(), after);
}

// A resumed run waits out a device the killed controller left prepared
// (freed when its lease runs out), asking again at each tick; a fresh run
// fails the test at once, as not measured.
TEST_F(PeerBrokerTest, ABusyDeviceIsWaitedForOnlyWhenAskedTo) {
  server_.busy_prepares = 2;
  BrokerDeadlines waiting = Deadlines();
  waiting.busy_wait = absl::Seconds(5);
  const absl::Time start = absl::Now();
  BrokeredRun run =
      RunBrokeredTest({&server_, "server", {}}, {&client_, "client", {}}, "t1", waiting);
  EXPECT_EQ(run.error, "");
  EXPECT_GE(absl::Now() - start, absl::Seconds(1.5));  // two ticks
  EXPECT_THAT(std::vector<std::string>(log_.calls.begin(), log_.calls.begin() + 4),
              ElementsAre("server Prepare", "server Prepare", "server Prepare", "client Prepare"));

  log_.calls.clear();
  server_.busy_prepares = 1;
  run = Run();
  EXPECT_EQ(run.error, "server prepare: busy: tcp 10.0.0.1 is in test 't0'");
  EXPECT_TRUE(run.control_plane);
  EXPECT_THAT(log_.calls, ElementsAre("server Prepare"));
}

}  // namespace
}  // namespace clustercert::controller
