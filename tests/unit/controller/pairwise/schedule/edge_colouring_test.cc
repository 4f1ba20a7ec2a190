#include "controller/pairwise/schedule/edge_colouring.h"

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/controller/pairwise/schedule/schedule_properties.h"

namespace clustercert::controller::pairwise::schedule {
namespace {

using testing::EachOnce;
using testing::NodeTwice;
using testing::PairCounts;

int MaxDegree(int nodes, const std::vector<std::pair<int, int>>& edges) {
  std::vector<int> degree(nodes, 0);
  for (const auto& [a, b] : edges) {
    ++degree[a];
    ++degree[b];
  }
  return nodes == 0 ? 0 : *std::max_element(degree.begin(), degree.end());
}

std::set<std::pair<int, int>> Normalised(const std::vector<std::pair<int, int>>& edges) {
  std::set<std::pair<int, int>> out;
  for (const auto& [a, b] : edges) out.insert({std::min(a, b), std::max(a, b)});
  return out;
}

// A proper colouring of every edge, each once, in at most Δ+1 rounds.
void ExpectVizing(int nodes, const std::vector<std::pair<int, int>>& edges) {
  absl::StatusOr<std::vector<PairRound>> rounds = ColourEdges(nodes, edges);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(NodeTwice(*rounds), "");
  EXPECT_TRUE(EachOnce(PairCounts(*rounds), Normalised(edges)));
  EXPECT_LE(static_cast<int>(rounds->size()), MaxDegree(nodes, edges) + 1);
  for (const PairRound& round : *rounds) {
    EXPECT_FALSE(round.empty());
    EXPECT_TRUE(std::is_sorted(round.begin(), round.end()));
    for (const auto& [a, b] : round) EXPECT_LT(a, b);
  }
}

TEST(EdgeColouringTest, NoEdgesNoRounds) {
  absl::StatusOr<std::vector<PairRound>> rounds = ColourEdges(5, {});
  ASSERT_TRUE(rounds.ok());
  EXPECT_TRUE(rounds->empty());
}

TEST(EdgeColouringTest, PetersenGraphNeedsFourRounds) {
  // Class 2: Δ = 3 but no 3-edge-colouring exists.
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < 5; ++i) {
    edges.push_back({i, (i + 1) % 5});          // outer cycle
    edges.push_back({i, i + 5});                // spokes
    edges.push_back({i + 5, (i + 2) % 5 + 5});  // inner pentagram
  }
  ExpectVizing(10, edges);
  EXPECT_EQ(ColourEdges(10, edges)->size(), 4u);
}

TEST(EdgeColouringTest, CompleteGraphsInShuffledOrder) {
  std::mt19937 random(7);
  for (int n = 2; n <= 24; ++n) {
    std::vector<std::pair<int, int>> edges;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) edges.push_back({b, a});
    }
    std::shuffle(edges.begin(), edges.end(), random);
    SCOPED_TRACE(n);
    ExpectVizing(n, edges);
  }
}

TEST(EdgeColouringTest, RandomGraphsStayWithinDeltaPlusOne) {
  // Dense random graphs in random order leave the greedy pass stuck often,
  // so this exercises the Misra–Gries fan rotation and path inversion.
  std::mt19937 random(2024);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(random() % 40);
    const double density = 0.1 + (random() % 90) / 100.0;
    std::vector<std::pair<int, int>> edges;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (std::uniform_real_distribution<double>(0, 1)(random) < density) edges.push_back({a, b});
      }
    }
    std::shuffle(edges.begin(), edges.end(), random);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " n " << n);
    ExpectVizing(n, edges);
  }
}

TEST(EdgeColouringTest, RefusesBadEdges) {
  EXPECT_TRUE(absl::IsInvalidArgument(ColourEdges(3, {{0, 0}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ColourEdges(3, {{0, 3}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ColourEdges(3, {{-1, 2}}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ColourEdges(-1, {}).status()));
  absl::Status twice = ColourEdges(3, {{0, 1}, {1, 0}}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(twice));
  EXPECT_NE(twice.message().find("listed twice"), absl::string_view::npos) << twice;
}

}  // namespace
}  // namespace clustercert::controller::pairwise::schedule
