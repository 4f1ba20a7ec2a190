// The journal as the phases see it: results go out as they complete, and a
// resumed run is handed back each completed one once, stamped carried.
#include "controller/phases/phase_journal.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "controller/phases/collectives_phase.h"
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
    auto full = journal::JournalWriter::OpenForAppend("/dev/full");
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

}  // namespace
}  // namespace clustercert::controller
