// The matrix's mtu.path wiring (issue 35): one finding per main cell from
// format 7, none before it, and a stalled cell judged on the path MTU its
// ends measured at connect rather than left unknown.
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

plan::Plan TwoNodeRoce() {
  plan::Plan plan;
  plan.fabric.type = plan::FabricType::kRoce;
  plan.fabric.link_rate_gbps = 100;
  for (const char* name : {"node1", "node2"}) {
    plan::Node node;
    node.name = name;
    node.rails = {"mlx5_0"};
    plan.nodes.push_back(node);
  }
  plan.pairwise.enabled = true;
  return plan;
}

v1::PathMtu Route(const std::string& peer, uint32_t before, uint32_t after) {
  v1::PathMtu mtu;
  mtu.set_peer_address(peer);
  mtu.set_local_route_mtu(before);
  mtu.set_route_mtu(after);
  mtu.set_qp_mtu(4096);
  mtu.set_port_active_mtu(4096);
  return mtu;
}

// node1 -> node2 write_bw on mlx5_0; `client_route_after` is what node1's
// route to node2 carried after its don't-fragment probe.
v1::PairResult Cell(bool ok, uint32_t client_route_after) {
  v1::PairResult pair;
  pair.set_test("write_bw");
  pair.set_engine("verbs");
  pair.set_memory("host");
  pair.set_client("node1");
  pair.set_server("node2");
  pair.set_rail("mlx5_0");
  pair.set_ok(ok);
  pair.set_line_rate_gbps(100);
  if (ok) {
    pair.mutable_client_result()->mutable_bandwidth()->set_avg_gbps(93);
    pair.mutable_server_result()->mutable_bandwidth()->set_avg_gbps(93);
  } else {
    pair.set_error("node1 run: rxe0 moved no data for 10.0 s");
  }
  *pair.mutable_client_result()->mutable_path_mtu() = Route("10.0.0.2", 9000, client_route_after);
  *pair.mutable_server_result()->mutable_path_mtu() = Route("10.0.0.1", 9000, 9000);
  return pair;
}

std::vector<const v1::Finding*> PathFindings(const MatrixJudgement& judgement) {
  std::vector<const v1::Finding*> found;
  for (const auto& f : judgement.checks) {
    if (f.id() == "mtu.path") found.push_back(&f);
  }
  return found;
}

TEST(PathMtuMatrixTest, FormatSevenJudgesEachMainCell) {
  v1::PairResult retest = Cell(true, 9000);
  retest.set_retest_of("node1->node2");
  std::vector<v1::PairResult> pairs = {Cell(true, 9000), retest};
  const MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {}, 7);
  const std::vector<const v1::Finding*> found = PathFindings(judgement);
  ASSERT_EQ(found.size(), 1u);  // the retest is not judged again
  EXPECT_EQ(found[0]->key(), "mtu.path@node1/mlx5_0->node2 write_bw host");
  EXPECT_EQ(found[0]->status(), v1::Finding::pass) << found[0]->message();
  EXPECT_EQ(found[0]->node(), "node1");
  EXPECT_EQ(found[0]->device(), "mlx5_0");
}

TEST(PathMtuMatrixTest, FormatSixAndOlderHaveNoPathMtu) {
  std::vector<v1::PairResult> pairs = {Cell(true, 9000), Cell(false, 1500)};
  EXPECT_THAT(PathFindings(JudgeMatrix(TwoNodeRoce(), pairs, {}, 6)), IsEmpty());
  EXPECT_THAT(PathFindings(JudgeMatrix(TwoNodeRoce(), pairs, {}, 5)), IsEmpty());
}

TEST(PathMtuMatrixTest, TheNewestRulesAreFormatSeven) {
  EXPECT_EQ(kMatrixRulesFormat, 7u);
  std::vector<v1::PairResult> pairs = {Cell(true, 9000)};
  EXPECT_EQ(PathFindings(JudgeMatrix(TwoNodeRoce(), pairs, {})).size(), 1u);
}

// The stall the issue describes: 9000-MTU hosts, a routed hop at 1500, the
// QP at 4096. The run returned nothing; the connect-time figures fail the
// cell naming the hop, alongside the cell's own failing verdict.
TEST(PathMtuMatrixTest, AStalledCellFailsOnItsConnectTimeFiguresNamingTheHop) {
  std::vector<v1::PairResult> pairs = {Cell(false, 1500)};
  const MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {}, 7);
  const std::vector<const v1::Finding*> found = PathFindings(judgement);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->status(), v1::Finding::fail);
  EXPECT_THAT(found[0]->message(),
              HasSubstr("a hop between node1 and node2 carries only 1500 bytes"));
  EXPECT_THAT(found[0]->observed(), HasSubstr("at connect; the run failed"));
  EXPECT_EQ(judgement.failing, 1);
}

// Figures that fit the plan do not make a stalled cell's path a pass: a
// silent L2 drop is not ruled out.
TEST(PathMtuMatrixTest, AStalledCellWithFittingFiguresIsUnknown) {
  std::vector<v1::PairResult> pairs = {Cell(false, 9000)};
  const MatrixJudgement judgement = JudgeMatrix(TwoNodeRoce(), pairs, {}, 7);
  const std::vector<const v1::Finding*> found = PathFindings(judgement);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->status(), v1::Finding::unknown);
  EXPECT_THAT(found[0]->message(), HasSubstr("not ruled out"));
}

}  // namespace
}  // namespace clustercert::controller
