// The pure retest planner: which ends of failing cells are retested against
// whom, decided from judged cells alone.
#include "controller/pairwise/phase/retest_plan.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

std::vector<NodeState> Nodes(int count) {
  std::vector<NodeState> nodes(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    nodes[i].node.name = absl::StrCat("node", i + 1);
    nodes[i].node.rails = {"mlx5_0"};
    nodes[i].reachable = true;
  }
  return nodes;
}

v1::PairResult Cell(const std::string& client, const std::string& server, bool passes,
                    const std::string& test = "write_bw") {
  v1::PairResult pair;
  pair.set_client(client);
  pair.set_server(server);
  pair.set_rail("mlx5_0");
  pair.set_test(test);
  pair.set_memory("host");
  pair.mutable_verdict()->set_status(passes ? v1::Finding::pass : v1::Finding::fail);
  pair.mutable_verdict()->set_severity(v1::Finding::error);
  return pair;
}

// Every ordered pair of `nodes`, failing where `bad` is an end.
std::vector<v1::PairResult> Matrix(const std::vector<NodeState>& nodes, const std::string& bad) {
  std::vector<v1::PairResult> pairs;
  for (const auto& a : nodes) {
    for (const auto& b : nodes) {
      if (a.node.name == b.node.name) continue;
      pairs.push_back(Cell(a.node.name, b.node.name, a.node.name != bad && b.node.name != bad));
    }
  }
  return pairs;
}

TEST(RetestPlanTest, EachEndOfAFailingCellOnceAgainstAGoodPartnerNeverItsOtherEnd) {
  const std::vector<NodeState> nodes = Nodes(4);
  const std::vector<v1::PairResult> pairs = Matrix(nodes, "node3");
  const std::vector<PlannedRetest> planned = PlanRetests(nodes, /*tcp=*/false, pairs);
  ASSERT_EQ(planned.size(), 4u);  // node1, node2, node4 and node3, once each
  int node3 = 0;
  for (const PlannedRetest& retest : planned) {
    EXPECT_NE(nodes[retest.partner].node.name, "node3");  // partners have a good record
    EXPECT_NE(retest.partner, retest.node);
    EXPECT_EQ(retest.rail, 0);
    EXPECT_EQ(retest.item.test, "write_bw");
    EXPECT_TRUE(retest.item.server_gpu.empty());
    node3 += nodes[retest.node].node.name == "node3" ? 1 : 0;
  }
  EXPECT_EQ(node3, 1);
  EXPECT_EQ(planned[0].retest_of, "node1->node3");
}

TEST(RetestPlanTest, PartnersAreNodesWithMoreThanHalfPassedBestFirst) {
  const std::vector<NodeState> nodes = Nodes(4);
  std::vector<v1::PairResult> pairs = Matrix(nodes, "node3");
  pairs.push_back(Cell("node2", "node4", false, "read_bw"));  // node2, node4: one more failure
  pairs.push_back(Cell("node1", "node4", true, "read_bw"));
  const std::vector<int> partners = RetestPartners(nodes, pairs);
  ASSERT_EQ(partners.size(), 3u);
  EXPECT_EQ(nodes[partners[0]].node.name, "node1");
}

TEST(RetestPlanTest, AnEndThatIsGoneOrHasNoOtherPartnerIsNotRetested) {
  std::vector<NodeState> nodes = Nodes(2);
  EXPECT_TRUE(PlanRetests(nodes, false, {Cell("node1", "node2", false)}).empty());

  nodes = Nodes(3);
  nodes[1].reachable = false;
  std::vector<v1::PairResult> pairs = {Cell("node1", "node2", false), Cell("node1", "node3", true),
                                       Cell("node3", "node1", true)};
  const std::vector<PlannedRetest> planned = PlanRetests(nodes, false, pairs);
  ASSERT_EQ(planned.size(), 1u);  // node1 against node3; node2 does not answer
  EXPECT_EQ(planned[0].node, 0);
  EXPECT_EQ(planned[0].partner, 2);
}

TEST(RetestPlanTest, ARailThePartnerLacksIsNotRetestedOnIt) {
  std::vector<NodeState> nodes = Nodes(3);
  nodes[0].node.rails = {"mlx5_0", "mlx5_1"};
  nodes[1].node.rails = {"mlx5_0", "mlx5_1"};
  v1::PairResult failing = Cell("node1", "node2", false);
  failing.set_rail("mlx5_1");
  std::vector<v1::PairResult> pairs = {failing, Cell("node1", "node3", true),
                                       Cell("node2", "node3", true), Cell("node3", "node1", true)};
  EXPECT_TRUE(PlanRetests(nodes, false, pairs).empty());          // node3 has one rail
  EXPECT_EQ(PlanRetests(nodes, /*tcp=*/true, pairs).size(), 2u);  // tcp has no rails
}

TEST(RetestPlanTest, NeverMoreThanTheBound) {
  const std::vector<NodeState> nodes = Nodes(4);
  std::vector<v1::PairResult> pairs = Matrix(nodes, "node3");
  for (int t = 0; t < 100; ++t) {
    pairs.push_back(Cell("node1", "node3", false, absl::StrCat("test", t)));
  }
  EXPECT_EQ(PlanRetests(nodes, false, pairs).size(), kMaxRetests);
}

}  // namespace
}  // namespace clustercert::controller
