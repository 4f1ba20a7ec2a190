// The incast schedule: receivers in node order (bounded), each with the k
// nodes after it around the ring as senders, one round per rail the round's
// nodes all have.
#include "controller/pairwise/incast/incast_schedule.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise::incast {
namespace {

using ::testing::ElementsAre;

std::vector<int> Receivers(const std::vector<IncastRound>& rounds) {
  std::vector<int> receivers;
  for (const IncastRound& round : rounds) receivers.push_back(round.receiver);
  return receivers;
}

TEST(IncastScheduleTest, EachReceiverTakesTheNextKNodesAroundTheRing) {
  const std::vector<IncastRound> rounds = BuildIncastRounds(5, 3, 64, {});
  ASSERT_EQ(rounds.size(), 5u);
  EXPECT_EQ(rounds[0], (IncastRound{0, {1, 2, 3}, -1}));
  EXPECT_EQ(rounds[3], (IncastRound{3, {4, 0, 1}, -1}));
  EXPECT_EQ(rounds[4], (IncastRound{4, {0, 1, 2}, -1}));
  // Every node sends in exactly k rounds.
  std::vector<int> sent(5, 0);
  for (const IncastRound& round : rounds) {
    for (int sender : round.senders) ++sent[static_cast<size_t>(sender)];
  }
  EXPECT_THAT(sent, ElementsAre(3, 3, 3, 3, 3));
}

TEST(IncastScheduleTest, ASmallClusterUsesAllItsOtherNodes) {
  const std::vector<IncastRound> rounds = BuildIncastRounds(3, 8, 64, {});
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_THAT(rounds[1].senders, ElementsAre(2, 0));
  EXPECT_THAT(BuildIncastRounds(2, 3, 64, {})[0].senders, ElementsAre(1));
}

TEST(IncastScheduleTest, MaxReceiversBoundsTheRunInNodeOrder) {
  EXPECT_THAT(Receivers(BuildIncastRounds(8, 3, 2, {})), ElementsAre(0, 1));
  EXPECT_EQ(BuildIncastRounds(8, 3, 100, {}).size(), 8u);
}

TEST(IncastScheduleTest, FewerThanTwoNodesHaveNoRound) {
  EXPECT_TRUE(BuildIncastRounds(1, 3, 64, {}).empty());
  EXPECT_TRUE(BuildIncastRounds(0, 3, 64, {}).empty());
}

// Rails pair by position: a round runs on each rail index its receiver and
// every one of its senders have.
TEST(IncastScheduleTest, OneRoundPerRailTheReceiverAndItsSendersShare) {
  const std::vector<IncastRound> rounds = BuildIncastRounds(4, 2, 64, {2, 2, 1, 2});
  // 0 <- {1, 2}: node 2 has one rail; 1 <- {2, 3}: one; 2 <- {3, 0}: one;
  // 3 <- {0, 1}: both rails.
  ASSERT_EQ(rounds.size(), 5u);
  EXPECT_EQ(rounds[0], (IncastRound{0, {1, 2}, 0}));
  EXPECT_EQ(rounds[2], (IncastRound{2, {3, 0}, 0}));
  EXPECT_EQ(rounds[3], (IncastRound{3, {0, 1}, 0}));
  EXPECT_EQ(rounds[4], (IncastRound{3, {0, 1}, 1}));
}

plan::Plan PlanWith(int nodes, plan::PairwiseEngine engine) {
  plan::Plan plan;
  plan.pairwise.engine = engine;
  plan.pairwise.incast.enabled = true;
  plan.pairwise.incast.senders = 2;
  plan.pairwise.incast.max_rounds = 3;
  for (int i = 0; i < nodes; ++i) {
    plan::Node node;
    node.name = "node" + std::to_string(i + 1);
    node.rails = {"mlx5_0", "mlx5_1"};
    plan.nodes.push_back(node);
  }
  return plan;
}

TEST(IncastScheduleTest, APlansRoundsFollowItsIncastKeysAndEngine) {
  plan::Plan plan = PlanWith(4, plan::PairwiseEngine::kVerbs);
  auto rounds = BuildIncastRounds(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_THAT(Receivers(*rounds), ElementsAre(0, 0, 1, 1, 2, 2));  // 3 receivers x 2 rails
  EXPECT_EQ(DescribeIncastRound(plan, (*rounds)[0]), "node2, node3 -> node1");

  plan.pairwise.engine = plan::PairwiseEngine::kTcp;
  rounds = BuildIncastRounds(plan);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  ASSERT_EQ(rounds->size(), 3u);
  EXPECT_EQ((*rounds)[2], (IncastRound{2, {3, 0}, -1}));
}

TEST(IncastScheduleTest, AVerbsNodeWithoutRailsIsAnError) {
  plan::Plan plan = PlanWith(3, plan::PairwiseEngine::kVerbs);
  plan.nodes[1].rails.clear();
  auto rounds = BuildIncastRounds(plan);
  ASSERT_FALSE(rounds.ok());
  EXPECT_THAT(std::string(rounds.status().message()), ::testing::HasSubstr("node node2"));
}

}  // namespace
}  // namespace clustercert::controller::pairwise::incast
