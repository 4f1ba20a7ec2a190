#include "controller/pairwise/schedule/pair_patterns.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/controller/pairwise/schedule/schedule_properties.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

using testing::AllPairsOf;
using testing::CirculantPairs;
using testing::EachOnce;
using testing::NodeTwice;
using testing::PairCounts;

void ExpectTidy(const std::vector<PairRound>& rounds) {
  for (const PairRound& round : rounds) {
    EXPECT_TRUE(std::is_sorted(round.begin(), round.end()));
    for (const auto& [a, b] : round) EXPECT_LT(a, b);
  }
}

TEST(AllPairsRoundsTest, RoundRobinPropertiesFor2To64Nodes) {
  for (int n = 2; n <= 64; ++n) {
    SCOPED_TRACE(n);
    absl::StatusOr<std::vector<PairRound>> rounds = AllPairsRounds(n);
    ASSERT_TRUE(rounds.ok()) << rounds.status();
    EXPECT_EQ(static_cast<int>(rounds->size()), n % 2 == 0 ? n - 1 : n);
    for (const PairRound& round : *rounds) EXPECT_EQ(static_cast<int>(round.size()), n / 2);
    EXPECT_EQ(NodeTwice(*rounds), "");
    EXPECT_TRUE(EachOnce(PairCounts(*rounds), AllPairsOf(n)));
    ExpectTidy(*rounds);
  }
}

TEST(AllPairsRoundsTest, OddNodeCountsGiveEachNodeOneBye) {
  for (int n = 3; n <= 63; n += 2) {
    SCOPED_TRACE(n);
    std::vector<int> byes(n, 0);
    const std::vector<PairRound> rounds = *AllPairsRounds(n);
    for (const PairRound& round : rounds) {
      std::vector<bool> busy(n, false);
      for (const auto& [a, b] : round) busy[a] = busy[b] = true;
      for (int node = 0; node < n; ++node) byes[node] += busy[node] ? 0 : 1;
    }
    EXPECT_EQ(byes, std::vector<int>(n, 1));
  }
}

TEST(AllPairsRoundsTest, FourNodes) {
  EXPECT_EQ(*AllPairsRounds(4),
            (std::vector<PairRound>{{{0, 3}, {1, 2}}, {{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}}));
}

TEST(RingRoundsTest, NeighboursInTwoRoundsForEvenAndThreeForOdd) {
  for (int n = 2; n <= 64; ++n) {
    SCOPED_TRACE(n);
    absl::StatusOr<std::vector<PairRound>> rounds = RingRounds(n);
    ASSERT_TRUE(rounds.ok()) << rounds.status();
    const size_t expected_rounds = n == 2 ? 1 : (n % 2 == 0 ? 2 : 3);
    EXPECT_EQ(rounds->size(), expected_rounds);
    EXPECT_EQ(NodeTwice(*rounds), "");
    EXPECT_TRUE(EachOnce(PairCounts(*rounds), CirculantPairs(n, 1)));
    EXPECT_EQ(PairCounts(*rounds).size(), n == 2 ? 1u : static_cast<size_t>(n));
    ExpectTidy(*rounds);
  }
}

TEST(KBatchTest, PairsAreTheCirculantDeduplicated) {
  // Every shape up to 40 nodes, k up to just past all-pairs (2k+1 >= n);
  // ScalePathBeyond64Nodes covers the big ones. (Each case is milliseconds
  // under ASan at -O0; all k up to n for n up to 64 took 170 s there.)
  for (int n = 2; n <= 40; ++n) {
    for (int k = 1; k <= n / 2 + 2; ++k) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " k " << k);
      absl::StatusOr<std::vector<std::pair<int, int>>> pairs = KBatchPairs(n, k);
      ASSERT_TRUE(pairs.ok()) << pairs.status();
      const std::set<std::pair<int, int>> expected = CirculantPairs(n, k);
      const std::set<std::pair<int, int>> got(pairs->begin(), pairs->end());
      EXPECT_EQ(got, expected);
      EXPECT_EQ(pairs->size(), expected.size());  // no repeats
      if (2 * k + 1 < n) {
        EXPECT_EQ(static_cast<int>(pairs->size()), n * k);  // every node has 2k partners
      } else {
        EXPECT_EQ(expected, AllPairsOf(n));
      }
    }
  }
}

TEST(KBatchTest, RoundsCoverEachPairOnceInAtMost2kPlus1Rounds) {
  // Every shape up to 40 nodes, k up to just past all-pairs (2k+1 >= n);
  // ScalePathBeyond64Nodes covers the big ones. (Each case is milliseconds
  // under ASan at -O0; all k up to n for n up to 64 took 170 s there.)
  for (int n = 2; n <= 40; ++n) {
    for (int k = 1; k <= n / 2 + 2; ++k) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " k " << k);
      absl::StatusOr<std::vector<PairRound>> rounds = KBatchRounds(n, k);
      ASSERT_TRUE(rounds.ok()) << rounds.status();
      EXPECT_EQ(NodeTwice(*rounds), "");
      EXPECT_TRUE(EachOnce(PairCounts(*rounds), CirculantPairs(n, k)));
      EXPECT_LE(static_cast<int>(rounds->size()), 2 * k + 1);
      ExpectTidy(*rounds);
      if (2 * k + 1 >= n) {
        EXPECT_EQ(*rounds, *AllPairsRounds(n));
      }
    }
  }
}

TEST(KBatchTest, ScalePathBeyond64Nodes) {
  for (int n : {65, 100, 128, 257, 1024}) {
    for (int k : {1, 2, 3, 4, 8, 16}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " k " << k);
      absl::StatusOr<std::vector<PairRound>> rounds = KBatchRounds(n, k);
      ASSERT_TRUE(rounds.ok()) << rounds.status();
      EXPECT_EQ(NodeTwice(*rounds), "");
      EXPECT_TRUE(EachOnce(PairCounts(*rounds), CirculantPairs(n, k)));
      EXPECT_LE(static_cast<int>(rounds->size()), 2 * k + 1);
    }
  }
}

TEST(KBatchTest, KOfOneIsTheRing) {
  // From 4 nodes on; below that, k = 1 already reaches every pair (all-pairs).
  for (int n = 4; n <= 20; ++n) EXPECT_EQ(*KBatchRounds(n, 1), *RingRounds(n)) << n;
}

TEST(PatternErrorsTest, FewerThanTwoNodes) {
  for (int n : {-1, 0, 1}) {
    for (const absl::Status& status : {AllPairsRounds(n).status(), RingRounds(n).status(),
                                       KBatchRounds(n, 2).status(), KBatchPairs(n, 2).status()}) {
      EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
      EXPECT_NE(status.message().find(
                    absl::StrCat("pairwise needs at least two nodes; the plan has ", n)),
                absl::string_view::npos)
          << status;
    }
  }
}

TEST(PatternErrorsTest, KBelowOne) {
  for (int k : {0, -3}) {
    absl::Status status = KBatchRounds(8, k).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_NE(status.message().find(absl::StrCat("pairwise.k is ", k)), absl::string_view::npos);
    EXPECT_TRUE(absl::IsInvalidArgument(KBatchPairs(8, k).status()));
  }
}

// leaf_of for `leaves` leaves of the given sizes, members contiguous.
std::vector<int> LeavesOfSizes(const std::vector<int>& sizes) {
  std::vector<int> leaf_of;
  for (size_t leaf = 0; leaf < sizes.size(); ++leaf)
    leaf_of.insert(leaf_of.end(), sizes[leaf], leaf);
  return leaf_of;
}

TEST(LeafRoundsTest, EveryPairInsideALeafAndEveryNodeAcrossTheSpine) {
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{4, 4}, {3, 5, 2}, {8, 8, 8, 8}, {1, 6, 6}, {32, 32, 31}}) {
    const std::vector<int> leaf_of = LeavesOfSizes(sizes);
    const int n = static_cast<int>(leaf_of.size());
    SCOPED_TRACE(n);
    auto rounds = LeafRounds(leaf_of);
    ASSERT_TRUE(rounds.ok()) << rounds.status();
    ExpectTidy(*rounds);
    EXPECT_EQ(NodeTwice(*rounds), "");
    const auto counts = PairCounts(*rounds);
    std::vector<int> spine_partners(n, 0);
    for (const auto& [pair, count] : counts) {
      EXPECT_EQ(count, 1);
      if (leaf_of[pair.first] != leaf_of[pair.second]) {
        ++spine_partners[pair.first];
        ++spine_partners[pair.second];
      }
    }
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (leaf_of[a] == leaf_of[b]) EXPECT_EQ(counts.count({a, b}), 1u) << a << "-" << b;
      }
      EXPECT_GE(spine_partners[a], 1) << "node " << a << " never crosses the spine";
    }
    // Vizing's bound, which pattern_budget.cc counts instead of colouring.
    auto pairs = LeafPairs(leaf_of);
    ASSERT_TRUE(pairs.ok());
    EXPECT_LE(static_cast<int>(rounds->size()), LargestDegree(n, *pairs) + 1);
  }
}

TEST(LeafRoundsTest, OneLeafIsAllPairs) {
  auto rounds = LeafRounds(std::vector<int>(6, 0));
  ASSERT_TRUE(rounds.ok());
  EXPECT_TRUE(EachOnce(PairCounts(*rounds), AllPairsOf(6)));
}

TEST(LeafRoundsTest, ThreeLeavesGiveEachNodeBothNeighbouringLeaves) {
  auto pairs = LeafPairs(LeavesOfSizes({2, 2, 2}));
  ASSERT_TRUE(pairs.ok());
  // Inside: 0-1, 2-3, 4-5; spine: leaf 0-1 (0-2, 1-3), 1-2 (2-4, 3-5), 2-0 (4-0, 5-1).
  EXPECT_EQ(*pairs, (std::vector<std::pair<int, int>>{
                        {0, 1}, {0, 2}, {0, 4}, {1, 3}, {1, 5}, {2, 3}, {2, 4}, {3, 5}, {4, 5}}));
}

TEST(LeafRoundsTest, RejectsGapsAndNegativeLeaves) {
  EXPECT_FALSE(LeafRounds({0, 2, 2}).ok());
  EXPECT_FALSE(LeafRounds({0, -1}).ok());
  EXPECT_FALSE(LeafRounds({0}).ok());
}

}  // namespace
}  // namespace clustercert::controller::pairwise::schedule
