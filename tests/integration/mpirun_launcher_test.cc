// launcher: mpirun through Debian's real OpenMPI mpirun on localhost. The
// ranks are tests/integration/fake_nccl_tests (installed as all_reduce_perf,
// alltoall_perf, ...): each reports the NCCL environment it received, and
// rank 0 prints a table a real nccl-tests run recorded
// (../shared/realworld/nccl-tests/). Two plan nodes, "localhost" and
// "127.0.0.1", are two names of this host, so every launch stays on it.
//
// What it shows: each scope is its own mpirun with the scope's hosts and
// ranks; every rank gets its node's derived NCCL environment through -x (the
// test's own environment holds no NCCL_* variable, so nothing arrives by
// inheritance), NCCL_IB_SL from fabric.infiniband.service_level included;
// each operation runs its own binary; the recorded table parses into the
// sweep; and the collectives phase runs the plan's scopes that way.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/process/process_command_runner.h"
#include "controller/collectives/mpirun_sweep.h"
#include "controller/phases/collectives_phase.h"
#include "controller/phases/progress.h"
#include "gtest/gtest.h"
#include "sweep/nccl_tests_output.h"
#include "tests/support/environment_skip.h"
#include "tests/support/simulated_clock.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;

const fs::path kTables =
    fs::path(CLUSTERCERT_SOURCE_DIR).parent_path() / "shared" / "realworld" / "nccl-tests";

// One rank's "fake-nccl-tests: binary=... rank=... size=... args=... env=..."
// line, as fields; env split into NAME -> VALUE.
struct RankReport {
  std::string binary;
  int rank = -1;
  int size = -1;
  std::string args;
  std::map<std::string, std::string> env;
};

std::vector<RankReport> Reports(const std::string& stderr_text) {
  std::vector<RankReport> reports;
  for (absl::string_view line : absl::StrSplit(stderr_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "fake-nccl-tests: ")) continue;
    RankReport report;
    for (absl::string_view field : absl::StrSplit(line, ' ')) {
      std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
      if (kv.first == "binary") report.binary = kv.second;
      if (kv.first == "rank") report.rank = std::atoi(kv.second.c_str());
      if (kv.first == "size") report.size = std::atoi(kv.second.c_str());
      if (kv.first == "args") report.args = kv.second;
      if (kv.first != "env") continue;
      for (absl::string_view item : absl::StrSplit(kv.second, '|', absl::SkipEmpty())) {
        std::pair<std::string, std::string> var = absl::StrSplit(item, absl::MaxSplits('=', 1));
        report.env[var.first] = var.second;
      }
    }
    reports.push_back(report);
  }
  std::sort(reports.begin(), reports.end(),
            [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  return reports;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool HasPair(const std::vector<std::string>& argv, const std::string& flag,
             const std::string& value) {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag && argv[i + 1] == value) return true;
  }
  return false;
}

class MpirunLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    process::ProcessCommandRunner runner;
    if (absl::IsNotFound(runner.Run({"mpirun", "--version"}, absl::Seconds(30)).status())) {
      SKIP_FOR_ENVIRONMENT("mpirun")
          << "mpirun is not installed (apt-get install openmpi-bin; scripts/install-deps.sh)";
    }
    if (!fs::is_directory(kTables)) {
      SKIP_FOR_ENVIRONMENT("realworld")
          << kTables << " is absent (a clone outside the clustercert workspace)";
    }
    // Whatever a rank reports must have come through mpirun's -x.
    for (char** entry = environ; *entry != nullptr; ++entry) {
      ASSERT_NE(std::string(*entry).rfind("NCCL_", 0), 0u)
          << "the test's environment holds " << *entry << "; unset it";
    }
    plan_.fabric.type = plan::FabricType::kInfiniband;
    plan_.fabric.infiniband.service_level = 4;
    plan_.collectives.enabled = true;
    plan_.collectives.backend = plan::CollectiveBackend::kNccl;
    plan_.collectives.launcher = plan::CollectiveLauncher::kMpirun;
    plan_.collectives.nccl_tests_dir = FAKE_NCCL_TESTS_DIR;
    plan_.collectives.env = {{"NCCL_NET_GDR_LEVEL", "PHB"}};
    plan_.collectives.ranks_per_node = 2;
    plan_.collectives.sizes = {8, 8LL << 30, 2};
    plan_.collectives.timeout = absl::Seconds(60);
    plan_.collectives.operations = {"all_reduce", "alltoall"};
    const char* agents[] = {"localhost:7070", "127.0.0.1:7071"};
    for (int i = 0; i < 2; ++i) {
      plan::Node node;
      node.name = absl::StrCat("node", i + 1);
      node.agent = agents[i];
      node.gpus = 2;
      // Two rails on node1: the HCA list's comma must reach the rank whole.
      node.rails = i == 0 ? std::vector<std::string>{"mlx5_0", "mlx5_2"}
                          : std::vector<std::string>{"mlx5_1"};
      plan_.nodes.push_back(node);
      NodeState state;
      state.node = node;
      state.reachable = true;
      v1::Inventory inventory;
      v1::RdmaDevice* rail = inventory.add_rdma_devices();
      rail->set_name(node.rails[0]);
      rail->add_ports()->set_netdev(absl::StrCat("ib", i));
      state.inventory = inventory;
      nodes_.push_back(std::move(state));
    }
  }

  // The rows the recorded table of `binary` parses to on its own.
  size_t RecordedRows(const std::string& file) {
    return sweep::ParseNcclTestsOutput(ReadFile(kTables / file)).rows.size();
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
};

TEST_F(MpirunLauncherTest, EachScopeIsOneMpirunAndEveryRankGetsItsNodesEnvironment) {
  const struct {
    CollectiveScope scope;
    std::string hosts;
  } launches[] = {
      {{"1-node", {0}, "all_reduce"}, "localhost:2"},
      {{"1-node", {1}, "all_reduce"}, "127.0.0.1:2"},
      {{"2-node", {0, 1}, "all_reduce"}, "localhost:2,127.0.0.1:2"},
      {{"2-node", {0, 1}, "alltoall"}, "localhost:2,127.0.0.1:2"},
  };
  for (const auto& launch : launches) {
    const CollectiveScope& scope = launch.scope;
    SCOPED_TRACE(absl::StrCat(scope.name, " ", scope.operation, " on ", launch.hosts));
    MpirunSweepResult result = RunMpirunSweep(plan_, nodes_, scope);
    ASSERT_TRUE(result.not_run.empty()) << result.not_run;
    EXPECT_EQ(result.command[0], "mpirun");
    EXPECT_EQ(std::count(result.command.begin(), result.command.end(), "--allow-run-as-root"),
              ::geteuid() == 0 ? 1 : 0);
    EXPECT_TRUE(HasPair(result.command, "--host", launch.hosts))
        << absl::StrJoin(result.command, " ");

    // Every rank ran the operation's binary and got its node's environment.
    const int ranks = 2 * static_cast<int>(scope.nodes.size());
    const std::vector<RankReport> reports = Reports(result.error_output);
    ASSERT_EQ(reports.size(), static_cast<size_t>(ranks)) << result.error_output;
    for (const RankReport& report : reports) {
      SCOPED_TRACE(absl::StrCat("rank ", report.rank));
      const plan::Node& node = plan_.nodes[scope.nodes[report.rank / 2]];
      EXPECT_EQ(report.binary, scope.operation + "_perf");
      EXPECT_EQ(report.size, ranks);
      EXPECT_EQ(report.args, "-b|8|-e|8589934592|-f|2|-g|1|-w|5|-n|20|-c|1");
      EXPECT_EQ(report.env.at("NCCL_IB_SL"), "4");
      EXPECT_EQ(report.env.at("NCCL_IB_HCA"), "=" + absl::StrJoin(node.rails, ","));
      EXPECT_EQ(report.env.at("NCCL_SOCKET_IFNAME"),
                absl::StrCat("=ib", scope.nodes[report.rank / 2]));
      EXPECT_EQ(report.env.at("NCCL_NET_GDR_LEVEL"), "PHB");
      EXPECT_EQ(report.env.at("NCCL_DEBUG"), "INFO");
      EXPECT_EQ(report.env.size(), 5u);
    }

    // The recorded table, printed once by rank 0, is the sweep.
    const v1::CollectiveSweep& sweep = result.sweep;
    EXPECT_EQ(sweep.scope(), scope.name);
    EXPECT_EQ(sweep.ranks(), ranks);
    if (scope.operation == "all_reduce") {
      // Two H100 nodes, 16 ranks, 8 B to 8 GiB: 31 sizes.
      EXPECT_TRUE(sweep.ok()) << sweep.error();
      ASSERT_EQ(sweep.rows_size(), 31);
      EXPECT_EQ(sweep.rows(0).bytes(), 8);
      EXPECT_EQ(sweep.rows(30).bytes(), 8LL << 30);
      EXPECT_GT(sweep.large_busbw_gbytes(), 0);
      EXPECT_NE(absl::StrJoin(sweep.notes(), "\n")
                    .find("all_reduce_perf's table lists 16 rank(s) but mpirun started"),
                std::string::npos)
          << absl::StrJoin(sweep.notes(), "\n");
    } else {
      EXPECT_EQ(sweep.operation(), "alltoall");
      EXPECT_EQ(static_cast<size_t>(sweep.rows_size()),
                RecordedRows("old-format-1node-a100-sxm4-40gb-alltoall.txt"));
    }
  }
}

// The phase picks the scopes (1-node on each node, the pair; all-nodes is
// the pair again on two nodes) and runs each through mpirun.
TEST_F(MpirunLauncherTest, ThePhaseRunsEveryScopeAndOperationThroughMpirun) {
  Progress progress(stderr, /*quiet=*/true);
  clustercert::testing::SimulatedClock clock;
  CollectivesOutcome outcome =
      RunCollectivesPhase(nodes_, plan_, progress, clock, nullptr, nullptr, nullptr);
  ASSERT_TRUE(outcome.not_run.empty()) << outcome.not_run;
  ASSERT_EQ(outcome.skipped.size(), 1u);
  EXPECT_NE(outcome.skipped[0].find("all-nodes: the 2 node(s) that answered are the 2-node scope"),
            std::string::npos)
      << outcome.skipped[0];
  std::vector<std::string> ran;
  for (const v1::CollectiveSweep& sweep : outcome.sweeps) {
    EXPECT_EQ(sweep.launcher(), "mpirun");
    ran.push_back(absl::StrCat(
        sweep.scope(), " ", sweep.operation().empty() ? "all_reduce" : sweep.operation(), " ",
        absl::StrJoin(sweep.nodes(), ","), " ", sweep.ranks(), " ", sweep.rows_size()));
  }
  const std::string alltoall_rows =
      absl::StrCat(RecordedRows("old-format-1node-a100-sxm4-40gb-alltoall.txt"));
  EXPECT_EQ(ran, (std::vector<std::string>{
                     "1-node all_reduce node1 2 31", "1-node alltoall node1 2 " + alltoall_rows,
                     "1-node all_reduce node2 2 31", "1-node alltoall node2 2 " + alltoall_rows,
                     "2-node all_reduce node1,node2 4 31",
                     "2-node alltoall node1,node2 4 " + alltoall_rows}));
}

}  // namespace
}  // namespace clustercert::controller
