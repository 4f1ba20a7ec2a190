// Whole-file behaviour of ParsePlan/LoadPlan: empty and malformed files,
// unknown and repeated keys, many errors in one report, defaults, positions,
// the file's digest and unreadable files.

#include "controller/plan/plan_parser.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

std::string FixturePath(const std::string& name) {
  return absl::StrCat(CLUSTERCERT_FIXTURES, "/plans/", name);
}

std::string Message(const absl::StatusOr<Plan>& plan) {
  return std::string(plan.status().message());
}

TEST(PlanParserTest, BasePlanParses) {
  const absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->path, kFile);
  EXPECT_EQ(plan->cluster, "test-cluster");
}

TEST(PlanParserTest, EmptyFileIsAnError) {
  for (const char* text : {"", "   \n", "# only a comment\n", "~\n", "---\n"}) {
    const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
    ASSERT_FALSE(plan.ok()) << "text: " << text;
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(Message(plan),
              "plans/t.yaml:1:1: the plan is empty; it must be a map of sections: cluster, fabric, "
              "nodes, expect, agents, pairwise, collectives, uplink, other_fabrics, certificate, "
              "slurm (at least cluster and nodes).");
  }
}

TEST(PlanParserTest, TopLevelMustBeAMap) {
  EXPECT_THAT(Message(ParsePlan("- cluster: a\n- nodes: []\n", kFile)),
              StartsWith("plans/t.yaml:1:1: the plan's top level is a list; it must be a map of "
                         "sections"));
  EXPECT_THAT(Message(ParsePlan("# a plan\njust words\n", kFile)),
              StartsWith("plans/t.yaml:2:1: the plan's top level is \"just words\"; it must be a "
                         "map of sections"));
}

TEST(PlanParserTest, SyntaxErrorCarriesTheMark) {
  const absl::StatusOr<Plan> plan = LoadPlan(FixturePath("syntax-error.yaml"));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(plan),
            absl::StrCat(FixturePath("syntax-error.yaml"),
                         ":6:9: the file is not valid YAML: did not find expected ',' or ']' while "
                         "parsing a flow sequence (check the indentation and brackets here or just "
                         "above)."));
}

TEST(PlanParserTest, BadIndentationIsASyntaxError) {
  EXPECT_THAT(Message(ParsePlan("cluster: a\n  nodes: []\n", kFile)),
              StartsWith("plans/t.yaml:2:8: the file is not valid YAML: mapping values are not "
                         "allowed in this context"));
}

TEST(PlanParserTest, OnlyOneDocument) {
  EXPECT_EQ(Message(ParsePlan("cluster: a\n---\ncluster: b\n", kFile)),
            "plans/t.yaml:3:1: the file holds 2 YAML documents (separated by ---); a plan is "
            "exactly one.");
}

TEST(PlanParserTest, RepeatedKeyIsAnError) {
  ExpectRejected({"RepeatedKey",
                  {{"retries: 2", "retries: 2\n  retries: 3"}},
                  "|retries: 3",
                  "agents.retries is given twice (first on line 32); a key may appear only once "
                  "in a map."});
}

TEST(PlanParserTest, KeysMustBePlainWords) {
  EXPECT_THAT(Message(ParsePlan("cluster: a\n? [x, y]\n: 1\n", kFile)),
              HasSubstr("plans/t.yaml:2:3: the top level has a key that is not a plain word"));
}

TEST(PlanParserTest, UnknownKeysAtEveryLevelWithSuggestions) {
  const absl::StatusOr<Plan> plan = LoadPlan(FixturePath("typo-keys.yaml"));
  ASSERT_FALSE(plan.ok());
  const std::string file = FixturePath("typo-keys.yaml");
  EXPECT_THAT(
      ErrorLines(plan.status()),
      ElementsAre(
          absl::StrCat(file,
                       ":5:3: fabric.link_rate_gpbs is not a known key; did you mean "
                       "link_rate_gbps? Keys allowed in fabric: type, link_rate_gbps, "
                       "active_mtu, min_netdev_mtu, roce, infiniband, routing, cabling, topology, "
                       "lldp_wait_s."),
          absl::StrCat(file,
                       ":10:5: nodes[0].gpu is not a known key; did you mean gpus? Keys "
                       "allowed in nodes[0]: name, agent, data_ip, rails, gpus, leaf, cable."),
          absl::StrCat(file,
                       ":11:1: colectives is not a known key; did you mean collectives? "
                       "Keys allowed at the top level: cluster, fabric, nodes, expect, "
                       "agents, pairwise, collectives, uplink, other_fabrics, "
                       "certificate, slurm.")));
}

TEST(PlanParserTest, ReportsEveryErrorInTheFileInOrder) {
  const std::string file = FixturePath("many-errors.yaml");
  const absl::StatusOr<Plan> plan = LoadPlan(file);
  ASSERT_FALSE(plan.ok());
  const std::vector<std::string> lines = ErrorLines(plan.status());
  std::vector<std::string> prefixes;
  for (const std::string& line : lines) {
    const size_t key_end = line.find(' ', file.size() + 1);
    prefixes.push_back(line.substr(file.size() + 1, key_end - file.size() - 1));
  }
  EXPECT_THAT(prefixes, ElementsAre("2:10:", "4:9:", "5:19:", "6:15:", "9:12:", "10:21:", "12:11:",
                                    "15:11:", "17:15:", "17:25:", "19:12:", "21:12:", "22:21:",
                                    "24:16:", "24:27:", "24:39:", "26:8:"));
  EXPECT_THAT(lines[0], HasSubstr("cluster is \"many errors\""));
  EXPECT_THAT(lines[2], HasSubstr("fabric.link_rate_gbps is -200; it must be a positive number"));
  EXPECT_THAT(lines[6], HasSubstr("nodes[1].name is node1, already the name of nodes[0]"));
  EXPECT_THAT(lines[11], HasSubstr("pairwise.pattern is k-batch but pairwise.k is missing"));
  EXPECT_THAT(lines[13], HasSubstr("write 1536M"));
  EXPECT_THAT(lines[16], HasSubstr("certificate.out is a list"));
}

TEST(PlanParserTest, CrossSectionRules) {
  const std::string file = FixturePath("cross-section.yaml");
  const absl::StatusOr<Plan> plan = LoadPlan(file);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(
      ErrorLines(plan.status()),
      ElementsAre(absl::StrCat(file,
                               ":6:25: nodes[1].agent is 10.0.0.1:7070, already the agent of cpu1 "
                               "(line 5); each node needs its own agent address."),
                  absl::StrCat(file,
                               ":9:18: pairwise.memory includes cuda but nodes cpu1, cpu2 have "
                               "gpus: 0; cuda tests need a GPU on every node (set the node's gpus, "
                               "or remove cuda)."),
                  absl::StrCat(file,
                               ":11:12: collectives.backend is nccl but nodes cpu1, cpu2 have "
                               "gpus: 0; NCCL needs a GPU per rank (use backend: gloo on CPU-only "
                               "nodes)."),
                  absl::StrCat(file,
                               ":14:5: uplink.targets has an agent target but nodes cpu1, cpu2 "
                               "have no data_ip; the flows to an agent sink leave from each node's "
                               "data_ip (add data_ip to every node, or use an http or tcp "
                               "target)."),
                  absl::StrCat(file,
                               ":14:27: uplink.targets[0].node is storage1, which is not a node of "
                               "this plan; an agent target names one of the plan's nodes, or gives "
                               "agent and data_ip for a node-agent outside them.")));
}

TEST(PlanParserTest, FixtureTopLevelListAndEmpty) {
  EXPECT_THAT(Message(LoadPlan(FixturePath("top-level-list.yaml"))),
              HasSubstr("top-level-list.yaml:2:1: the plan's top level is a list"));
  EXPECT_THAT(Message(LoadPlan(FixturePath("empty.yaml"))),
              HasSubstr("empty.yaml:1:1: the plan is empty"));
}

TEST(PlanParserTest, DefaultsComeFromPlanH) {
  const absl::StatusOr<Plan> plan = LoadPlan(FixturePath("minimal.yaml"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Plan defaults;
  EXPECT_EQ(plan->cluster, "minimal");
  EXPECT_EQ(plan->fabric.type, FabricType::kEthernet);
  EXPECT_EQ(plan->fabric.link_rate_gbps, defaults.fabric.link_rate_gbps);
  EXPECT_EQ(plan->fabric.active_mtu, defaults.fabric.active_mtu);
  EXPECT_EQ(plan->fabric.min_netdev_mtu, defaults.fabric.min_netdev_mtu);
  EXPECT_EQ(plan->expect.clock_offset, defaults.expect.clock_offset);
  EXPECT_EQ(plan->expect.max_gpu_nic_relation, defaults.expect.max_gpu_nic_relation);
  EXPECT_EQ(plan->agents.tls.ca, defaults.agents.tls.ca);
  EXPECT_EQ(plan->agents.call_timeout, defaults.agents.call_timeout);
  EXPECT_EQ(plan->certificate.out, defaults.certificate.out);
  EXPECT_FALSE(plan->pairwise.enabled);
  EXPECT_FALSE(plan->collectives.enabled);
  EXPECT_FALSE(plan->uplink.enabled);
  ASSERT_EQ(plan->nodes.size(), 1u);
  EXPECT_EQ(plan->nodes[0].gpus, 0);
  EXPECT_EQ(plan->nodes[0].data_ip, "");
}

TEST(PlanParserTest, EmptySectionsEnableTheirPhaseWithDefaults) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070"}
pairwise:
  engine: tcp
collectives: {backend: gloo}
uplink:
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Plan defaults;
  EXPECT_TRUE(plan->pairwise.enabled);
  EXPECT_EQ(plan->pairwise.tests, defaults.pairwise.tests);
  EXPECT_EQ(plan->pairwise.message_bytes, 8388608);
  EXPECT_TRUE(plan->collectives.enabled);
  EXPECT_EQ(plan->collectives.sizes.max_bytes, defaults.collectives.sizes.max_bytes);
  EXPECT_TRUE(plan->uplink.enabled);
  EXPECT_THAT(plan->uplink.flows, ElementsAre(1, 8));
}

TEST(PlanParserTest, SizesTakeIntegersAndBinarySuffixes) {
  const auto sizes = [](const std::string& sizes_yaml) {
    return ParsePlan(Replace(BasePlan(), "sizes: {min: 8, max: 8G, factor: 2}", sizes_yaml), kFile);
  };
  absl::StatusOr<Plan> plan = sizes("sizes: {min: 8, max: \"8G\", factor: 4}");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.sizes.min_bytes, 8);
  EXPECT_EQ(plan->collectives.sizes.max_bytes, int64_t{8} * 1024 * 1024 * 1024);
  EXPECT_EQ(plan->collectives.sizes.factor, 4);

  plan = sizes("sizes: {min: 8K, max: 64M}");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.sizes.min_bytes, 8192);
  EXPECT_EQ(plan->collectives.sizes.max_bytes, 64 << 20);

  plan = sizes("sizes: {min: \"8\", max: 1G}");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.sizes.min_bytes, 8);

  // A fraction is refused, with the whole-number spelling offered.
  plan = sizes("sizes: {min: 8, max: 1.5G}");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(Message(plan), HasSubstr("collectives.sizes.max is \"1.5G\""));
  EXPECT_THAT(Message(plan), HasSubstr("Fractions are not accepted; write 1536M."));
  // Lower-case and decimal suffixes are not sizes.
  EXPECT_FALSE(sizes("sizes: {min: 8, max: 8g}").ok());
  EXPECT_FALSE(sizes("sizes: {min: 8, max: 8GB}").ok());
}

TEST(PlanParserTest, EnvNumbersBecomeText) {
  const absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->collectives.env,
              ElementsAre(Pair("NCCL_IB_GID_INDEX", "3"), Pair("NCCL_IB_HCA", "mlx5_0,mlx5_1")));
}

TEST(PlanParserTest, RecordsWhereEachKeyIs) {
  const absl::StatusOr<Plan> plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const SourceLocation& rate = plan->locations.at("fabric.link_rate_gbps");
  EXPECT_EQ(rate.line, 4);
  EXPECT_EQ(rate.column, 19);
  const SourceLocation& rail = plan->locations.at("nodes[1].rails[1]");
  EXPECT_EQ(rail.line, 17);
  EXPECT_EQ(rail.column, 21);
  EXPECT_EQ(plan->locations.count("pairwise.k"), 0u);
}

TEST(PlanParserTest, Sha256OfAKnownFile) {
  const absl::StatusOr<Plan> plan = LoadPlan(FixturePath("minimal.yaml"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  // sha256sum tests/fixtures/plans/minimal.yaml
  EXPECT_EQ(plan->sha256, "82564d971d4e3724a0a99fde884ae104490c32d51ae8f31694fce593588f96b4");
  EXPECT_EQ(plan->path, FixturePath("minimal.yaml"));
}

TEST(PlanParserTest, Sha256OfText) {
  // The digest is of the bytes as given: one more byte, another digest.
  const std::string text =
      "cluster: a\nfabric: {type: ethernet}\nnodes: [{name: a, agent: \"h:1\"}]\n";
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  const absl::StatusOr<Plan> other = ParsePlan(text + "\n", kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(plan->sha256, other->sha256);
  EXPECT_EQ(plan->sha256.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(PlanParserTest, MissingFile) {
  const std::string path = FixturePath("no-such-plan.yaml");
  const absl::StatusOr<Plan> plan = LoadPlan(path);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(plan), absl::StrCat(path, ": cannot read plan: No such file or directory"));
}

TEST(PlanParserTest, DirectoryIsNotAPlan) {
  const absl::StatusOr<Plan> plan = LoadPlan(FixturePath(""));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(plan),
              HasSubstr(": cannot read plan: it is a directory, not a regular file"));
}

}  // namespace
}  // namespace clustercert::controller::plan::testing

namespace clustercert::controller::plan {
namespace {

TEST(PlanParserCollectivesTest, ReadsLauncherTransportIterationsAndScopes) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", data_ip: 10.1.0.1}
expect: {management_separate: false}
collectives:
  backend: gloo
  transport: ibverbs
  warmup_iters: 3
  iters: 40
  timeout_s: 90
  scopes: [1-node, all-nodes]
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, "lab.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.transport, GlooTransport::kIbverbs);
  EXPECT_EQ(plan->collectives.launcher, CollectiveLauncher::kAgents);
  EXPECT_EQ(plan->collectives.warmup_iters, 3);
  EXPECT_EQ(plan->collectives.iters, 40);
  EXPECT_EQ(plan->collectives.timeout, absl::Seconds(90));
  EXPECT_EQ(plan->collectives.scopes, (std::vector<std::string>{"1-node", "all-nodes"}));
  // Left out: all_reduce alone, as before operations existed.
  EXPECT_EQ(plan->collectives.operations, (std::vector<std::string>{"all_reduce"}));
  EXPECT_FALSE(plan->expect.management_separate);
}

TEST(PlanParserCollectivesTest, RejectsKeysOfTheOtherBackendOrLauncher) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 4}
collectives:
  backend: nccl
  transport: tcp
  launcher: mpirun
  scopes: [3-node]
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, "lab.yaml");
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("collectives.transport picks gloo's transport, but the backend is nccl"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("3-node"), std::string::npos) << message;
}

TEST(PlanParserCollectivesTest, OperationsAreNcclTestsNames) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 0}
collectives:
  backend: gloo
  operations: [alltoall, all_gather, reduce_scatter, all_reduce]
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, "lab.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.operations,
            (std::vector<std::string>{"alltoall", "all_gather", "reduce_scatter", "all_reduce"}));
}

TEST(PlanParserCollectivesTest, RejectsUnknownOrRepeatedOperationsAtTheirLine) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 0}
collectives:
  backend: gloo
  operations:
    - allreduce
    - alltoall
    - alltoall
)";
  const absl::StatusOr<Plan> plan = ParsePlan(text, "lab.yaml");
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("lab.yaml:8:"), std::string::npos) << message;
  EXPECT_NE(message.find("allreduce"), std::string::npos) << message;
  EXPECT_NE(message.find("all_reduce, all_gather, reduce_scatter, alltoall"), std::string::npos)
      << message;
  EXPECT_NE(message.find("lab.yaml:10:"), std::string::npos) << message;
  EXPECT_NE(message.find("already listed in collectives.operations"), std::string::npos) << message;
}

// launcher mpirun runs every operation (one nccl-tests binary each) over
// every scope; the binaries' directory is an absolute plain path.
TEST(PlanParserCollectivesTest, MpirunTakesEveryOperationAndTheBinariesDirectory) {
  const std::string mpirun = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 4}
  - {name: b, agent: "node-b:7070", gpus: 4}
collectives:
  backend: nccl
  launcher: mpirun
  nccl_tests_dir: /opt/nccl-tests/build
  operations: [all_reduce, alltoall]
)";
  absl::StatusOr<Plan> plan = ParsePlan(mpirun, "lab.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.nccl_tests_dir, "/opt/nccl-tests/build");
  EXPECT_TRUE(plan->collectives.hostfile.empty());  // no longer required
}

TEST(PlanParserCollectivesTest, RejectsABinariesDirectoryThatIsNotAPlainAbsolutePath) {
  for (const std::string dir : {"opt/nccl-tests", "/opt/../bin", "/opt/nccl tests", "/opt/$HOME",
                                "/opt/nccl-tests/", "\"/opt/a;b\""}) {
    const std::string text = absl::StrCat(R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 4}
collectives:
  backend: nccl
  launcher: mpirun
  nccl_tests_dir: )",
                                          dir, "\n");
    absl::StatusOr<Plan> plan = ParsePlan(text, "lab.yaml");
    ASSERT_FALSE(plan.ok()) << dir;
    const std::string message(plan.status().message());
    EXPECT_NE(message.find("lab.yaml:8:"), std::string::npos) << message;
    EXPECT_NE(message.find("collectives.nccl_tests_dir is"), std::string::npos) << message;
    EXPECT_NE(message.find("an absolute directory holding nccl-tests' binaries"), std::string::npos)
        << message;
  }
}

std::string MpirunPlanWith(const std::string& collectives_lines) {
  return absl::StrCat(R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 4}
collectives:
  backend: nccl
  launcher: mpirun
)",
                      collectives_lines);
}

// Plans, and the plans older certificates embed, name the all_reduce_perf
// executable: it still reads, as the directory it sits in.
TEST(PlanParserCollectivesTest, TheOldSingleBinaryKeyStillReadsAsItsDirectory) {
  absl::StatusOr<Plan> plan = ParsePlan(
      MpirunPlanWith("  nccl_tests_binary: /opt/nccl-tests/build/all_reduce_perf\n"), "lab.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.nccl_tests_dir, "/opt/nccl-tests/build");
  plan = ParsePlan(MpirunPlanWith("  nccl_tests_binary: all_reduce_perf\n"), "lab.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives.nccl_tests_dir, "");
}

TEST(PlanParserCollectivesTest, TheOldKeyNamingAnotherBinaryPointsToTheDirectory) {
  for (const std::string& lines :
       {std::string("  nccl_tests_binary: /opt/nccl-tests/build/my_wrapper\n"),
        std::string("  nccl_tests_binary: /opt/x/all_reduce_perf\n  nccl_tests_dir: /opt/y\n")}) {
    absl::StatusOr<Plan> plan = ParsePlan(MpirunPlanWith(lines), "lab.yaml");
    ASSERT_FALSE(plan.ok()) << lines;
    const std::string message(plan.status().message());
    EXPECT_NE(message.find("lab.yaml:8:"), std::string::npos) << message;
    EXPECT_NE(message.find("collectives.nccl_tests_binary"), std::string::npos) << message;
    EXPECT_NE(message.find("replace it with collectives.nccl_tests_dir"), std::string::npos)
        << message;
  }
}

// mpirun starts each node's ranks on its agent's host: a host that
// OpenMPI's --host host:slots cannot carry is refused at the node's line.
TEST(PlanParserCollectivesTest, MpirunRefusesAnAgentHostItCannotLaunchOn) {
  const std::string text = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 4}
  - {name: b, agent: "[fd00::12]:7070", gpus: 4}
collectives:
  backend: nccl
  launcher: mpirun
)";
  absl::StatusOr<Plan> plan = ParsePlan(text, "lab.yaml");
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("lab.yaml:5:"), std::string::npos) << message;
  EXPECT_NE(message.find("collectives.launcher is mpirun, which starts b's ranks on its agent's "
                         "host, but fd00::12 is an IPv6 address"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("nodes[0]"), std::string::npos) << message;
}

TEST(PlanParserCollectivesTest, RejectsOperationsTheTransportCannotRun) {
  absl::StatusOr<Plan> plan;
  std::string message;
  const std::string ibverbs = R"(cluster: lab
fabric: {type: ethernet}
nodes:
  - {name: a, agent: "10.0.0.1:7070", gpus: 0}
collectives:
  backend: gloo
  transport: ibverbs
  operations: [alltoall]
)";
  plan = ParsePlan(ibverbs, "lab.yaml");
  ASSERT_FALSE(plan.ok());
  message = std::string(plan.status().message());
  EXPECT_NE(message.find("lab.yaml:8:"), std::string::npos) << message;
  EXPECT_NE(message.find("gloo's ibverbs transport has no alltoall"), std::string::npos) << message;
}

}  // namespace
}  // namespace clustercert::controller::plan
