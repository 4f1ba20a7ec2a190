#include "controller/pairwise/schedule/pair_schedule.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/pairwise/schedule/pair_patterns.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/pairwise/schedule/schedule_properties.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

using plan::PairwisePattern;
using testing::CirculantPairs;
using testing::NodeTwice;

// Tests per (client, server, rail).
std::map<std::tuple<int, int, int>, int> TestCounts(const std::vector<Round>& rounds) {
  std::map<std::tuple<int, int, int>, int> counts;
  for (const Round& round : rounds) {
    for (const PairTest& test : round.tests) ++counts[{test.client, test.server, test.rail}];
  }
  return counts;
}

// Each round's idle list is exactly the nodes without a test, ascending.
void ExpectIdleIsTheRest(int nodes, const std::vector<Round>& rounds) {
  for (const Round& round : rounds) {
    std::vector<bool> busy(nodes, false);
    for (const PairTest& test : round.tests) busy[test.client] = busy[test.server] = true;
    std::vector<int> idle;
    for (int node = 0; node < nodes; ++node) {
      if (!busy[node]) idle.push_back(node);
    }
    EXPECT_EQ(round.idle, idle);
  }
}

TEST(BuildScheduleTest, AllPairsOneRailFor2To64Nodes) {
  for (int n = 2; n <= 64; ++n) {
    SCOPED_TRACE(n);
    absl::StatusOr<std::vector<Round>> rounds =
        BuildSchedule(n, PairwisePattern::kAllPairs, 0, 1, std::vector<int>(n, 1));
    ASSERT_TRUE(rounds.ok()) << rounds.status();
    EXPECT_EQ(static_cast<int>(rounds->size()), n % 2 == 0 ? n - 1 : n);
    EXPECT_EQ(NodeTwice(*rounds), "");
    ExpectIdleIsTheRest(n, *rounds);
    std::map<std::tuple<int, int, int>, int> expected;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) expected[{a, b, 0}] = 1;  // lower index is the client
    }
    EXPECT_EQ(TestCounts(*rounds), expected);
    for (const Round& round : *rounds) {
      EXPECT_EQ(static_cast<int>(round.tests.size()), n / 2);
      EXPECT_EQ(round.idle.size(), n % 2 == 0 ? 0u : 1u);
    }
  }
}

TEST(BuildScheduleTest, BothDirectionsTestEveryOrderedPairOnce) {
  for (int n = 2; n <= 64; ++n) {
    SCOPED_TRACE(n);
    absl::StatusOr<std::vector<Round>> rounds =
        BuildSchedule(n, PairwisePattern::kAllPairs, 0, 2, {});
    ASSERT_TRUE(rounds.ok()) << rounds.status();
    const int per_pass = n % 2 == 0 ? n - 1 : n;
    ASSERT_EQ(static_cast<int>(rounds->size()), 2 * per_pass);
    EXPECT_EQ(NodeTwice(*rounds), "");
    std::map<std::tuple<int, int, int>, int> expected;
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a != b) expected[{a, b, kDataPlane}] = 1;
      }
    }
    EXPECT_EQ(TestCounts(*rounds), expected);
    for (int r = 0; r < per_pass; ++r) {
      for (const PairTest& test : (*rounds)[r].tests) EXPECT_LT(test.client, test.server);
    }
  }
}

TEST(BuildScheduleTest, DataPlaneWhenNoRailsAreGiven) {
  absl::StatusOr<std::vector<Round>> rounds =
      BuildSchedule(5, PairwisePattern::kAllPairs, 0, 1, {});
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(rounds->size(), 5u);
  for (const Round& round : *rounds) {
    for (const PairTest& test : round.tests) EXPECT_EQ(test.rail, kDataPlane);
  }
}

TEST(BuildScheduleTest, TwoRailsTestEveryPairOnEachRailInSubRounds) {
  for (int n = 2; n <= 64; ++n) {
    SCOPED_TRACE(n);
    absl::StatusOr<std::vector<Round>> rounds =
        BuildSchedule(n, PairwisePattern::kAllPairs, 0, 1, std::vector<int>(n, 2));
    ASSERT_TRUE(rounds.ok()) << rounds.status();
    const int node_rounds = n % 2 == 0 ? n - 1 : n;
    ASSERT_EQ(static_cast<int>(rounds->size()), 2 * node_rounds);
    EXPECT_EQ(NodeTwice(*rounds), "");
    ExpectIdleIsTheRest(n, *rounds);
    std::map<std::tuple<int, int, int>, int> expected;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) expected[{a, b, 0}] = expected[{a, b, 1}] = 1;
    }
    EXPECT_EQ(TestCounts(*rounds), expected);
    // Rail 0 for a round's pairs, then rail 1 for the same pairs.
    for (int r = 0; r < node_rounds; ++r) {
      const Round& first = (*rounds)[2 * r];
      const Round& second = (*rounds)[2 * r + 1];
      ASSERT_EQ(first.tests.size(), second.tests.size());
      for (size_t t = 0; t < first.tests.size(); ++t) {
        EXPECT_EQ(first.tests[t].rail, 0);
        EXPECT_EQ(second.tests[t], (PairTest{first.tests[t].client, first.tests[t].server, 1}));
      }
    }
  }
}

TEST(BuildScheduleTest, MixedRailCountsTestTheSharedRailsOnly) {
  const std::vector<int> rails = {2, 1, 3, 3, 2};
  absl::StatusOr<std::vector<Round>> rounds =
      BuildSchedule(5, PairwisePattern::kAllPairs, 0, 1, rails);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(NodeTwice(*rounds), "");
  ExpectIdleIsTheRest(5, *rounds);
  std::map<std::tuple<int, int, int>, int> expected;
  for (int a = 0; a < 5; ++a) {
    for (int b = a + 1; b < 5; ++b) {
      for (int rail = 0; rail < std::min(rails[a], rails[b]); ++rail) expected[{a, b, rail}] = 1;
    }
  }
  EXPECT_EQ(TestCounts(*rounds), expected);
  // Each node-level round takes as many sub-rounds as its pairs' largest shared rail count.
  int sub_rounds = 0;
  const std::vector<PairRound> node_rounds = *AllPairsRounds(5);
  for (const PairRound& round : node_rounds) {
    int most = 0;
    for (const auto& [a, b] : round) most = std::max(most, std::min(rails[a], rails[b]));
    sub_rounds += most;
  }
  EXPECT_EQ(static_cast<int>(rounds->size()), sub_rounds);
  for (const Round& round : *rounds) EXPECT_FALSE(round.tests.empty());
}

TEST(BuildScheduleTest, RingAndKBatchWithRails) {
  for (int n = 2; n <= 64; ++n) {
    for (auto [pattern, k] :
         {std::pair(PairwisePattern::kRing, 0), std::pair(PairwisePattern::kKBatch, 2),
          std::pair(PairwisePattern::kKBatch, 5)}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " k " << k);
      absl::StatusOr<std::vector<Round>> rounds =
          BuildSchedule(n, pattern, k, 1, std::vector<int>(n, 2));
      ASSERT_TRUE(rounds.ok()) << rounds.status();
      EXPECT_EQ(NodeTwice(*rounds), "");
      ExpectIdleIsTheRest(n, *rounds);
      const int reach = pattern == PairwisePattern::kRing ? 1 : k;
      std::map<std::tuple<int, int, int>, int> expected;
      for (const auto& [a, b] : CirculantPairs(n, reach)) {
        expected[{a, b, 0}] = expected[{a, b, 1}] = 1;
      }
      EXPECT_EQ(TestCounts(*rounds), expected);
      EXPECT_LE(static_cast<int>(rounds->size()), 2 * (2 * reach + 1));
      if (pattern == PairwisePattern::kRing) {
        EXPECT_EQ(static_cast<int>(rounds->size()), 2 * (n == 2 ? 1 : (n % 2 == 0 ? 2 : 3)));
      }
    }
  }
}

TEST(BuildScheduleTest, Errors) {
  auto message_of = [](const absl::StatusOr<std::vector<Round>>& result) {
    EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
    return std::string(result.status().message());
  };
  EXPECT_NE(message_of(BuildSchedule(1, PairwisePattern::kAllPairs, 0, 1, {}))
                .find("pairwise needs at least two nodes; the plan has 1"),
            std::string::npos);
  EXPECT_NE(message_of(BuildSchedule(6, PairwisePattern::kKBatch, 0, 1, {})).find("pairwise.k"),
            std::string::npos);
  EXPECT_NE(message_of(BuildSchedule(6, PairwisePattern::kAllPairs, 0, 3, {})).find("directions"),
            std::string::npos);
  message_of(BuildSchedule(6, PairwisePattern::kAllPairs, 0, 0, {}));
  EXPECT_NE(message_of(BuildSchedule(3, PairwisePattern::kRing, 0, 1, {1, 1})).find("one count"),
            std::string::npos);
  EXPECT_NE(message_of(BuildSchedule(3, PairwisePattern::kRing, 0, 1, {1, 0, 1})).find("node #1"),
            std::string::npos);
}

plan::Plan FourNodePlan() {
  plan::Plan plan;
  plan.cluster = "test";
  for (int i = 1; i <= 4; ++i) {
    plan::Node node;
    node.name = absl::StrCat("node", i);
    node.agent = absl::StrCat("192.168.100.1", i, ":7070");
    node.rails = {"mlx5_0", "mlx5_1"};
    plan.nodes.push_back(node);
  }
  plan.pairwise.enabled = true;
  return plan;
}

TEST(BuildScheduleFromPlanTest, FourNodesTwoRails) {
  plan::Plan plan = FourNodePlan();
  plan.pairwise.both_directions = false;
  absl::StatusOr<std::vector<Round>> rounds = BuildSchedule(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(rounds->size(), 6u);  // 3 rounds × 2 rails
  EXPECT_EQ(NodeTwice(*rounds), "");
  EXPECT_EQ(TestCounts(*rounds).size(), 12u);  // 6 pairs × 2 rails
  EXPECT_EQ(DescribeSchedule(plan, *rounds),
            "round 1/6: node1->node4 (mlx5_0), node2->node3 (mlx5_0); idle: —\n"
            "round 2/6: node1->node4 (mlx5_1), node2->node3 (mlx5_1); idle: —\n"
            "round 3/6: node1->node2 (mlx5_0), node3->node4 (mlx5_0); idle: —\n"
            "round 4/6: node1->node2 (mlx5_1), node3->node4 (mlx5_1); idle: —\n"
            "round 5/6: node1->node3 (mlx5_0), node2->node4 (mlx5_0); idle: —\n"
            "round 6/6: node1->node3 (mlx5_1), node2->node4 (mlx5_1); idle: —\n");
}

// pairwise.pairs_at_once: 1 measures each pair alone (the soft-RoCE lab,
// whose emulated links share two cores); every cell is still there, once.
TEST(BuildScheduleFromPlanTest, PairsAtOnceSplitsEachRound) {
  plan::Plan plan = FourNodePlan();
  plan.pairwise.both_directions = false;
  for (plan::Node& node : plan.nodes) node.rails = {"mlx5_0"};
  plan.pairwise.pairs_at_once = 1;
  absl::StatusOr<std::vector<Round>> rounds = BuildSchedule(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(DescribeSchedule(plan, *rounds),
            "round 1/6: node1->node4 (mlx5_0); idle: node2, node3\n"
            "round 2/6: node2->node3 (mlx5_0); idle: node1, node4\n"
            "round 3/6: node1->node2 (mlx5_0); idle: node3, node4\n"
            "round 4/6: node3->node4 (mlx5_0); idle: node1, node2\n"
            "round 5/6: node1->node3 (mlx5_0); idle: node2, node4\n"
            "round 6/6: node2->node4 (mlx5_0); idle: node1, node3\n");
  // At or above the round's width: the schedule as without the key.
  plan.pairwise.pairs_at_once = 2;
  absl::StatusOr<std::vector<Round>> whole = BuildSchedule(plan);
  plan.pairwise.pairs_at_once = 0;
  absl::StatusOr<std::vector<Round>> unlimited = BuildSchedule(plan);
  ASSERT_TRUE(whole.ok() && unlimited.ok());
  EXPECT_EQ(DescribeSchedule(plan, *whole), DescribeSchedule(plan, *unlimited));
}

TEST(LimitTestsPerRoundTest, SplitsInOrderAndKeepsEveryTest) {
  Round round;
  round.tests = {{0, 1, 0}, {2, 3, 0}, {4, 5, 0}};
  round.idle = {6};
  const std::vector<Round> limited = LimitTestsPerRound({round}, 2, 7);
  ASSERT_EQ(limited.size(), 2u);
  EXPECT_EQ(limited[0].tests, (std::vector<PairTest>{{0, 1, 0}, {2, 3, 0}}));
  EXPECT_EQ(limited[0].idle, (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(limited[1].tests, (std::vector<PairTest>{{4, 5, 0}}));
  EXPECT_EQ(limited[1].idle, (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(LimitTestsPerRound({round}, 0, 7).size(), 1u);
}

// The default: every ordered pair is a cell, so each node's send path and
// receive path are both measured on every rail.
TEST(BuildScheduleFromPlanTest, BothDirectionsByDefault) {
  const plan::Plan plan = FourNodePlan();
  absl::StatusOr<std::vector<Round>> rounds = BuildSchedule(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(rounds->size(), 12u);  // 3 rounds x 2 rails x 2 directions
  EXPECT_EQ(NodeTwice(*rounds), "");
  std::map<std::pair<int, int>, int> ordered;
  for (const Round& round : *rounds) {
    for (const PairTest& test : round.tests) ordered[{test.client, test.server}] += 1;
  }
  EXPECT_EQ(ordered.size(), 12u);  // N x (N - 1)
  for (const auto& [pair, rails] : ordered)
    EXPECT_EQ(rails, 2) << pair.first << "->" << pair.second;
  EXPECT_EQ(
      DescribeSchedule(plan, *rounds).rfind("round 1/12: node1->node4 (mlx5_0), node2->node3", 0),
      0u);
  EXPECT_NE(DescribeSchedule(plan, *rounds).find("round 7/12: node4->node1 (mlx5_0), node3->node2"),
            std::string::npos);
}

TEST(BuildScheduleFromPlanTest, BidirectionalTestsEachPairOnceBothWaysAtOnce) {
  plan::Plan plan = FourNodePlan();
  plan.pairwise.bidirectional = true;
  absl::StatusOr<std::vector<Round>> rounds = BuildSchedule(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(rounds->size(), 6u);
}

TEST(BuildScheduleFromPlanTest, TcpEngineUsesTheDataPlane) {
  plan::Plan plan = FourNodePlan();
  plan.pairwise.both_directions = false;
  plan.pairwise.engine = plan::PairwiseEngine::kTcp;
  plan.nodes.pop_back();
  for (plan::Node& node : plan.nodes) node.rails.clear();
  absl::StatusOr<std::vector<Round>> rounds = BuildSchedule(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(DescribeSchedule(plan, *rounds),
            "round 1/3: node2->node3 (data plane); idle: node1\n"
            "round 2/3: node1->node2 (data plane); idle: node3\n"
            "round 3/3: node1->node3 (data plane); idle: node2\n");
}

TEST(BuildScheduleFromPlanTest, KBatchAndRingFollowThePlan) {
  plan::Plan plan = FourNodePlan();
  plan.pairwise.both_directions = false;
  plan.pairwise.pattern = PairwisePattern::kRing;
  absl::StatusOr<std::vector<Round>> ring = BuildSchedule(plan);
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_EQ(ring->size(), 4u);              // 2 rounds × 2 rails
  EXPECT_EQ(TestCounts(*ring).size(), 8u);  // 4 neighbours × 2 rails
  plan.pairwise.pattern = PairwisePattern::kKBatch;
  plan.pairwise.k = 2;  // 2k+1 >= 4: every pair
  absl::StatusOr<std::vector<Round>> batch = BuildSchedule(plan);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->size(), 6u);
}

TEST(BuildScheduleFromPlanTest, DifferentRailNamesAreShownAtBothEnds) {
  plan::Plan plan = FourNodePlan();
  plan.nodes[3].rails = {"mlx5_2", "mlx5_3"};
  const std::string text = DescribeSchedule(plan, *BuildSchedule(plan));
  EXPECT_NE(text.find("node1->node4 (mlx5_0<->mlx5_2)"), std::string::npos) << text;
}

TEST(BuildScheduleFromPlanTest, Errors) {
  plan::Plan plan = FourNodePlan();
  plan.nodes[2].rails.clear();
  absl::Status no_rails = BuildSchedule(plan).status();
  EXPECT_TRUE(absl::IsInvalidArgument(no_rails));
  EXPECT_NE(no_rails.message().find("node node3 has no rails"), absl::string_view::npos)
      << no_rails;

  plan = FourNodePlan();
  plan.nodes.resize(1);
  absl::Status one = BuildSchedule(plan).status();
  EXPECT_TRUE(absl::IsInvalidArgument(one));
  EXPECT_NE(one.message().find("pairwise needs at least two nodes; the plan has 1"),
            absl::string_view::npos)
      << one;

  plan = FourNodePlan();
  plan.pairwise.pattern = PairwisePattern::kKBatch;  // k left at 0
  EXPECT_TRUE(absl::IsInvalidArgument(BuildSchedule(plan).status()));
}

TEST(DescribeScheduleTest, WithoutAPlan) {
  absl::StatusOr<std::vector<Round>> rounds =
      BuildSchedule(3, PairwisePattern::kRing, 0, 1, {2, 1, 1});
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(DescribeSchedule(*rounds),
            "round 1/3: #0->#1 (rail 0); idle: #2\n"
            "round 2/3: #1->#2 (rail 0); idle: #0\n"
            "round 3/3: #0->#2 (rail 0); idle: #1\n");
  EXPECT_EQ(DescribeSchedule(std::vector<Round>{}), "");
}

}  // namespace
}  // namespace clustercert::controller::pairwise::schedule
