// launcher: mpirun without mpirun: the command each scope gets (hosts,
// ranks, each node's NCCL environment, the operation's binary), what the
// agents' workers get (NCCL_IB_SL), and how a launch's output is read.
#include "controller/collectives/mpirun_sweep.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/collectives/collective_job_spec.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

class CannedRunner : public process::CommandRunner {
 public:
  explicit CannedRunner(absl::StatusOr<process::CommandResult> result)
      : result_(std::move(result)) {}
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration) override {
    argv_ = argv;
    ++calls_;
    return result_;
  }
  std::vector<std::string> argv_;
  int calls_ = 0;

 private:
  absl::StatusOr<process::CommandResult> result_;
};

// An InfiniBand plan (SL 5) over three 4-GPU nodes; node c's rails differ.
plan::Plan MpirunPlan() {
  plan::Plan plan;
  plan.fabric.type = plan::FabricType::kInfiniband;
  plan.fabric.infiniband.service_level = 5;
  plan.collectives.enabled = true;
  plan.collectives.launcher = plan::CollectiveLauncher::kMpirun;
  plan.collectives.nccl_tests_dir = "/opt/nccl-tests/build";
  plan.collectives.env = {{"NCCL_NET_GDR_LEVEL", "PHB"}};
  plan.collectives.sizes = {8, 1 << 20, 2};
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    plan::Node node;
    node.name = names[i];
    node.agent = absl::StrCat("10.0.0.", i + 1, ":7070");
    node.gpus = 4;
    node.rails =
        i < 2 ? std::vector<std::string>{"mlx5_0", "mlx5_1"} : std::vector<std::string>{"mlx5_2"};
    plan.nodes.push_back(node);
  }
  return plan;
}

// Each node answered, its first rail's netdev named as given.
std::vector<NodeState> Nodes(const plan::Plan& plan, const std::string& netdev = "ib0") {
  std::vector<NodeState> nodes(plan.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].node = plan.nodes[i];
    nodes[i].reachable = true;
    v1::Inventory inventory;
    v1::RdmaDevice* device = inventory.add_rdma_devices();
    device->set_name(plan.nodes[i].rails.front());
    device->add_ports()->set_netdev(netdev);
    nodes[i].inventory = inventory;
  }
  return nodes;
}

// The application contexts of a command line, split at its ':' separators.
std::vector<std::vector<std::string>> Contexts(const std::vector<std::string>& argv) {
  std::vector<std::vector<std::string>> contexts(1);
  for (const std::string& arg : argv) {
    if (arg == ":") {
      contexts.emplace_back();
    } else {
      contexts.back().push_back(arg);
    }
  }
  return contexts;
}

bool HasPair(const std::vector<std::string>& args, const std::string& flag,
             const std::string& value) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == value) return true;
  }
  return false;
}

TEST(MpirunSweep, EachOperationRunsItsNcclTestsBinary) {
  plan::Plan plan = MpirunPlan();
  EXPECT_EQ(NcclTestsBinaryPath(plan, "all_reduce"), "/opt/nccl-tests/build/all_reduce_perf");
  EXPECT_EQ(NcclTestsBinaryPath(plan, "all_gather"), "/opt/nccl-tests/build/all_gather_perf");
  EXPECT_EQ(NcclTestsBinaryPath(plan, "reduce_scatter"),
            "/opt/nccl-tests/build/reduce_scatter_perf");
  EXPECT_EQ(NcclTestsBinaryPath(plan, "alltoall"), "/opt/nccl-tests/build/alltoall_perf");
  plan.collectives.nccl_tests_dir.clear();  // then by name on the nodes' PATH
  EXPECT_EQ(NcclTestsBinaryPath(plan, "alltoall"), "alltoall_perf");
}

TEST(MpirunSweep, TwoNodeScopeGetsBothHostsAndEachNodesEnvironment) {
  const plan::Plan plan = MpirunPlan();
  const std::vector<NodeState> nodes = Nodes(plan);
  const CollectiveScope scope{"2-node", {0, 2}, "alltoall"};
  absl::StatusOr<std::vector<std::string>> argv =
      MpirunCommand(plan, nodes, scope, /*as_root=*/false);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ((*argv)[0], "mpirun");
  EXPECT_EQ(std::count(argv->begin(), argv->end(), "--allow-run-as-root"), 0);
  EXPECT_TRUE(HasPair(*argv, "--host", "10.0.0.1:4,10.0.0.3:4"));
  EXPECT_TRUE(HasPair(*argv, "--bind-to", "none"));
  const auto contexts = Contexts(*argv);
  ASSERT_EQ(contexts.size(), 2u);
  const std::string hca[] = {"NCCL_IB_HCA==mlx5_0,mlx5_1", "NCCL_IB_HCA==mlx5_2"};
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<std::string>& context = contexts[i];
    SCOPED_TRACE(absl::StrJoin(context, " "));
    EXPECT_TRUE(HasPair(context, "-np", "4"));
    EXPECT_TRUE(HasPair(context, "-x", hca[i]));
    EXPECT_TRUE(HasPair(context, "-x", "NCCL_IB_SL=5"));
    EXPECT_TRUE(HasPair(context, "-x", "NCCL_SOCKET_IFNAME==ib0"));
    EXPECT_TRUE(HasPair(context, "-x", "NCCL_NET_GDR_LEVEL=PHB"));
    EXPECT_TRUE(HasPair(context, "-x", "NCCL_DEBUG=INFO"));
    const auto binary =
        std::find(context.begin(), context.end(), "/opt/nccl-tests/build/alltoall_perf");
    ASSERT_NE(binary, context.end());
    EXPECT_EQ(absl::StrJoin(binary + 1, context.end(), " "),
              "-b 8 -e 1048576 -f 2 -g 1 -w 5 -n 20 -c 1");
  }
}

TEST(MpirunSweep, OneNodeScopeIsThatNodeAloneAndRootIsAllowedWhenRoot) {
  plan::Plan plan = MpirunPlan();
  plan.collectives.hostfile = "/etc/clustercert/hosts";
  plan.collectives.ranks_per_node = 2;
  const std::vector<NodeState> nodes = Nodes(plan);
  absl::StatusOr<std::vector<std::string>> argv =
      MpirunCommand(plan, nodes, {"1-node", {1}, "all_reduce"}, /*as_root=*/true);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ((*argv)[1], "--allow-run-as-root");
  EXPECT_TRUE(HasPair(*argv, "--hostfile", "/etc/clustercert/hosts"));
  EXPECT_TRUE(HasPair(*argv, "--host", "10.0.0.2:2"));
  EXPECT_EQ(Contexts(*argv).size(), 1u);
  EXPECT_TRUE(HasPair(*argv, "-np", "2"));
  EXPECT_NE(std::find(argv->begin(), argv->end(), "/opt/nccl-tests/build/all_reduce_perf"),
            argv->end());

  const v1::CollectiveSweep frame = MpirunSweepFrame(plan, nodes, {"1-node", {1}, "all_gather"});
  EXPECT_EQ(frame.scope(), "1-node");
  EXPECT_EQ(frame.operation(), "all_gather");
  EXPECT_EQ(frame.launcher(), "mpirun");
  ASSERT_EQ(frame.nodes_size(), 1);
  EXPECT_EQ(frame.nodes(0), "b");
  EXPECT_EQ(frame.ranks(), 2);
}

// A netdev name from an agent's inventory is as untrusted as the plan: a
// value the workers' allow-list refuses never reaches mpirun.
TEST(MpirunSweep, AnEnvironmentValueTheAllowListRefusesStopsTheLaunch) {
  const plan::Plan plan = MpirunPlan();
  const std::vector<NodeState> nodes = Nodes(plan, "ib0/../../x");
  CannedRunner runner(process::CommandResult{});
  MpirunSweepResult result = RunMpirunSweep(plan, nodes, {"1-node", {0}, "all_reduce"}, runner,
                                            /*as_root=*/false);
  EXPECT_EQ(runner.calls_, 0);
  EXPECT_FALSE(result.sweep.ok());
  EXPECT_NE(result.sweep.error().find("was not started: a's NCCL environment: NCCL_SOCKET_IFNAME"),
            std::string::npos)
      << result.sweep.error();
}

TEST(MpirunSweep, MissingMpirunIsSkippedNotPassed) {
  const plan::Plan plan = MpirunPlan();
  CannedRunner runner(absl::NotFoundError("mpirun: not found on PATH"));
  MpirunSweepResult result =
      RunMpirunSweep(plan, Nodes(plan), {"all-nodes", {0, 1, 2}, "all_reduce"}, runner, false);
  EXPECT_EQ(result.not_run.rfind("skipped: ", 0), 0u);
  EXPECT_NE(result.not_run.find("openmpi-bin"), std::string::npos);
}

TEST(MpirunSweep, ParsesOutputIntoTheSweepModel) {
  process::CommandResult output;
  output.exit_code = 0;
  output.stdout_text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0\n"
      "#\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid   1234 on      node1 device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "node1:1234:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] [send] via NET/IB/0/GDRDMA\n"
      "#\n"
      "#                                                              out-of-place                "
      "       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)       \n"
      "           8             2     float     sum      -1    30.12    0.00    0.00      0    "
      "29.87    0.00    0.00      0\n"
      "     1048576        262144     float     sum      -1    60.50   17.33   30.33      0    "
      "60.10   17.45   30.53      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 15.2150 \n";
  CannedRunner runner(output);
  const plan::Plan plan = MpirunPlan();
  MpirunSweepResult result =
      RunMpirunSweep(plan, Nodes(plan), {"2-node", {0, 1}, "all_reduce"}, runner, false);
  ASSERT_TRUE(result.not_run.empty());
  EXPECT_EQ(result.command, runner.argv_);
  const v1::CollectiveSweep& sweep = result.sweep;
  EXPECT_TRUE(sweep.ok()) << sweep.error();
  EXPECT_EQ(sweep.launcher(), "mpirun");
  EXPECT_EQ(sweep.scope(), "2-node");
  EXPECT_EQ(sweep.ranks(), 8);
  ASSERT_EQ(sweep.rows_size(), 2);
  EXPECT_DOUBLE_EQ(sweep.rows(1).oop_busbw_gbytes(), 30.33);
  EXPECT_DOUBLE_EQ(sweep.large_busbw_gbytes(), 30.33);
  EXPECT_EQ(sweep.nccl_transport().net_ib_gdr_channels(), 1);
  EXPECT_EQ(sweep.transport(), "NET/IB+GDRDMA");
  // The table names one rank where mpirun started eight: said, not hidden.
  ASSERT_EQ(sweep.notes_size(), 1);
  EXPECT_EQ(sweep.notes(0),
            "/opt/nccl-tests/build/all_reduce_perf's table lists 1 rank(s) but "
            "mpirun started 8");
}

// The agents' NCCL workers get the same environment, the SL included.
TEST(NcclEnvFor, TheAgentWorkerGetsTheServiceLevelToo) {
  plan::Plan plan = MpirunPlan();
  plan.collectives.launcher = plan::CollectiveLauncher::kAgents;
  const std::vector<NodeState> nodes = Nodes(plan);
  absl::StatusOr<v1::CollectiveJobSpec> spec = BuildJobSpec(plan, nodes[0], {0, 4}, 8);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->env().at("NCCL_IB_SL"), "5");
  EXPECT_EQ(spec->env().at("NCCL_IB_HCA"), "=mlx5_0,mlx5_1");
  EXPECT_EQ(spec->env().at("NCCL_DEBUG"), "INFO");
  // The plan's own value wins (collectives.env judges the disagreement).
  plan.collectives.env["NCCL_IB_SL"] = "2";
  spec = BuildJobSpec(plan, nodes[0], {0, 4}, 8);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->env().at("NCCL_IB_SL"), "2");
  EXPECT_EQ(NcclEnvFor(plan, nodes[0]).at("NCCL_IB_SL"), "2");
}

}  // namespace
}  // namespace clustercert::controller
