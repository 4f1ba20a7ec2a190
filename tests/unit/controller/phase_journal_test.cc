// The journal as the phases see it: results go out as they complete, and a
// resumed run is handed back each completed one once, stamped carried.
#include "controller/phases/phase_journal.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/phases/collectives_phase.h"
#include "controller/phases/uplink_phase.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_agent_client.h"
#include "tests/support/simulated_clock.h"
#include "tests/support/temp_tree.h"

namespace clustercert::controller {
namespace {

v1::PairResult Cell(const std::string& client, const std::string& server) {
  v1::PairResult pair;
  pair.set_client(client);
  pair.set_server(server);
  pair.set_test("write_bw");
  pair.set_memory("host");
  pair.set_ok(true);
  return pair;
}

v1::CollectiveSweep Sweep(const std::string& scope, std::vector<std::string> nodes) {
  v1::CollectiveSweep sweep;
  sweep.set_scope(scope);
  for (auto& node : nodes) sweep.add_nodes(node);
  sweep.set_ok(true);
  return sweep;
}

v1::Carried FromJournal() {
  v1::Carried carried;
  carried.set_from_journal("out/run/journal.jsonl");
  carried.set_from_started_at("2026-12-01T10:00:00.000Z");
  return carried;
}

TEST(PhaseJournalTest, EachCompletedResultIsHandedBackOnceAndStampedCarried) {
  journal::JournalContents killed;
  killed.pairs = {Cell("node1", "node2"), Cell("node2", "node1")};
  killed.sweeps = {Sweep("1-node", {"node1"}), Sweep("1-node", {"node2"}),
                   Sweep("2-node", {"node1", "node2"})};
  killed.ignored_lines = 1;
  Progress progress(stderr, /*quiet=*/true);
  PhaseJournal resuming(nullptr, &killed, FromJournal(), progress);
  ASSERT_TRUE(resuming.resuming());

  auto pair = resuming.TakePair(ResumeKey(Cell("node2", "node1")));
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->carried().from_journal(), "out/run/journal.jsonl");
  EXPECT_FALSE(resuming.TakePair(ResumeKey(Cell("node2", "node1"))).has_value());  // once
  EXPECT_FALSE(resuming.TakePair(ResumeKey(Cell("node1", "node3"))).has_value());

  auto sweep = resuming.TakeSweep("1-node", {"node2"});
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(sweep->nodes(0), "node2");
  EXPECT_EQ(sweep->carried().from_started_at(), "2026-12-01T10:00:00.000Z");
  EXPECT_FALSE(resuming.TakeSweep("2-node", {"node1", "node3"}).has_value());  // other nodes
  EXPECT_TRUE(resuming.TakeSweep("2-node", {"node1", "node2"}).has_value());

  const v1::Resumed taken = resuming.Taken();
  EXPECT_EQ(taken.pairs(), 1);
  EXPECT_EQ(taken.sweeps(), 2);
  EXPECT_EQ(taken.ignored_lines(), 1);
  EXPECT_EQ(taken.journal(), "out/run/journal.jsonl");
  EXPECT_EQ(taken.from_started_at(), "2026-12-01T10:00:00.000Z");
}

// A cuda cell per GPU: the GPUs are part of its name.
TEST(PhaseJournalTest, CudaCellsAreToldApartByTheirGpus) {
  v1::PairResult gpu0 = Cell("node1", "node2");
  gpu0.set_memory("cuda:0");
  gpu0.set_gpu("cuda:0");
  gpu0.set_server_gpu("cuda:0");
  v1::PairResult gpu0_to_1 = gpu0;
  gpu0_to_1.set_server_gpu("cuda:1");
  EXPECT_NE(ResumeKey(gpu0), ResumeKey(gpu0_to_1));
  EXPECT_EQ(ResumeKey(Cell("node1", "node2")), "node1->node2 write_bw host");
}

TEST(PhaseJournalTest, AFreshRunAppendsAndAFailedWriteIsSaidOnce) {
  clustercert::testing::TempTree tree("clustercert_phase_journal");
  const std::string path = (tree.root() / journal::kJournalFile).string();
  v1::JournalHeader header;
  header.set_format(journal::kJournalFormat);
  auto writer = journal::JournalWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status();
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    Progress progress(out, /*quiet=*/false, /*tty=*/false, nullptr);
    PhaseJournal journaling(writer->get(), nullptr, {}, progress);
    EXPECT_FALSE(journaling.resuming());
    journaling.RecordPair(Cell("node1", "node2"));
    journaling.RecordSweep(Sweep("2-node", {"node1", "node2"}));
    auto contents = journal::ReadJournal(path);
    ASSERT_TRUE(contents.ok()) << contents.status();
    EXPECT_EQ(contents->pairs.size(), 1u);
    EXPECT_EQ(contents->sweeps.size(), 1u);

    // The disk goes away under the run: said once, and the run goes on.
    auto full = journal::JournalWriter::OpenForAppend(
        "/dev/full", journal::JournalKey(std::string(32, 'k'), "nonce", "a test key"));
    ASSERT_TRUE(full.ok()) << full.status();
    PhaseJournal failing(full->get(), nullptr, {}, progress);
    failing.RecordPair(Cell("node1", "node2"));
    failing.RecordPair(Cell("node2", "node1"));
  }
  std::fclose(out);
  const std::string lines(text, size);
  std::free(text);
  EXPECT_THAT(lines, ::testing::HasSubstr("cannot append to the run journal /dev/full"));
  EXPECT_EQ(lines.find("cannot append"), lines.rfind("cannot append"));  // once
}

// An agent that records the collective jobs it is asked to start and
// refuses them (a scope it is asked for then fails at once).
class CollectiveLedger final : public testing::FakeAgentClient {
 public:
  explicit CollectiveLedger(std::vector<std::string>& starts) : starts_(starts) {}

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    if (call != "StartCollective") return absl::OkStatus();
    std::lock_guard<std::mutex> lock(mutex_);
    starts_.push_back(call);
    return absl::UnavailableError("no workers in this fake");
  }

 private:
  std::mutex mutex_;
  std::vector<std::string>& starts_;
};

// The collectives phase of a resumed run: the scopes whose sweep the journal
// holds are taken over (marked carried, judged as usual), only the rest run.
TEST(PhaseJournalTest, AResumedCollectivesPhaseSweepsOnlyWhatTheJournalLacks) {
  plan::Plan plan;
  plan.collectives.enabled = true;
  plan.collectives.backend = plan::CollectiveBackend::kGloo;
  plan.collectives.one_node_every_node = false;
  std::vector<std::string> starts;
  std::vector<NodeState> nodes;
  for (int i = 1; i <= 3; ++i) {
    NodeState state;
    state.node.name = "node" + std::to_string(i);
    state.node.data_ip = "10.0.0." + std::to_string(i);
    state.reachable = true;
    state.inventory = v1::Inventory();
    state.client = std::make_unique<CollectiveLedger>(starts);
    plan.nodes.push_back(state.node);
    nodes.push_back(std::move(state));
  }
  journal::JournalContents killed;
  killed.sweeps = {Sweep("1-node", {"node1"}), Sweep("2-node", {"node1", "node2"})};
  Progress progress(stderr, /*quiet=*/true);
  PhaseJournal resuming(nullptr, &killed, FromJournal(), progress);
  clustercert::testing::SimulatedClock clock;
  CollectivesOutcome outcome =
      RunCollectivesPhase(nodes, plan, progress, clock, nullptr, nullptr, &resuming);

  EXPECT_EQ(starts.size(), 3u);  // all-nodes only: one job per node
  ASSERT_EQ(outcome.sweeps.size(), 3u);
  int carried = 0;
  for (const auto& sweep : outcome.sweeps) {
    if (sweep.has_carried()) {
      ++carried;
      EXPECT_NE(sweep.scope(), "all-nodes");
      EXPECT_EQ(sweep.carried().from_journal(), "out/run/journal.jsonl");
    } else {
      EXPECT_EQ(sweep.scope(), "all-nodes");
      EXPECT_FALSE(sweep.ok());
    }
  }
  EXPECT_EQ(carried, 2);
  EXPECT_EQ(resuming.Taken().sweeps(), 2);
}

// An agent that answers every uplink run at 9 Gb/s and counts them.
class UplinkLedger final : public testing::FakeAgentClient {
 public:
  explicit UplinkLedger(int& runs) : runs_(runs) {}
  void RunUplinkFlows(const v1::RunUplinkFlowsRequest& request, absl::Duration,
                      AgentCallback<v1::RunUplinkFlowsResponse> done) override {
    ++runs_;
    v1::RunUplinkFlowsResponse response;
    v1::UplinkFlows& result = *response.mutable_result();
    result.set_aggregate_gbps(9);
    result.set_seconds(1);
    result.set_total_bytes(1'125'000'000);
    for (uint32_t i = 0; i < request.flows(); ++i) {
      result.add_flows()->set_gbps(9.0 / request.flows());
    }
    done(response, {});
  }

 private:
  int& runs_;
};

class UplinkJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_.uplink.enabled = true;
    plan::UplinkTarget target;
    target.type = "http";
    target.url = "http://10.0.9.1:8080/dataset.bin";
    target.name = target.url;
    plan_.uplink.targets = {target};
    plan_.uplink.flows = {1, 4};
    plan_.uplink.duration = absl::Seconds(1);
    for (int i = 1; i <= 2; ++i) {
      NodeState state;
      state.node.name = "node" + std::to_string(i);
      state.reachable = true;
      state.inventory = v1::Inventory();
      state.client = std::make_unique<UplinkLedger>(runs_);
      plan_.nodes.push_back(state.node);
      nodes_.push_back(std::move(state));
    }
  }
  v1::UplinkThroughput Run(const std::string& node, int flows) const {
    v1::UplinkThroughput run;
    run.set_node(node);
    run.set_target(plan_.uplink.targets[0].name);
    run.set_target_type("http");
    run.set_flows(flows);
    run.set_ok(true);
    run.set_aggregate_gbps(7);
    return run;
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  std::vector<NodeState> sinks_;
  int runs_ = 0;
  Progress progress_{stderr, /*quiet=*/true};
  clustercert::testing::SimulatedClock clock_;
};

TEST_F(UplinkJournalTest, AFreshRunJournalsEveryUplinkRunAsItEnds) {
  clustercert::testing::TempTree tree("clustercert_uplink_journal");
  const std::string path = (tree.root() / journal::kJournalFile).string();
  v1::JournalHeader header;
  header.set_format(journal::kJournalFormat);
  auto writer = journal::JournalWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status();
  PhaseJournal journaling(writer->get(), nullptr, {}, progress_);
  const UplinkOutcome outcome =
      RunUplinkPhase(nodes_, sinks_, plan_, progress_, clock_, nullptr, nullptr, &journaling);
  EXPECT_EQ(runs_, 4);
  auto contents = journal::ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->uplink_runs.size(), 4u);
  EXPECT_EQ(contents->uplink_runs[1].node(), "node1");
  EXPECT_EQ(contents->uplink_runs[1].flows(), 4);
  EXPECT_DOUBLE_EQ(contents->uplink_runs[1].aggregate_gbps(), 9);
}

// A resumed uplink phase: the runs the journal holds are taken over (marked
// carried, judged as usual), only the rest run.
TEST_F(UplinkJournalTest, AResumedUplinkPhaseRunsOnlyWhatTheJournalLacks) {
  journal::JournalContents killed;
  v1::UplinkThroughput failed = Run("node2", 1);
  failed.set_ok(false);
  failed.set_error("node2: Deadline Exceeded");
  killed.uplink_runs = {Run("node1", 1), Run("node1", 4), failed};
  PhaseJournal resuming(nullptr, &killed, FromJournal(), progress_);
  const UplinkOutcome outcome =
      RunUplinkPhase(nodes_, sinks_, plan_, progress_, clock_, nullptr, nullptr, &resuming);
  EXPECT_EQ(runs_, 2);  // node2's two: the failed one is measured again
  ASSERT_EQ(outcome.uplink.throughput_size(), 4);
  for (const v1::UplinkThroughput& run : outcome.uplink.throughput()) {
    EXPECT_TRUE(run.ok()) << run.node();
    const bool from_journal = run.node() == "node1";
    EXPECT_EQ(run.has_carried(), from_journal) << run.node() << " " << run.flows();
    EXPECT_DOUBLE_EQ(run.aggregate_gbps(), from_journal ? 7 : 9);
  }
  EXPECT_EQ(resuming.Taken().uplink_runs(), 2);
  EXPECT_FALSE(resuming.TakeUplinkRun("node1", plan_.uplink.targets[0].name, 1).has_value());
}

// launcher: mpirun on a resumed run whose journal holds its sweep: taken
// over, and mpirun is not launched again.
TEST(PhaseJournalTest, AResumedMpirunLaunchIsTakenOverNotRelaunched) {
  plan::Plan plan;
  plan.collectives.enabled = true;
  plan.collectives.launcher = plan::CollectiveLauncher::kMpirun;
  plan.collectives.backend = plan::CollectiveBackend::kNccl;
  plan.collectives.nccl_tests_dir = "/nonexistent";
  plan.collectives.scopes = {"all-nodes"};
  std::vector<NodeState> nodes;
  for (int i = 1; i <= 2; ++i) {
    plan::Node node;
    node.name = "node" + std::to_string(i);
    node.agent = absl::StrCat("127.0.0.", i, ":7070");
    plan.nodes.push_back(node);
    nodes.emplace_back();
    nodes.back().node = node;
    nodes.back().reachable = true;
    nodes.back().inventory = v1::Inventory();
  }
  journal::JournalContents killed;
  v1::CollectiveSweep sweep = Sweep("all-nodes", {"node1", "node2"});
  sweep.set_launcher("mpirun");
  killed.sweeps = {sweep};
  Progress progress(stderr, /*quiet=*/true);
  PhaseJournal resuming(nullptr, &killed, FromJournal(), progress);
  clustercert::testing::SimulatedClock clock;
  CollectivesOutcome outcome =
      RunCollectivesPhase(nodes, plan, progress, clock, nullptr, nullptr, &resuming);
  EXPECT_TRUE(outcome.not_run.empty()) << outcome.not_run;
  ASSERT_EQ(outcome.sweeps.size(), 1u);
  EXPECT_EQ(outcome.sweeps[0].carried().from_journal(), "out/run/journal.jsonl");
  EXPECT_EQ(resuming.Taken().sweeps(), 1);
}

}  // namespace
}  // namespace clustercert::controller
