// The pairwise phase against fake agents: scheduling, brokering order,
// cleanup, verdicts, retests and localisation, without a network.
#include "controller/pairwise/phase/pairwise_phase.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "controller/phases/phase_journal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"
#include "tests/support/temp_tree.h"

namespace clustercert::controller {
namespace {

// What every fake agent saw, shared by the fleet.
struct Ledger {
  std::mutex mutex;
  std::map<std::string, int> open;        // node -> endpoints prepared and not closed
  std::map<std::string, int> prepares;    // node -> PrepareEndpoint calls
  std::set<std::string> slow;             // nodes whose data plane is slow
  std::set<std::string> failing_prepare;  // nodes whose PrepareEndpoint fails
  // Nodes whose RunEndpoint fails at once, as a verbs run whose QP broke;
  // their peers' runs then answer only when closed (Cancelled), as a verbs
  // endpoint polling for a message that never comes, or after 5 s.
  std::set<std::string> failing_run;
  // Nodes whose connect measures a route to the peer that a hop cuts to 1500.
  std::set<std::string> short_route;
  v1::PeerTestSpec last_spec;           // the most recent prepared spec
  std::vector<v1::PeerTestSpec> specs;  // every prepared spec, in order
  std::string engine = "tcp";           // the engine every spec must name
};

// A node-agent that answers at once; bandwidth is 9 Gb/s unless either end
// is slow (0.1 Gb/s). Endpoint ids carry the node so the server side can
// learn its peer from Connect.
class FakeAgent final : public testing::FakeAgentClient {
 public:
  FakeAgent(std::string node, Ledger& ledger) : node_(std::move(node)), ledger_(ledger) {}

  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    std::lock_guard<std::mutex> lock(ledger_.mutex);
    ++ledger_.prepares[node_];
    if (ledger_.failing_prepare.count(node_)) {
      done(absl::ResourceExhaustedError("busy: tcp 10.0.0.9 is in test 'x'"), {});
      return;
    }
    EXPECT_EQ(request.spec().engine(), ledger_.engine);
    ledger_.last_spec = request.spec();
    ledger_.specs.push_back(request.spec());
    ++ledger_.open[node_];
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(request.spec().role() + "@" + node_);
    open_ids_.insert(response.endpoint_id());
    response.mutable_info()->set_address(node_);
    done(response, {});
  }
  void ConnectEndpoint(const v1::ConnectEndpointRequest& request, absl::Duration,
                       AgentCallback<v1::ConnectEndpointResponse> done) override {
    peer_ = request.peer().address();
    v1::ConnectEndpointResponse response;
    v1::PathMtu* mtu = response.mutable_path_mtu();
    mtu->set_peer_address(peer_);
    mtu->set_local_route_mtu(9000);
    {
      std::lock_guard<std::mutex> lock(ledger_.mutex);
      mtu->set_route_mtu(ledger_.short_route.count(node_) ? 1500 : 9000);
    }
    done(response, {});
  }
  ~FakeAgent() override {
    for (std::thread& timer : timers_) timer.join();
  }

  void RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    v1::RunEndpointResponse response;
    bool slow = false;
    bool fails = false;
    bool hangs = false;
    {
      std::lock_guard<std::mutex> lock(ledger_.mutex);
      slow = ledger_.slow.count(node_) || ledger_.slow.count(peer_);
      fails = ledger_.failing_run.count(node_) != 0;
      hangs = !fails && ledger_.failing_run.count(peer_) != 0;
    }
    if (fails) {
      done(absl::UnavailableError("rxe0 QP 0x11: IBV_WC_RETRY_EXC_ERR"), {});
      return;
    }
    if (hangs) {
      Hang(request.endpoint_id(), std::move(done));
      return;
    }
    auto* bandwidth = response.mutable_result()->mutable_bandwidth();
    bandwidth->set_avg_gbps(slow ? 0.1 : 9.0);
    bandwidth->set_seconds(1);
    done(response, {});
  }
  void CloseEndpoint(const v1::CloseEndpointRequest& request, absl::Duration,
                     AgentCallback<v1::CloseEndpointResponse> done) override {
    if (AgentCallback<v1::RunEndpointResponse> run = TakeHanging(request.endpoint_id())) {
      run(absl::CancelledError("stopped by the controller"), {});  // as the agent's Cancel
    }
    std::lock_guard<std::mutex> lock(ledger_.mutex);
    if (open_ids_.erase(request.endpoint_id()) == 0) {
      done(absl::NotFoundError("no endpoint to close: it was closed already"), {});
      return;
    }
    --ledger_.open[node_];
    done(v1::CloseEndpointResponse(), {});
  }

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    if (absl::StrContains(call, "Collective")) {
      return absl::UnimplementedError("no collectives in the pairwise fake");
    }
    return absl::OkStatus();
  }

 private:
  void Hang(const std::string& id, AgentCallback<v1::RunEndpointResponse> done) {
    std::lock_guard<std::mutex> lock(hanging_mutex_);
    hanging_[id] = std::move(done);
    timers_.emplace_back([this, id] {
      {
        std::unique_lock<std::mutex> wait(hanging_mutex_);
        hanging_closed_.wait_for(wait, std::chrono::seconds(5),
                                 [&] { return hanging_.count(id) == 0; });
      }
      if (AgentCallback<v1::RunEndpointResponse> run = TakeHanging(id)) {
        run(absl::DeadlineExceededError("reached its deadline"), {});
      }
    });
  }
  AgentCallback<v1::RunEndpointResponse> TakeHanging(const std::string& id) {
    std::lock_guard<std::mutex> lock(hanging_mutex_);
    auto it = hanging_.find(id);
    if (it == hanging_.end()) return nullptr;
    AgentCallback<v1::RunEndpointResponse> run = std::move(it->second);
    hanging_.erase(it);
    hanging_closed_.notify_all();
    return run;
  }

  std::string node_;
  Ledger& ledger_;
  std::string peer_;
  std::set<std::string> open_ids_;  // guarded by ledger_.mutex
  std::mutex hanging_mutex_;
  std::map<std::string, AgentCallback<v1::RunEndpointResponse>> hanging_;
  std::condition_variable hanging_closed_;
  std::vector<std::thread> timers_;
};

class PairwisePhaseTest : public ::testing::Test {
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
      state.reachable = true;
      state.inventory = v1::Inventory();
      state.client = std::make_unique<FakeAgent>(node.name, ledger_);
      nodes_.push_back(std::move(state));
    }
  }

  PairwiseOutcome Run() { return RunPairwisePhase(nodes_, plan_, {}, progress_); }

  static int MainCells(const PairwiseOutcome& outcome) {
    int cells = 0;
    for (const auto& pair : outcome.pairs) cells += pair.retest_of().empty() ? 1 : 0;
    return cells;
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  Ledger ledger_;
  Progress progress_{stderr, /*quiet=*/true};
};

TEST_F(PairwisePhaseTest, HealthyClusterPassesEveryPairOnceAndClosesEverything) {
  PairwiseOutcome outcome = Run();
  EXPECT_EQ(outcome.rounds, 6);       // both directions of the 3 rounds
  EXPECT_EQ(MainCells(outcome), 12);  // every ordered pair
  EXPECT_EQ(outcome.failing, 0);
  EXPECT_TRUE(outcome.suspects.empty());
  for (const auto& pair : outcome.pairs) {
    EXPECT_TRUE(pair.ok()) << pair.error();
    EXPECT_EQ(pair.verdict().status(), v1::Finding::pass);
    EXPECT_DOUBLE_EQ(pair.value(), 9.0);
    EXPECT_EQ(pair.unit(), "Gb/s");
  }
  for (const auto& [node, open] : ledger_.open) EXPECT_EQ(open, 0) << node;
}

// Each cell's progress line ends in its verdict's text (a proto enum once
// printed as its number here).
TEST_F(PairwisePhaseTest, EachCellsProgressLineNamesItsVerdict) {
  ledger_.slow.insert("node3");
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    Progress progress(out, /*quiet=*/false, /*tty=*/false, nullptr);
    RunPairwisePhase(nodes_, plan_, {}, progress);
  }
  std::fclose(out);
  const std::string lines(text, size);
  std::free(text);
  EXPECT_THAT(lines, ::testing::HasSubstr("node1 -> node2 write_bw host: 9.00 Gb/s (pass)"));
  EXPECT_THAT(lines, ::testing::HasSubstr("node1 -> node3 write_bw host: 0.10 Gb/s (fail)"));
  EXPECT_THAT(lines, ::testing::HasSubstr("retest node3 -> "));
}

TEST_F(PairwisePhaseTest, SlowNodeFailsItsPairsIsRetestedAndLocalised) {
  ledger_.slow.insert("node3");
  PairwiseOutcome outcome = Run();
  EXPECT_EQ(outcome.failing, 6);  // node3 as client and as server
  int retests = 0;
  for (const auto& pair : outcome.pairs) {
    const bool touches = pair.client() == "node3" || pair.server() == "node3";
    EXPECT_EQ(pair.verdict().status(), touches ? v1::Finding::fail : v1::Finding::pass)
        << pair.client() << "->" << pair.server() << " " << pair.retest_of();
    if (!pair.retest_of().empty()) {
      ++retests;
      EXPECT_NE(pair.server(), "node3");  // partners are nodes with a good record
      EXPECT_THAT(pair.verdict().key(), ::testing::HasSubstr(" retest of " + pair.retest_of()));
    }
  }
  EXPECT_GT(retests, 0);
  ASSERT_FALSE(outcome.suspects.empty());
  EXPECT_EQ(outcome.suspects[0].node(), "node3");
  for (const auto& [node, open] : ledger_.open) EXPECT_EQ(open, 0) << node;
}

TEST_F(PairwisePhaseTest, UnreachableNodeGivesErrorCellsAndIsNeverCalled) {
  nodes_[3].reachable = false;
  PairwiseOutcome outcome = Run();
  int node4_cells = 0;
  for (const auto& pair : outcome.pairs) {
    if (pair.client() != "node4" && pair.server() != "node4") continue;
    ++node4_cells;
    EXPECT_FALSE(pair.ok());
    EXPECT_EQ(pair.error(), "node4 is unreachable");
    EXPECT_EQ(pair.verdict().status(), v1::Finding::fail);
  }
  EXPECT_EQ(node4_cells, 6);
  EXPECT_EQ(ledger_.prepares["node4"], 0);
}

TEST_F(PairwisePhaseTest, FailedPrepareClosesThePeerAndNamesTheNode) {
  ledger_.failing_prepare.insert("node2");
  PairwiseOutcome outcome = Run();
  for (const auto& pair : outcome.pairs) {
    if (pair.client() == "node2" || pair.server() == "node2") {
      EXPECT_FALSE(pair.ok());
      EXPECT_NE(pair.error().find("node2 prepare: busy"), std::string::npos) << pair.error();
    }
  }
  for (const auto& [node, open] : ledger_.open) EXPECT_EQ(open, 0) << node;
}

// One end's run fails (its QP broke): the other end, which would poll until
// its deadline, is closed at once and both failures are named.
TEST_F(PairwisePhaseTest, WhenOneEndFailsTheOtherIsStoppedAtOnce) {
  ledger_.failing_run.insert("node2");
  const absl::Time start = absl::Now();
  PairwiseOutcome outcome = Run();
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));  // no pair waited for the 5 s hang
  int node2_cells = 0;
  for (const auto& pair : outcome.pairs) {
    if (pair.client() != "node2" && pair.server() != "node2") continue;
    ++node2_cells;
    EXPECT_FALSE(pair.ok());
    EXPECT_NE(pair.error().find("node2 run: rxe0 QP 0x11: IBV_WC_RETRY_EXC_ERR"), std::string::npos)
        << pair.error();
    EXPECT_NE(pair.error().find("run: stopped by the controller"), std::string::npos)
        << pair.error();
  }
  EXPECT_GT(node2_cells, 0);
  for (const auto& [node, open] : ledger_.open) EXPECT_EQ(open, 0) << node;
}

// Issue 35: a failed run returns no result; each end's path MTU measured at
// connect still reaches the cell, so mtu.path judges it on evidence.
TEST_F(PairwisePhaseTest, AFailedRunKeepsThePathMtuEachEndMeasuredAtConnect) {
  ledger_.failing_run.insert("node2");
  ledger_.short_route.insert("node2");
  PairwiseOutcome outcome = Run();
  int node2_cells = 0;
  for (const auto& pair : outcome.pairs) {
    if (pair.client() != "node2" && pair.server() != "node2") continue;
    ++node2_cells;
    EXPECT_FALSE(pair.ok());
    const bool client = pair.client() == "node2";
    const v1::PathMtu& mine = (client ? pair.client_result() : pair.server_result()).path_mtu();
    const v1::PathMtu& theirs = (client ? pair.server_result() : pair.client_result()).path_mtu();
    EXPECT_EQ(mine.route_mtu(), 1500u) << pair.client() << "->" << pair.server();
    EXPECT_EQ(mine.peer_address(), client ? pair.server() : pair.client());
    EXPECT_EQ(theirs.route_mtu(), 9000u);
  }
  EXPECT_GT(node2_cells, 0);
}

TEST_F(PairwisePhaseTest, StreamsAndBidirectionalReachTheEnginesAndTheValueIsTheSum) {
  plan_.pairwise.streams = 4;
  plan_.pairwise.bidirectional = true;
  PairwiseOutcome outcome = Run();
  EXPECT_EQ(ledger_.last_spec.streams(), 4u);
  EXPECT_TRUE(ledger_.last_spec.bidirectional());
  for (const auto& pair : outcome.pairs) {
    EXPECT_DOUBLE_EQ(pair.value(), 18.0);  // 9 Gb/s each way
    EXPECT_EQ(pair.verdict().status(), v1::Finding::pass);
  }
}

// An 8-GPU-class node in small: 4 GPUs, two beside each of two rails. cuda
// cells run for every GPU on the rail nearest it, against the server's GPU
// in the same position; pairwise.cuda_gpus bounds how many GPUs take part.
TEST_F(PairwisePhaseTest, CudaCellsCoverEveryGpuOnItsNearestRail) {
  ledger_.engine = "verbs";
  plan_.pairwise.engine = plan::PairwiseEngine::kVerbs;
  plan_.pairwise.memory = {"cuda"};
  for (auto& state : nodes_) {
    state.node.rails = {"mlx5_0", "mlx5_1"};
    v1::Inventory& inventory = *state.inventory;
    for (int g = 0; g < 4; ++g) {
      const std::string bus = "0000:" + std::to_string(18 + g) + ":00.0";
      auto* gpu = inventory.mutable_gpu_runtime()->add_gpus();
      gpu->set_index(g);
      gpu->set_pci_bus_id(bus);
      for (const char* nic : {"mlx5_0", "mlx5_1"}) {
        auto* path = inventory.add_gpu_nic_paths();
        path->set_gpu_pci(bus);
        path->set_nic(nic);
        const bool near = (g < 2) == (std::string(nic) == "mlx5_0");
        path->set_relation(near ? "PIX" : "SYS");
      }
    }
  }
  for (auto& node : plan_.nodes) node.rails = {"mlx5_0", "mlx5_1"};
  PairwiseOutcome outcome = Run();
  EXPECT_EQ(MainCells(outcome), 12 * 2 * 2);  // ordered pairs x rails x GPUs per rail
  std::map<std::string, std::set<std::string>> gpus_by_rail;
  for (const auto& pair : outcome.pairs) {
    gpus_by_rail[pair.rail()].insert(pair.memory());
    EXPECT_EQ(pair.gpu(), pair.memory());
    EXPECT_EQ(pair.server_gpu(), pair.memory());  // same position on the server
  }
  EXPECT_EQ(gpus_by_rail["mlx5_0"], (std::set<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_EQ(gpus_by_rail["mlx5_1"], (std::set<std::string>{"cuda:2", "cuda:3"}));
  int cuda3 = 0;
  for (const auto& spec : ledger_.specs) cuda3 += spec.memory() == "cuda:3" ? 1 : 0;
  EXPECT_EQ(cuda3, 12 * 2);  // client and server of every cuda:3 cell

  ledger_.specs.clear();
  plan_.pairwise.cuda_gpus = 1;
  outcome = Run();
  EXPECT_EQ(MainCells(outcome), 12);  // only cuda:0, on mlx5_0
  for (const auto& pair : outcome.pairs) EXPECT_EQ(pair.memory(), "cuda:0");
}

TEST(CudaMemoryForTest, PicksTheClosestGpuByRelationAndMapsItToCuda) {
  NodeState node;
  node.inventory = v1::Inventory();
  auto add_path = [&](const char* gpu_pci, const char* nic, const char* relation) {
    auto* path = node.inventory->add_gpu_nic_paths();
    path->set_gpu_pci(gpu_pci);
    path->set_nic(nic);
    path->set_relation(relation);
  };
  add_path("0000:41:00.0", "mlx5_0", "PHB");
  add_path("0000:45:00.0", "mlx5_0", "PIX");
  add_path("0000:c1:00.0", "mlx5_1", "PIX");
  for (auto [index, bus] :
       {std::pair{0, "0000:41:00.0"}, {1, "0000:45:00.0"}, {2, "0000:C1:00.0"}}) {
    auto* gpu = node.inventory->mutable_gpu_runtime()->add_gpus();
    gpu->set_index(index);
    gpu->set_pci_bus_id(bus);
  }
  EXPECT_EQ(CudaMemoryFor(node, "mlx5_0"), "cuda:1");
  EXPECT_EQ(CudaMemoryFor(node, "mlx5_1"), "cuda:2");  // bus ids compare without case
  EXPECT_EQ(CudaMemoryFor(node, "mlx5_9"), "cuda:0");
}

TEST_F(PairwisePhaseTest, TcpWithoutDataIpIsAnErrorSayingSo) {
  nodes_[0].node.data_ip.clear();
  PairwiseOutcome outcome = Run();
  for (const auto& pair : outcome.pairs) {
    if (pair.client() == "node1" || pair.server() == "node1") {
      EXPECT_NE(pair.error().find("node1 has no data_ip"), std::string::npos) << pair.error();
    }
  }
}

// Resuming a killed run (issue 17): the cells its journal holds are taken
// over, only the rest run, and the matrix, its failing cells, retests and
// suspects come out as an uninterrupted run's. Killed mid-rounds, after the
// rounds and mid-retests.
TEST_F(PairwisePhaseTest, AResumedRunMeasuresOnlyTheMissingCellsAndEqualsAnUninterruptedOne) {
  ledger_.slow.insert("node3");
  clustercert::testing::TempTree tree("clustercert_resume");
  const std::string path = (tree.root() / journal::kJournalFile).string();
  v1::JournalHeader header;
  header.set_format(journal::kJournalFormat);
  auto writer = journal::JournalWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status();
  PhaseJournal journaling(writer->get(), nullptr, {}, progress_);
  const PairwiseOutcome full =
      RunPairwisePhase(nodes_, plan_, {}, progress_, nullptr, nullptr, &journaling);
  auto written = journal::ReadJournal(path);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->pairs.size(), full.pairs.size());  // every cell as it ended
  ASSERT_GT(full.pairs.size(), 13u);                    // 12 cells and node3's retests

  for (const size_t kept : {size_t{5}, size_t{12}, full.pairs.size() - 1}) {
    SCOPED_TRACE(kept);
    journal::JournalContents killed = *written;
    killed.pairs.resize(kept);
    ledger_.prepares.clear();
    v1::Carried carried;
    carried.set_from_journal(path);
    PhaseJournal resuming(nullptr, &killed, carried, progress_);
    const PairwiseOutcome resumed =
        RunPairwisePhase(nodes_, plan_, {}, progress_, nullptr, nullptr, &resuming);

    ASSERT_EQ(resumed.pairs.size(), full.pairs.size());
    size_t taken = 0;
    for (size_t i = 0; i < full.pairs.size(); ++i) {
      EXPECT_EQ(ResumeKey(resumed.pairs[i]), ResumeKey(full.pairs[i]));
      EXPECT_EQ(resumed.pairs[i].verdict().status(), full.pairs[i].verdict().status());
      EXPECT_DOUBLE_EQ(resumed.pairs[i].value(), full.pairs[i].value());
      if (resumed.pairs[i].has_carried()) {
        ++taken;
        EXPECT_EQ(resumed.pairs[i].carried().from_journal(), path);
      }
    }
    EXPECT_EQ(taken, kept);
    EXPECT_EQ(resuming.Taken().pairs(), static_cast<int>(kept));
    EXPECT_EQ(resumed.failing, full.failing);
    ASSERT_EQ(resumed.suspects.size(), full.suspects.size());
    EXPECT_EQ(resumed.suspects[0].node(), full.suspects[0].node());
    int prepares = 0;
    for (const auto& [node, count] : ledger_.prepares) prepares += count;
    EXPECT_EQ(prepares, 2 * static_cast<int>(full.pairs.size() - kept));  // two ends a cell
  }
}

// A cell the killed run could not measure (its agent did not answer or was
// busy) had not completed: a resume measures it.
TEST_F(PairwisePhaseTest, ANotMeasuredCellInTheJournalIsMeasuredAgain) {
  journal::JournalContents killed;
  v1::PairResult unanswered;
  unanswered.set_client("node1");
  unanswered.set_server("node2");
  unanswered.set_test("write_bw");
  unanswered.set_memory("host");
  unanswered.set_control_plane(true);
  unanswered.set_error("node2 prepare: deadline exceeded");
  killed.pairs.push_back(unanswered);
  PhaseJournal resuming(nullptr, &killed, {}, progress_);
  const PairwiseOutcome outcome =
      RunPairwisePhase(nodes_, plan_, {}, progress_, nullptr, nullptr, &resuming);
  EXPECT_EQ(MainCells(outcome), 12);
  for (const auto& pair : outcome.pairs) {
    EXPECT_FALSE(pair.has_carried());
    EXPECT_TRUE(pair.ok()) << pair.error();
  }
  EXPECT_EQ(resuming.Taken().pairs(), 0);
}

// Found in the soft-RoCE lab: the passive server of an RDMA write sees no
// completions, so live progress read from it showed 0.00 Gb/s throughout.
TEST(ProgressFromClientTest, OneSidedVerbsAreCountedByTheirPoster) {
  using plan::PairwiseEngine;
  EXPECT_TRUE(ProgressFromClient(PairwiseEngine::kVerbs, "write_bw"));
  EXPECT_TRUE(ProgressFromClient(PairwiseEngine::kVerbs, "read_bw"));
  EXPECT_FALSE(ProgressFromClient(PairwiseEngine::kVerbs, "send_bw"));
  EXPECT_FALSE(ProgressFromClient(PairwiseEngine::kTcp, "write_bw"));
  EXPECT_FALSE(ProgressFromClient(PairwiseEngine::kTcp, "send_bw"));
}

}  // namespace
}  // namespace clustercert::controller
