// The executor over the async client: the pairs of a round run side by side
// on the caller's thread (no thread per pair), a stop lets the cells under
// way finish and starts no more, and a running bandwidth cell shows its live
// rate from the end that counts the bytes.
#include "controller/pairwise/phase/pair_executor.h"

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

using ::testing::HasSubstr;

// What every fake saw: each call by node, and the thread it came on.
struct Trace {
  std::vector<std::string> calls;  // "node2 RunEndpoint"
  std::vector<std::thread::id> threads;
};

// Answers every call at once (RunEndpoint at 9 Gb/s), or holds RunEndpoint
// in `held`; GetEndpointProgress reports 1.25 GB after 1 s.
class TracingAgent final : public testing::FakeAgentClient {
 public:
  TracingAgent(std::string node, Trace& trace, bool hold_runs)
      : node_(std::move(node)), trace_(trace), hold_runs_(hold_runs) {}

  void RunEndpoint(const v1::RunEndpointRequest&, absl::Duration t,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    if (Refused("RunEndpoint", t, done)) return;
    v1::RunEndpointResponse response;
    response.mutable_result()->mutable_bandwidth()->set_avg_gbps(9);
    if (hold_runs_) {
      held.push_back([done, response] { done(response, {}); });
      return;
    }
    done(response, {});
  }
  void GetEndpointProgress(const v1::GetEndpointProgressRequest& request, absl::Duration t,
                           AgentCallback<v1::GetEndpointProgressResponse> done) override {
    if (Refused("GetEndpointProgress", t, done)) return;
    progress_endpoints.push_back(request.endpoint_id());
    v1::GetEndpointProgressResponse response;
    response.mutable_progress()->set_running(true);
    response.mutable_progress()->set_bytes(1'250'000'000);
    response.mutable_progress()->set_seconds(1);
    done(response, {});
  }
  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration t,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    if (Refused("PrepareEndpoint", t, done)) return;
    prepared.push_back(request.spec());
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(request.spec().role() + "@" + node_);
    done(response, {});
  }

  std::vector<std::string> progress_endpoints;
  std::vector<v1::PeerTestSpec> prepared;

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    trace_.calls.push_back(node_ + " " + call);
    trace_.threads.push_back(std::this_thread::get_id());
    return absl::OkStatus();
  }

 private:
  std::string node_;
  Trace& trace_;
  bool hold_runs_;
};

class PairExecutorTest : public ::testing::Test {
 protected:
  void MakeNodes(int count, bool hold_runs = false) {
    for (int i = 0; i < count; ++i) {
      NodeState state;
      state.node.name = absl::StrCat("node", i + 1);
      state.node.data_ip = absl::StrCat("10.0.0.", i + 1);
      state.reachable = true;
      state.client = std::make_unique<TracingAgent>(state.node.name, trace_, hold_runs);
      nodes_.push_back(std::move(state));
    }
    plan_.pairwise.engine = plan::PairwiseEngine::kTcp;
    plan_.pairwise.duration = absl::Seconds(1);
    plan_.pairwise.min_fraction_of_line_rate = 0.8;
  }
  CellJob Job(int client, int server, const std::string& test = "write_bw") {
    CellJob job;
    job.client.state = &nodes_[client];
    job.server.state = &nodes_[server];
    job.item = {test, "host", ""};
    job.line_rate_gbps = 10;
    job.round = 1;
    return job;
  }
  TracingAgent& Agent(int node) { return static_cast<TracingAgent&>(*nodes_[node].client); }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  Trace trace_;
  Progress quiet_{stderr, /*quiet=*/true};
};

TEST_F(PairExecutorTest, ThePairsOfARoundRunSideBySideOnTheCallersThread) {
  MakeNodes(8);
  std::vector<CellChain> chains;
  for (int p = 0; p < 4; ++p) chains.push_back({Job(2 * p, 2 * p + 1), Job(2 * p, 2 * p + 1)});
  int done = 0;
  std::vector<std::string> first_calls_before_any_cell_ended;
  std::vector<v1::PairResult> cells = RunCellChains(
      plan_, quiet_, chains, [] { return false; },
      [&](const v1::PairResult&) {
        if (done++ == 0) first_calls_before_any_cell_ended = trace_.calls;
      });
  ASSERT_EQ(cells.size(), 8u);
  for (const auto& cell : cells) {
    EXPECT_TRUE(cell.ok()) << cell.error();
    EXPECT_EQ(cell.verdict().status(), v1::Finding::pass);
  }
  EXPECT_EQ(cells[2].client(), "node3");  // chain by chain, in order
  // Every pair had begun before the first cell ended: side by side.
  for (int p = 0; p < 4; ++p) {
    EXPECT_THAT(first_calls_before_any_cell_ended,
                ::testing::Contains(absl::StrCat("node", 2 * p + 1, " ReadPortCounters")));
  }
  for (const auto& id : trace_.threads) EXPECT_EQ(id, std::this_thread::get_id());
}

// The plan's class reaches both ends of a verbs test and the cell's record:
// RoCE's traffic class from its DSCP and ECN, InfiniBand's service level.
TEST_F(PairExecutorTest, AVerbsCellSendsInThePlansClassAndRecordsIt) {
  MakeNodes(2);
  plan_.pairwise.engine = plan::PairwiseEngine::kVerbs;
  plan_.fabric.roce.dscp = 26;
  plan_.fabric.roce.ecn = true;
  std::vector<v1::PairResult> cells = RunCellChains(
      plan_, quiet_, {{Job(0, 1)}}, [] { return false; }, nullptr);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_TRUE(cells[0].has_traffic_class());
  EXPECT_EQ(cells[0].traffic_class(), 106u);
  EXPECT_FALSE(cells[0].has_service_level());
  ASSERT_EQ(Agent(0).prepared.size(), 1u);
  EXPECT_EQ(Agent(0).prepared[0].traffic_class(), 106u);
  EXPECT_EQ(Agent(1).prepared[0].traffic_class(), 106u);

  plan_.fabric.roce.ecn = false;
  plan_.fabric.roce.dscp = 24;
  cells = RunCellChains(
      plan_, quiet_, {{Job(0, 1)}}, [] { return false; }, nullptr);
  EXPECT_EQ(cells[0].traffic_class(), 96u);

  plan_.fabric.type = plan::FabricType::kInfiniband;
  plan_.fabric.infiniband.service_level = 5;
  cells = RunCellChains(
      plan_, quiet_, {{Job(0, 1)}}, [] { return false; }, nullptr);
  EXPECT_FALSE(cells[0].has_traffic_class());
  EXPECT_EQ(cells[0].service_level(), 5u);
  EXPECT_EQ(Agent(0).prepared.back().service_level(), 5u);
  EXPECT_EQ(Agent(0).prepared.back().traffic_class(), 0u);
}

// The tcp engine's sockets pick their own TOS: nothing is asked or recorded.
TEST_F(PairExecutorTest, ATcpCellRecordsNoClass) {
  MakeNodes(2);
  std::vector<v1::PairResult> cells = RunCellChains(
      plan_, quiet_, {{Job(0, 1)}}, [] { return false; }, nullptr);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_FALSE(cells[0].has_traffic_class());
  EXPECT_FALSE(cells[0].has_service_level());
  EXPECT_EQ(Agent(1).prepared[0].traffic_class(), 0u);
}

TEST_F(PairExecutorTest, AStopStartsNoFurtherCellAndLetsTheCellsUnderWayFinish) {
  MakeNodes(4);
  bool stop = false;
  std::vector<v1::PairResult> cells = RunCellChains(
      plan_, quiet_, {{Job(0, 1), Job(0, 1), Job(0, 1)}, {Job(2, 3), Job(2, 3), Job(2, 3)}},
      [&] { return stop; }, [&](const v1::PairResult&) { stop = true; });
  ASSERT_EQ(cells.size(), 2u);  // each chain's first cell, already under way
  EXPECT_NE(cells[0].client(), cells[1].client());
}

TEST_F(PairExecutorTest, AnUnreachableEndIsAnErrorCellThatCallsNoAgent) {
  MakeNodes(2);
  nodes_[1].reachable = false;
  std::vector<v1::PairResult> cells = RunCellChains(
      plan_, quiet_, {{Job(0, 1)}}, [] { return false; }, nullptr);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].error(), "node2 is unreachable");
  EXPECT_EQ(cells[0].verdict().status(), v1::Finding::fail);
  EXPECT_TRUE(trace_.calls.empty());
}

// The tick the executor runs once a second, driven by hand: while both ends
// run, the poll asks the receiver (tcp) and prints the rate since the last.
TEST_F(PairExecutorTest, ARunningBandwidthCellShowsItsRateFromTheCountingEnd) {
  MakeNodes(2, /*hold_runs=*/true);
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    Progress progress(out, /*quiet=*/false, /*tty=*/false, nullptr);
    CallLoop loop;
    bool finished = false;
    auto cell = std::make_shared<CellRun>(loop, plan_, progress, Job(0, 1),
                                          [&](const v1::PairResult&) { finished = true; });
    cell->Start();
    // Both runs out (held): the broker has told the cell they are running.
    loop.RunUntil([&] { return Agent(0).held.size() + Agent(1).held.size() == 2; });
    cell->PollProgress();
    bool polled = false;
    loop.Post([&] { polled = true; });  // behind the poll's answer
    loop.RunUntil([&] { return polled; });
    for (int node : {0, 1}) {
      for (auto& answer : Agent(node).held) answer();
      Agent(node).held.clear();
    }
    loop.RunUntil([&] { return finished; });
    cell->PollProgress();  // over: no poll
  }
  std::fclose(out);
  const std::string lines(text, size);
  std::free(text);
  EXPECT_EQ(Agent(1).progress_endpoints, std::vector<std::string>{"server@node2"});
  EXPECT_TRUE(Agent(0).progress_endpoints.empty());
  EXPECT_THAT(lines, HasSubstr("node1 -> node2 write_bw host: 10.00 Gb/s now (1 s)"));
}

// The tick of a round too big to show live rates: the broker's keep-alive,
// and no progress call to either end.
TEST_F(PairExecutorTest, TheKeepAliveAloneAsksNoEndForProgress) {
  MakeNodes(2, /*hold_runs=*/true);
  Progress progress(stderr, /*quiet=*/false, /*tty=*/false, nullptr);
  CallLoop loop;
  bool finished = false;
  auto cell = std::make_shared<CellRun>(loop, plan_, progress, Job(0, 1),
                                        [&](const v1::PairResult&) { finished = true; });
  cell->Start();
  loop.RunUntil([&] { return Agent(0).held.size() + Agent(1).held.size() == 2; });
  cell->KeepAlive();
  bool ticked = false;
  loop.Post([&] { ticked = true; });
  loop.RunUntil([&] { return ticked; });
  EXPECT_TRUE(Agent(0).progress_endpoints.empty());
  EXPECT_TRUE(Agent(1).progress_endpoints.empty());
  for (int node : {0, 1}) {
    for (auto& answer : Agent(node).held) answer();
    Agent(node).held.clear();
  }
  loop.RunUntil([&] { return finished; });
}

TEST_F(PairExecutorTest, LiveRatesAreShownForSmallRoundsOnlyAndNeverWhenQuiet) {
  Progress shown(stderr, /*quiet=*/false, /*tty=*/false, nullptr);
  EXPECT_TRUE(ShowsLiveRates(shown, 1));
  EXPECT_TRUE(ShowsLiveRates(shown, 16));
  EXPECT_FALSE(ShowsLiveRates(shown, 17));   // a 34-node round
  EXPECT_FALSE(ShowsLiveRates(shown, 512));  // a 1,024-node ring round
  EXPECT_FALSE(ShowsLiveRates(quiet_, 2));
}

}  // namespace
}  // namespace clustercert::controller
