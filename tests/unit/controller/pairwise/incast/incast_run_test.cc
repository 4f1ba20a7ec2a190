// The incast runner over the async client: a round's k tests run at once
// into the receiver, whose ends share one group; the counters of every end
// are read around the whole round; a failed sender or an unreachable end
// is recorded as such; the phase carries a baseline's rounds in a partial
// re-certification and says why it could not run.
#include "controller/pairwise/incast/incast_run.h"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/pairwise/incast/incast_phase.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What every fake saw.
struct Trace {
  std::vector<v1::PrepareEndpointRequest> prepares;
  std::vector<std::string> prepared_on;  // the node of each prepare
  std::vector<std::string> calls;        // "node2 RunEndpoint"
  std::vector<std::thread::id> threads;
};

// A node-agent whose client ends report `gbps` (an RDMA write's sender
// measures it; the passive receiver counts nothing), and whose port shows
// 1 GB more on priority 3 each way and `discards` more rx_discards_phy at
// each counter read. RunEndpoint fails with `run_error`, or is held.
class IncastAgent final : public testing::FakeAgentClient {
 public:
  IncastAgent(std::string node, Trace& trace) : node_(std::move(node)), trace_(trace) {}

  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration t,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    if (Refused("PrepareEndpoint", t, done)) return;
    trace_.prepares.push_back(request);
    trace_.prepared_on.push_back(node_);
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(absl::StrCat(request.spec().role(), "@", node_, "#", ++endpoints_));
    roles_[response.endpoint_id()] = request.spec().role();
    done(response, {});
  }
  void RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration t,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    if (Refused("RunEndpoint", t, done)) return;
    if (!run_error.ok()) return done(run_error, {});
    v1::RunEndpointResponse response;
    if (roles_[request.endpoint_id()] == "client") {
      response.mutable_result()->mutable_bandwidth()->set_avg_gbps(gbps);
    }
    if (hold_runs) {
      held.push_back([done, response] { done(response, {}); });
      return;
    }
    done(response, {});
  }
  void ReadPortCounters(const v1::ReadPortCountersRequest& request, absl::Duration t,
                        AgentCallback<v1::ReadPortCountersResponse> done) override {
    if (Refused("ReadPortCounters", t, done)) return;
    ++reads_;
    v1::ReadPortCountersResponse response;
    v1::PortCounters& counters = *response.mutable_counters();
    counters.set_device(request.device());
    auto add = [&](const char* name, uint64_t value) {
      v1::CounterValue* counter = counters.add_values();
      counter->set_name(name);
      counter->set_source("ethtool");
      counter->set_value(value);
    };
    add("rx_prio3_bytes", reads_ * 1'000'000'000ULL);
    add("tx_prio3_bytes", reads_ * 1'000'000'000ULL);
    add("rx_discards_phy", reads_ * discards);
    done(response, {});
  }

  double gbps = 30;
  uint64_t discards = 0;
  absl::Status run_error;
  bool hold_runs = false;

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    trace_.calls.push_back(node_ + " " + call);
    trace_.threads.push_back(std::this_thread::get_id());
    return absl::OkStatus();
  }

 private:
  std::string node_;
  Trace& trace_;
  int endpoints_ = 0;
  uint64_t reads_ = 0;
  std::map<std::string, std::string> roles_;
};

class IncastRunTest : public ::testing::Test {
 protected:
  // `count` reachable nodes, each with rail mlx5_0 and a data address, on a
  // lossless RoCE plan (traffic class 106) at 100 Gb/s.
  void MakeNodes(int count) {
    plan_.fabric.type = plan::FabricType::kRoce;
    plan_.fabric.link_rate_gbps = 100;
    plan_.pairwise.engine = plan::PairwiseEngine::kVerbs;
    plan_.pairwise.duration = absl::Seconds(1);
    plan_.pairwise.incast.enabled = true;
    plan_.pairwise.incast.senders = 3;
    for (int i = 0; i < count; ++i) {
      plan::Node node;
      node.name = absl::StrCat("node", i + 1);
      node.data_ip = absl::StrCat("10.0.0.", i + 1);
      node.rails = {"mlx5_0"};
      plan_.nodes.push_back(node);
      NodeState state;
      state.node = node;
      state.reachable = true;
      state.client = std::make_unique<IncastAgent>(node.name, trace_);
      nodes_.push_back(std::move(state));
    }
  }
  IncastAgent& Agent(int node) { return static_cast<IncastAgent&>(*nodes_[node].client); }
  Side SideOf(int node) {
    Side side;
    side.state = &nodes_[node];
    side.device = "mlx5_0";
    return side;
  }
  // node1 receives from node2, node3, node4.
  IncastJob Job() {
    IncastJob job;
    job.receiver = SideOf(0);
    for (int sender : {1, 2, 3}) job.senders.push_back(SideOf(sender));
    job.line_rate_gbps = 100;
    job.round = 1;
    job.rounds = 1;
    return job;
  }
  v1::IncastResult RunOne(const IncastJob& job) {
    CallLoop loop;
    std::optional<v1::IncastResult> finished;
    auto run = std::make_shared<IncastRun>(loop, plan_, job,
                                           [&](v1::IncastResult round) { finished = round; });
    loop.Post([run] { run->Start(); });
    loop.RunUntil([&] { return finished.has_value(); });
    return *finished;
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  Trace trace_;
  Progress quiet_{stderr, /*quiet=*/true};
};

TEST_F(IncastRunTest, TheSendersWriteIntoTheReceiverAtOnceInOneShareGroup) {
  MakeNodes(4);
  for (int node : {0, 1, 2, 3}) Agent(node).hold_runs = true;
  Agent(1).gbps = 30;
  Agent(2).gbps = 31;
  Agent(3).gbps = 29;
  CallLoop loop;
  std::optional<v1::IncastResult> finished;
  const IncastJob job = Job();
  auto run = std::make_shared<IncastRun>(loop, plan_, job,
                                         [&](v1::IncastResult round) { finished = round; });
  loop.Post([run] { run->Start(); });
  // Every sender's run and the receiver's three are out together: at once.
  auto held = [&] {
    size_t out = 0;
    for (int node : {0, 1, 2, 3}) out += Agent(node).held.size();
    return out;
  };
  loop.RunUntil([&] { return held() == 6; });
  EXPECT_EQ(Agent(0).held.size(), 3u);
  run->KeepAlive();  // the tick while they run: no run is disturbed
  for (int node : {0, 1, 2, 3}) {
    for (auto& answer : Agent(node).held) answer();
    Agent(node).held.clear();
  }
  loop.RunUntil([&] { return finished.has_value(); });

  ASSERT_EQ(trace_.prepares.size(), 6u);
  const std::string group = IncastShareGroup(job);
  EXPECT_EQ(group, "incast-1");  // in the agent's group alphabet
  for (size_t i = 0; i < trace_.prepares.size(); ++i) {
    const v1::PrepareEndpointRequest& prepare = trace_.prepares[i];
    const bool receiver = trace_.prepared_on[i] == "node1";
    EXPECT_EQ(prepare.spec().role(), receiver ? "server" : "client") << trace_.prepared_on[i];
    EXPECT_EQ(prepare.share_group(), receiver ? group : "") << trace_.prepared_on[i];
    EXPECT_EQ(prepare.spec().test(), "write_bw");
    EXPECT_EQ(prepare.spec().memory(), "host");
    EXPECT_EQ(prepare.spec().device(), "mlx5_0");
    EXPECT_EQ(prepare.spec().traffic_class(), 106u);  // DSCP 26, ECT(0)
  }
  for (const auto& id : trace_.threads) EXPECT_EQ(id, std::this_thread::get_id());

  const v1::IncastResult& round = *finished;
  EXPECT_EQ(round.receiver(), "node1");
  EXPECT_EQ(round.rail(), "mlx5_0");
  EXPECT_EQ(round.engine(), "verbs");
  EXPECT_EQ(round.test(), "write_bw");
  EXPECT_EQ(round.traffic_class(), 106u);
  EXPECT_FALSE(round.has_service_level());
  EXPECT_TRUE(round.error().empty()) << round.error();
  ASSERT_EQ(round.senders_size(), 3);
  std::vector<std::string> names;
  for (const auto& sender : round.senders()) {
    names.push_back(sender.node());
    EXPECT_TRUE(sender.ok()) << sender.error();
    EXPECT_EQ(sender.rail(), "mlx5_0");
    ASSERT_EQ(sender.counters_size(), 2) << sender.node();  // the two prio3 byte counters
  }
  EXPECT_THAT(names, ElementsAre("node2", "node3", "node4"));
  EXPECT_DOUBLE_EQ(round.senders(1).gbps(), 31);
  EXPECT_DOUBLE_EQ(round.aggregate_gbps(), 90);
  EXPECT_DOUBLE_EQ(round.fairness(), 29.0 / 31.0);
  EXPECT_DOUBLE_EQ(round.line_rate_gbps(), 100);
  // One read before and one after the whole round, not one per test.
  ASSERT_EQ(round.receiver_counters_size(), 2);
  EXPECT_EQ(round.receiver_counters(0).name(), "rx_prio3_bytes");
  EXPECT_EQ(round.receiver_counters(0).delta(), 1'000'000'000u);
}

TEST_F(IncastRunTest, AnUnreachableEndMakesAnErrorRoundThatCallsNoAgent) {
  MakeNodes(4);
  nodes_[2].reachable = false;
  const v1::IncastResult round = RunOne(Job());
  EXPECT_EQ(round.error(), "node3 is unreachable");
  EXPECT_TRUE(trace_.calls.empty());
  ASSERT_EQ(round.senders_size(), 3);
  for (const auto& sender : round.senders()) EXPECT_FALSE(sender.ok());
  EXPECT_EQ(round.aggregate_gbps(), 0);
  EXPECT_EQ(round.fairness(), 0);
}

TEST_F(IncastRunTest, ATcpEndWithoutADataAddressIsAnErrorRound) {
  MakeNodes(4);
  plan_.pairwise.engine = plan::PairwiseEngine::kTcp;
  nodes_[0].node.data_ip.clear();
  const v1::IncastResult round = RunOne(Job());
  EXPECT_THAT(round.error(), HasSubstr("node1 has no data_ip in the plan"));
  EXPECT_TRUE(trace_.calls.empty());
}

TEST_F(IncastRunTest, AFailedSenderIsRecordedAndTheOthersKeepTheirFigures) {
  MakeNodes(4);
  Agent(2).run_error = absl::InternalError("the QP went to the error state (retry exceeded)");
  const v1::IncastResult round = RunOne(Job());
  EXPECT_TRUE(round.error().empty());
  ASSERT_EQ(round.senders_size(), 3);
  const v1::IncastSender& failed = round.senders(1);
  EXPECT_EQ(failed.node(), "node3");
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.error(), HasSubstr("node3 run: the QP went to the error state"));
  EXPECT_FALSE(failed.control_plane());
  EXPECT_TRUE(round.senders(0).ok());
  EXPECT_TRUE(round.senders(2).ok());
  EXPECT_DOUBLE_EQ(round.aggregate_gbps(), 60);
  EXPECT_EQ(round.fairness(), 0);  // a failed sender counts 0
}

TEST_F(IncastRunTest, ASilentSendersFailureIsTheControlPlanes) {
  MakeNodes(4);
  Agent(3).run_error = MarkNoAnswer(absl::DeadlineExceededError("Deadline Exceeded"));
  const v1::IncastResult round = RunOne(Job());
  ASSERT_EQ(round.senders_size(), 3);
  EXPECT_FALSE(round.senders(2).ok());
  EXPECT_TRUE(round.senders(2).control_plane());
}

TEST_F(IncastRunTest, EachRoundIsJudgedAndToldOnOneLine) {
  MakeNodes(4);
  Agent(0).discards = 7;  // the receiver drops under incast
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  IncastRoundsOutcome outcome;
  {
    Progress progress(out, /*quiet=*/false, /*tty=*/false, nullptr);
    outcome = RunIncastRounds(plan_, progress, {Job()}, [] { return false; });
  }
  std::fclose(out);
  const std::string lines(text, size);
  std::free(text);
  EXPECT_THAT(lines, HasSubstr("incast 1/1: node2, node3, node4 -> node1 mlx5_0: 90.0 Gb/s of "
                               "100 (90 %), fairness 1.00"));
  ASSERT_EQ(outcome.rounds.size(), 1u);
  std::map<std::string, v1::Finding::Status> status;
  for (const auto& finding : outcome.checks) status[finding.id()] = finding.status();
  EXPECT_EQ(status["incast.bandwidth"], v1::Finding::pass);
  EXPECT_EQ(status["incast.fairness"], v1::Finding::pass);
  // The receiver's counters judged as the receiving end, the senders' as
  // the sending ends: both on the planned priority; the drop is caught.
  EXPECT_EQ(status["lossless.priority"], v1::Finding::pass);
  EXPECT_EQ(status["lossless.drops"], v1::Finding::fail);
}

TEST_F(IncastRunTest, AStopStartsNoFurtherRound) {
  MakeNodes(4);
  IncastJob second = Job();
  second.receiver = SideOf(1);
  second.senders = {SideOf(2), SideOf(3), SideOf(0)};
  second.round = 2;
  int asked = 0;
  const IncastRoundsOutcome outcome = RunIncastRounds(plan_, quiet_, {Job(), second}, [&] {
    return asked++ > 0;  // asked before each round: stop once the first began
  });
  ASSERT_EQ(outcome.rounds.size(), 1u);
  EXPECT_EQ(outcome.rounds[0].receiver(), "node1");
}

TEST_F(IncastRunTest, TheProgressLineNamesAnErrorOrTheFailedSenders) {
  v1::IncastResult round;
  round.set_receiver("node2");
  round.set_round(2);
  round.add_senders()->set_node("node3");
  round.set_error("node3 is unreachable");
  EXPECT_EQ(IncastRoundLine(round, 4), "incast 2/4: node3 -> node2: error: node3 is unreachable");
  round.clear_error();
  round.mutable_senders(0)->set_error("node3 run: reset by peer");
  round.set_line_rate_gbps(0);
  EXPECT_EQ(IncastRoundLine(round, 4),
            "incast 2/4: node3 -> node2: 0.0 Gb/s (line rate unknown), fairness 0.00; node3 "
            "failed: node3 run: reset by peer");
}

// The phase over a plan: its schedule, the sides from the plan's nodes.
class IncastPhaseTest : public IncastRunTest {
 protected:
  void SetUp() override {
    MakeNodes(3);
    plan_.pairwise.engine = plan::PairwiseEngine::kTcp;
    plan_.fabric.type = plan::FabricType::kEthernet;
    plan_.fabric.link_rate_gbps = 10;
    plan_.pairwise.incast.senders = 1;
    plan_.pairwise.incast.min_fraction_of_line_rate = 0.5;
  }
};

TEST_F(IncastPhaseTest, EveryReceiverInTurnWithTheTcpEngine) {
  for (int node : {0, 1, 2}) Agent(node).gbps = 9;
  const IncastOutcome outcome = RunIncastPhase(nodes_, plan_, quiet_);
  EXPECT_TRUE(outcome.skipped.empty()) << outcome.skipped;
  ASSERT_EQ(outcome.rounds.size(), 3u);
  EXPECT_EQ(outcome.rounds[2].receiver(), "node3");
  ASSERT_EQ(outcome.rounds[2].senders_size(), 1);
  EXPECT_EQ(outcome.rounds[2].senders(0).node(), "node1");
  EXPECT_EQ(outcome.rounds[2].round(), 3u);
  EXPECT_EQ(outcome.rounds[2].engine(), "tcp");
  EXPECT_TRUE(outcome.rounds[2].rail().empty());
  EXPECT_FALSE(outcome.rounds[2].has_traffic_class());       // the kernel picks the tcp TOS
  EXPECT_DOUBLE_EQ(outcome.rounds[2].line_rate_gbps(), 10);  // the plan's, no inventory
  int bandwidth = 0;
  for (const auto& finding : outcome.checks) {
    if (finding.id() != "incast.bandwidth") continue;
    ++bandwidth;
    EXPECT_EQ(finding.status(), v1::Finding::pass) << finding.message();
  }
  EXPECT_EQ(bandwidth, 3);
  for (const auto& prepare : trace_.prepares) {
    if (prepare.spec().role() == "server") {
      EXPECT_FALSE(prepare.share_group().empty());
    }
  }
}

TEST_F(IncastPhaseTest, APartialRecertificationCarriesTheRoundsWithoutAMeasuredNode) {
  v1::Certificate baseline;
  for (const auto& [receiver, sender] :
       std::vector<std::pair<std::string, std::string>>{{"node1", "node2"}, {"node2", "node3"}}) {
    v1::IncastResult* old = baseline.add_incast();
    old->set_receiver(receiver);
    old->set_engine("tcp");
    old->set_test("write_bw");
    old->set_line_rate_gbps(10);
    v1::IncastSender* end = old->add_senders();
    end->set_node(sender);
    end->set_ok(true);
    end->set_gbps(8);
    old->set_aggregate_gbps(8);
    old->set_fairness(1);
  }
  RerunScope rerun;
  rerun.only = {"node3"};
  rerun.baseline = &baseline;
  rerun.carried.set_age_s(3600);
  const IncastOutcome outcome = RunIncastPhase(nodes_, plan_, quiet_, &rerun);
  std::vector<std::string> rounds;
  for (const auto& round : outcome.rounds) {
    rounds.push_back(absl::StrCat(round.senders(0).node(), "->", round.receiver(),
                                  round.has_carried() ? " carried" : ""));
  }
  // Measured: the rounds node3 is in; carried: node2 -> node1 only.
  EXPECT_THAT(rounds, ElementsAre("node3->node2", "node1->node3", "node2->node1 carried"));
  int carried = 0;
  for (const auto& finding : outcome.checks) {
    if (finding.node() == "node1") {
      EXPECT_EQ(finding.carried().age_s(), 3600) << finding.id();
      ++carried;
    }
  }
  EXPECT_EQ(carried, 2);  // incast.bandwidth and incast.fairness of the carried round
}

TEST_F(IncastPhaseTest, OneNodeHasNoRoundAndSaysWhy) {
  nodes_.resize(1);
  plan_.nodes.resize(1);
  const IncastOutcome outcome = RunIncastPhase(nodes_, plan_, quiet_);
  EXPECT_TRUE(outcome.rounds.empty());
  EXPECT_THAT(outcome.skipped, HasSubstr("fewer than two nodes"));
  EXPECT_TRUE(trace_.calls.empty());
}

TEST_F(IncastPhaseTest, AStoppedRunSkipsTheRounds) {
  RunStop stop;
  stop.Request("SIGINT", absl::Now());
  const IncastOutcome outcome = RunIncastPhase(nodes_, plan_, quiet_, nullptr, &stop);
  EXPECT_TRUE(outcome.rounds.empty());
  EXPECT_THAT(outcome.skipped, HasSubstr("stopped before the incast rounds"));
  EXPECT_TRUE(trace_.calls.empty());
}

TEST_F(IncastPhaseTest, APlanWithoutIncastRunsNothing) {
  plan_.pairwise.incast.enabled = false;
  const IncastOutcome outcome = RunIncastPhase(nodes_, plan_, quiet_);
  EXPECT_TRUE(outcome.rounds.empty());
  EXPECT_TRUE(outcome.skipped.empty());
  EXPECT_TRUE(trace_.calls.empty());
}

}  // namespace
}  // namespace clustercert::controller
