// Issue 15, deliverable 8: `plan check` stays linear and bounded whatever the
// file holds. Each attack seen (aliased node entries, a million unknown keys,
// alias bombs) is reproduced here with small limits or small inputs; the
// timing against the 2 s target is bench/plan_check_scale.sh's job.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "controller/plan/plan_parser.h"
#include "controller/plan/yaml_document.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan {
namespace {

using ::clustercert::controller::plan::testing::kFile;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Message(const absl::StatusOr<Plan>& plan) {
  return plan.ok() ? "" : std::string(plan.status().message());
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// No pairwise or collectives section: those phases are off.
constexpr char kHead[] =
    "cluster: big\n"
    "fabric: {type: ethernet}\n";

// `count` nodes, one line each, on distinct agents.
std::string NodesPlan(size_t count) {
  std::string plan = absl::StrCat(kHead, "nodes:\n");
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&plan, "  - {name: node", i, ", agent: \"10.0.", i / 256, ".", i % 256,
                    ":7070\"}\n");
  }
  return plan;
}

TEST(PlanLimitsTest, AliasedNodeEntriesAreCheckedOnceEachAndTheErrorsAreCapped) {
  // The attack: one anchored node, then thousands of aliases of it. Each is a
  // duplicate name and agent; the list of errors stops at max_errors.
  std::string plan =
      absl::StrCat(kHead, "nodes:\n  - &n {name: node0, agent: \"10.0.0.1:7070\"}\n");
  for (int i = 0; i < 5000; ++i) plan += "  - *n\n";
  const std::vector<std::string> lines = Lines(Message(ParsePlan(plan, kFile)));
  ASSERT_EQ(lines.size(), 101u);
  EXPECT_THAT(lines[0], HasSubstr("nodes[1].name is node0, already the name of nodes[0]"));
  EXPECT_THAT(lines[100], HasSubstr("and 9900 more error(s) after this line, not listed (only "
                                    "the first 100 are)"));
}

TEST(PlanLimitsTest, TheErrorCapListsTheFirstErrorsOfTheFile) {
  std::string plan = absl::StrCat(kHead, "nodes:\n");
  for (int i = 0; i < 30; ++i) {
    absl::StrAppend(&plan, "  - {name: node", i, ", agent: \"10.0.0.", i + 1, ":7070\", gpu: 1}\n");
  }
  PlanLimits limits;
  limits.max_errors = 5;
  const std::vector<std::string> lines = Lines(Message(ParsePlan(plan, kFile, limits)));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_THAT(lines[0], StartsWith("plans/t.yaml:4:"));
  EXPECT_THAT(lines[0], HasSubstr("nodes[0].gpu is not a known key; did you mean gpus?"));
  EXPECT_THAT(lines[4], StartsWith("plans/t.yaml:8:"));
  EXPECT_THAT(lines[5], StartsWith("plans/t.yaml:8:"));
  EXPECT_THAT(lines[5], HasSubstr("and 25 more error(s)"));
}

TEST(PlanLimitsTest, MoreNodesThanTheLimitIsOneErrorNamingTheCountAndTheLimit) {
  PlanLimits limits;
  limits.max_nodes = 3;
  EXPECT_TRUE(ParsePlan(NodesPlan(3), kFile, limits).ok())
      << Message(ParsePlan(NodesPlan(3), kFile, limits));
  EXPECT_EQ(Message(ParsePlan(NodesPlan(4), kFile, limits)),
            "plans/t.yaml:4:3: nodes lists 4 entries; a plan may hold at most 3 nodes (certify a "
            "larger cluster as several plans, e.g. one per pod or rail group).");
}

TEST(PlanLimitsTest, AMapWithMoreKeysThanAnyPlanMapIsRefusedBeforeItIsWalked) {
  // The attack: a million unknown keys at the top level (21 s and 1.5 GB).
  std::string plan = NodesPlan(2);
  for (int i = 0; i < 1001; ++i) absl::StrAppend(&plan, "k", i, ": 1\n");
  EXPECT_EQ(Message(ParsePlan(plan, kFile)),
            "plans/t.yaml:1:1: this map has more than 1000 keys; no map of a plan has more than a "
            "few dozen, so this is not a plan (check that it is the right file).");
}

TEST(PlanLimitsTest, UnknownKeysUnderTheMapLimitAreEachReportedOnce) {
  std::string plan = NodesPlan(2);
  for (int i = 0; i < 500; ++i) absl::StrAppend(&plan, "k", i, ": 1\n");
  const std::vector<std::string> lines = Lines(Message(ParsePlan(plan, kFile)));
  ASSERT_EQ(lines.size(), 101u);
  EXPECT_THAT(lines[0], HasSubstr("k0 is not a known key. Keys allowed at the top level:"));
  EXPECT_THAT(lines[100], HasSubstr("and 400 more error(s)"));
}

TEST(PlanLimitsTest, ABillionLaughsIsRefusedWhileItIsRead) {
  // Ten levels of ten aliases: 10^10 values once expanded, a few hundred bytes written.
  std::string plan = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 10; ++level) {
    std::string items;
    for (int i = 0; i < 10; ++i) absl::StrAppend(&items, i ? ", " : "", "*a", level - 1);
    absl::StrAppend(&plan, "a", level, ": &a", level, " [", items, "]\n");
  }
  const std::string message = Message(ParsePlan(plan, kFile));
  EXPECT_THAT(message, StartsWith("plans/t.yaml:"));
  EXPECT_THAT(message, HasSubstr("the plan holds more than 4000000 YAML values once its aliases "
                                 "are expanded"));
  EXPECT_EQ(Lines(message).size(), 1u);
}

TEST(PlanLimitsTest, TheExpansionLimitCountsEveryUseOfAnAlias) {
  const std::string plan = absl::StrCat(
      NodesPlan(2), "expect: &e {ntp_synced: true, ofed: true}\nx1: *e\nx2: *e\nx3: *e\n");
  PlanLimits limits;
  // 31 values as written, 43 once each alias counts the 5 values it stands for.
  limits.yaml.max_values = 40;
  EXPECT_THAT(Message(ParsePlan(plan, kFile, limits)),
              HasSubstr("more than 40 YAML values once its aliases are expanded"));
  limits.yaml.max_values = 200;
  EXPECT_THAT(Message(ParsePlan(plan, kFile, limits)), HasSubstr("x1 is not a known key"));
}

TEST(PlanLimitsTest, AnAliasInsideItsOwnAnchorIsRefused) {
  EXPECT_THAT(Message(ParsePlan("cluster: a\nnodes: &n [*n]\n", kFile)),
              StartsWith("plans/t.yaml:2:12: the alias *n names no complete value &n before it"));
}

TEST(PlanLimitsTest, AFileOverTheSizeLimitIsRefusedUnread) {
  PlanLimits limits;
  limits.max_bytes = 100;
  const std::string plan = NodesPlan(4);
  EXPECT_EQ(Message(ParsePlan(plan, kFile, limits)),
            absl::StrCat("plans/t.yaml:1:1: the file is ", plan.size(),
                         " bytes; a plan may be at most 100 bytes (a plan of 100,000 nodes is "
                         "about 16 MB): check that it is the plan."));
}

TEST(PlanLimitsTest, AliasesThatShareSettingsStillWork) {
  const std::string plan =
      "cluster: shared\n"
      "fabric: {type: roce, link_rate_gbps: 200}\n"
      "nodes:\n"
      "  - {name: node1, agent: \"10.0.0.1:7070\", rails: &rails [mlx5_0, mlx5_1], gpus: 0}\n"
      "  - {name: node2, agent: \"10.0.0.2:7070\", rails: *rails, gpus: 0}\n"
      "pairwise: {engine: verbs, memory: [host]}\n";
  const absl::StatusOr<Plan> parsed = ParsePlan(plan, kFile);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->nodes.size(), 2u);
  EXPECT_EQ(parsed->nodes[1].rails, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
}

TEST(PlanLimitsTest, AHugeUnknownKeyCostsNoMoreThanItsLength) {
  // The typo suggestion skips keys whose length alone rules them out. (A
  // plain key is at most 1024 characters in YAML; "? " writes a longer one.)
  const std::string key(1 << 20, 'k');
  EXPECT_THAT(Message(ParsePlan(absl::StrCat(NodesPlan(2), "? ", key, "\n: 1\n"), kFile)),
              HasSubstr(" is not a known key. Keys allowed at the top level:"));
}

TEST(PlanLimitsTest, RepeatedRailsAndKeysAreFoundInOnePass) {
  std::string rails;
  for (int i = 0; i < 3000; ++i) absl::StrAppend(&rails, i ? ", " : "", "mlx5_", i % 1500);
  const std::string plan = absl::StrCat(
      "cluster: a\nfabric: {type: roce}\nnodes:\n  - {name: n1, agent: \"10.0.0.1:7070\", rails: [",
      rails, "]}\n");
  const std::vector<std::string> lines = Lines(Message(ParsePlan(plan, kFile)));
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], HasSubstr("nodes[0].rails[1500] is mlx5_0, already listed as "
                                  "nodes[0].rails[0]; each rail may appear once per node."));
}

// Issue 34: a 200 KB plan nested 100,000 deep cost a minute of CPU (libyaml's
// scanner pays per token in proportion to the depth). The parse now stops at
// the 65th level, where it is still cheap; the bound on the time is 30 times
// what it takes on a loaded CI runner, and a twentieth of the minute it cost.
TEST(PlanLimitsTest, DeepFlowNestingIsRefusedFastAtTheLevelOverTheLimit) {
  const std::string plan =
      absl::StrCat("cluster: ", std::string(100'000, '['), std::string(100'000, ']'), "\n");
  const absl::Time start = absl::Now();
  const std::string message = Message(ParsePlan(plan, kFile));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  // The map is level 1 and the first '[' (column 10) level 2: level 65 opens at column 73.
  EXPECT_EQ(message,
            "plans/t.yaml:1:73: the plan nests collections more than 64 deep here (maps and "
            "lists inside one another, aliases expanded); a plan nests about 4, so this is not a "
            "plan (check that it is the right file).");
  const std::string maps = absl::StrCat("cluster: ", [] {
    std::string nested;
    for (int i = 0; i < 100'000; ++i) nested += "{a: ";
    return nested;
  }());
  EXPECT_THAT(Message(ParsePlan(maps, kFile)),
              StartsWith("plans/t.yaml:1:262: the plan nests collections more than 64 deep"));
}

TEST(PlanLimitsTest, DeepBlockNestingIsRefusedFastAtTheLevelOverTheLimit) {
  std::string plan = "cluster: a\nnodes:\n";
  for (int i = 0; i < 100'000; ++i) plan += "- ";
  plan += "x\n";
  const absl::Time start = absl::Now();
  const std::string message = Message(ParsePlan(plan, kFile));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  // The map is level 1 and the first "- " (column 1) level 2: level 65 opens at column 127.
  EXPECT_THAT(message,
              StartsWith("plans/t.yaml:3:127: the plan nests collections more than 64 deep here"));
}

TEST(PlanLimitsTest, SixtyFourLevelsAreReadAndSixtyFiveAreNot) {
  auto nested = [](int depth) {
    return absl::StrCat(std::string(depth, '['), std::string(depth, ']'));
  };
  YamlError error;
  EXPECT_NE(YamlDocument::Parse(nested(64), YamlLimits(), &error), nullptr) << error.message;
  EXPECT_EQ(YamlDocument::Parse(nested(65), YamlLimits(), &error), nullptr);
  EXPECT_EQ(error.mark.column, 64);  // 0-based: the 65th '['
  EXPECT_THAT(error.message, HasSubstr("more than 64 deep"));
  // A plan nested as deep as the limit gets its ordinary errors, not the limit's.
  EXPECT_THAT(Message(ParsePlan(absl::StrCat("cluster: ", nested(63), "\n"), kFile)),
              Not(HasSubstr("deep")));
}

TEST(PlanLimitsTest, AnAliasCountsTheDepthOfTheValueItStandsFor) {
  // 63 levels under the root map, legal; then 2 levels around an alias of it: 66.
  const std::string anchored = absl::StrCat("a: &a ", std::string(63, '['), std::string(63, ']'));
  YamlError error;
  EXPECT_NE(YamlDocument::Parse(absl::StrCat(anchored, "\nb: *a\n"), YamlLimits(), &error), nullptr)
      << error.message;
  EXPECT_EQ(YamlDocument::Parse(absl::StrCat(anchored, "\nb: [*a]\n"), YamlLimits(), &error),
            nullptr);
  EXPECT_EQ(error.mark.line, 1);
  EXPECT_THAT(error.message, HasSubstr("more than 64 deep here"));
}

}  // namespace
}  // namespace clustercert::controller::plan
