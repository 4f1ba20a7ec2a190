#include "controller/pairwise/schedule/pattern_budget.h"

#include <set>
#include <string>
#include <utility>

#include "controller/pairwise/schedule/pair_schedule.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

using plan::PairwisePattern;

// n nodes with two rails each, one write_bw test of 10 s on host memory,
// both directions: a round costs 10 s + kCellOverhead.
plan::Plan PlanOf(int n, absl::Duration budget) {
  plan::Plan plan;
  for (int i = 0; i < n; ++i) {
    plan::Node node;
    node.name = "n" + std::to_string(i + 1);
    node.rails = {"mlx5_0", "mlx5_1"};
    plan.nodes.push_back(node);
  }
  plan.pairwise.enabled = true;
  plan.pairwise.tests = {"write_bw"};
  plan.pairwise.duration = absl::Seconds(10);
  plan.pairwise.budget = budget;
  return plan;
}

// Every node sends to someone and receives from someone in `rounds`.
void ExpectEveryPathCovered(int n, const std::vector<Round>& rounds) {
  std::set<int> senders;
  std::set<int> receivers;
  for (const Round& round : rounds) {
    for (const PairTest& test : round.tests) {
      senders.insert(test.client);
      receivers.insert(test.server);
    }
  }
  EXPECT_EQ(static_cast<int>(senders.size()), n);
  EXPECT_EQ(static_cast<int>(receivers.size()), n);
}

TEST(PatternBudgetTest, RoundTimeCountsTestsAndMemoryKinds) {
  plan::Plan plan = PlanOf(4, absl::ZeroDuration());
  EXPECT_EQ(RoundTime(plan), absl::Seconds(10) + kCellOverhead);
  plan.pairwise.tests = {"write_bw", "write_lat"};
  plan.pairwise.memory = {"host", "cuda"};
  for (auto& node : plan.nodes) node.gpus = 8;
  // Per rail: host, then the 4 GPUs nearest it, for each of the two tests.
  EXPECT_EQ(RoundTime(plan), (absl::Seconds(10) + kCellOverhead) * 10);
}

TEST(PatternBudgetTest, AllPairsWhenItFits) {
  // 8 nodes: 7 node rounds x 2 rails x 2 directions = 28 rounds of 11 s.
  const plan::Plan plan = PlanOf(8, absl::Minutes(6));
  auto choice = ChoosePattern(plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->pattern, PairwisePattern::kAllPairs);
  EXPECT_EQ(choice->rounds, 28);
  EXPECT_EQ(choice->estimate, absl::Seconds(28 * 11));
  EXPECT_NE(choice->summary.find("all-pairs, 28 rounds"), std::string::npos) << choice->summary;
}

TEST(PatternBudgetTest, WidestKBatchThatFitsAtScale) {
  // 1,024 nodes in one hour: all-pairs needs 1023 x 4 rounds (12.5 h).
  const plan::Plan plan = PlanOf(1024, absl::Minutes(60));
  auto choice = ChoosePattern(plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  ASSERT_EQ(choice->pattern, PairwisePattern::kKBatch);
  EXPECT_LE(choice->estimate, absl::Minutes(60));
  // The widest: the next k's bound (2k+3 node rounds x 2 rails x 2
  // directions) would not fit.
  EXPECT_GT(RoundTime(plan) * ((2 * (choice->k + 1) + 1) * 4), absl::Minutes(60));
  EXPECT_GE(choice->k, 30);
  EXPECT_NE(choice->summary.find("k-batch with k = " + std::to_string(choice->k)),
            std::string::npos)
      << choice->summary;
  // BuildSchedule runs what was chosen.
  auto built = BuildSchedule(plan);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_LE(static_cast<int>(built->size()), choice->rounds);  // the bound
  ExpectEveryPathCovered(1024, *built);
}

TEST(PatternBudgetTest, RingWhenNoKBatchFits) {
  // 2-rail ring over 64 nodes: 2 node rounds x 2 rails x 2 directions = 8
  // rounds (88 s); k = 2 needs at least 4 x 4 = 16 (176 s).
  const plan::Plan plan = PlanOf(64, absl::Seconds(120));
  auto choice = ChoosePattern(plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->pattern, PairwisePattern::kRing);
  EXPECT_EQ(choice->rounds, 8);
  auto built = BuildSchedule(plan);
  ASSERT_TRUE(built.ok());
  ExpectEveryPathCovered(64, *built);
}

TEST(PatternBudgetTest, TooShortForTheRingSaysWhatItNeeds) {
  const plan::Plan plan = PlanOf(64, absl::Minutes(1));
  auto choice = ChoosePattern(plan);
  ASSERT_FALSE(choice.ok());
  const std::string message(choice.status().message());
  EXPECT_NE(message.find("even the ring"), std::string::npos) << message;
  EXPECT_NE(message.find("1.5 min"), std::string::npos) << message;  // 8 x 11 s
  EXPECT_NE(message.find("raise the budget"), std::string::npos) << message;
  EXPECT_FALSE(BuildSchedule(plan).ok());
}

TEST(PatternBudgetTest, CountedRoundsAreTheBuiltOnes) {
  for (int n : {2, 3, 7, 8, 33}) {
    for (auto pattern : {PairwisePattern::kAllPairs, PairwisePattern::kRing}) {
      plan::Plan plan = PlanOf(n, absl::ZeroDuration());
      plan.pairwise.pattern = pattern;
      auto choice = ChoosePattern(plan);
      auto built = BuildSchedule(plan);
      ASSERT_TRUE(choice.ok() && built.ok());
      EXPECT_EQ(choice->rounds, static_cast<int>(built->size())) << n;
    }
  }
}

// pairwise.pairs_at_once splits every all-pairs round of N/2 pairs into
// ceil(N/2 / P) sub-rounds, and the budget counts them (for the ring and
// k-batch, whose rounds may hold fewer pairs, the count is a bound).
TEST(PatternBudgetTest, PairsAtOnceRoundsAreCounted) {
  for (int n : {2, 3, 7, 8}) {
    for (int per_round : {1, 2, 3}) {
      plan::Plan plan = PlanOf(n, absl::ZeroDuration());
      plan.pairwise.pairs_at_once = per_round;
      auto choice = ChoosePattern(plan);
      auto built = BuildSchedule(plan);
      ASSERT_TRUE(choice.ok() && built.ok());
      EXPECT_EQ(choice->rounds, static_cast<int>(built->size())) << n << " " << per_round;
    }
  }
}

TEST(PatternBudgetTest, WithoutBudgetThePlansPatternStands) {
  plan::Plan plan = PlanOf(16, absl::ZeroDuration());
  plan.pairwise.pattern = PairwisePattern::kRing;
  auto choice = ChoosePattern(plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->pattern, PairwisePattern::kRing);
  EXPECT_EQ(choice->rounds, 8);
}

TEST(PatternBudgetTest, LeafPatternWhenTheLeavesAreKnownAndItFits) {
  // 1,024 nodes on 32 leaves of 32: a leaf round holds 31 inside pairs and
  // 2 spine partners per node, so at most 34 node rounds x 2 rails x 2
  // directions = 136 rounds of 11 s (about 25 min).
  plan::Plan plan = PlanOf(1024, absl::Minutes(60));
  for (int i = 0; i < 1024; ++i) plan.nodes[i].leaf = "leaf" + std::to_string(i / 32);
  auto choice = ChoosePattern(plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->pattern, PairwisePattern::kLeaf);
  EXPECT_EQ(choice->rounds, 34 * 4);
  EXPECT_NE(choice->summary.find("each of the 32 leaves"), std::string::npos) << choice->summary;
  auto built = BuildSchedule(plan);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_LE(static_cast<int>(built->size()), choice->rounds);
  ExpectEveryPathCovered(1024, *built);
  // A budget the leaf pattern does not fit falls back to the widest k-batch.
  plan.pairwise.budget = absl::Minutes(20);
  choice = ChoosePattern(plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->pattern, PairwisePattern::kKBatch);
}

TEST(PatternBudgetTest, PatternLeafWithoutBudgetRunsTheLeaves) {
  plan::Plan plan = PlanOf(12, absl::ZeroDuration());
  plan.pairwise.pattern = PairwisePattern::kLeaf;
  for (int i = 0; i < 12; ++i) plan.nodes[i].leaf = i < 6 ? "a" : "b";
  auto built = BuildSchedule(plan);
  ASSERT_TRUE(built.ok()) << built.status();
  ExpectEveryPathCovered(12, *built);
  plan.nodes[3].leaf.clear();  // a plan the validator would refuse
  EXPECT_FALSE(BuildSchedule(plan).ok());
}

}  // namespace
}  // namespace clustercert::controller::pairwise::schedule
