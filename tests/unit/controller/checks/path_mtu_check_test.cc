// mtu.path: a pairwise cell's path MTU, from the figures both ends recorded,
// judged against the plan and localised to a node's route or a hop.
#include <algorithm>
#include <string>
#include <vector>

#include "controller/checks/mtu_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::PathMtu Route(const std::string& peer, uint32_t before, uint32_t after) {
  v1::PathMtu mtu;
  mtu.set_peer_address(peer);
  mtu.set_local_route_mtu(before);
  mtu.set_route_mtu(after);
  return mtu;
}

// node1 (10.0.0.1) -> node2 (10.0.0.2) on the tcp engine, both routes at `client`/`server`.
v1::PairResult TcpCell(v1::PathMtu client, v1::PathMtu server) {
  v1::PairResult pair;
  pair.set_engine("tcp");
  pair.set_test("write_bw");
  pair.set_memory("host");
  pair.set_client("node1");
  pair.set_server("node2");
  pair.set_ok(true);
  *pair.mutable_client_result()->mutable_path_mtu() = std::move(client);
  *pair.mutable_server_result()->mutable_path_mtu() = std::move(server);
  return pair;
}

v1::PairResult VerbsCell(uint32_t client_port, uint32_t server_port) {
  v1::PairResult pair = TcpCell(Route("10.0.0.2", 9000, 9000), Route("10.0.0.1", 9000, 9000));
  pair.set_engine("verbs");
  pair.set_rail("mlx5_0");
  const uint32_t qp = std::min(client_port, server_port);
  for (v1::PeerTestResult* end : {pair.mutable_client_result(), pair.mutable_server_result()}) {
    end->mutable_path_mtu()->set_qp_mtu(qp);
  }
  pair.mutable_client_result()->mutable_path_mtu()->set_port_active_mtu(client_port);
  pair.mutable_server_result()->mutable_path_mtu()->set_port_active_mtu(server_port);
  return pair;
}

TEST(PathMtuCheckTest, HealthyPathPasses) {
  const v1::Finding finding =
      JudgePathMtu(testing::RocePlan(),
                   TcpCell(Route("10.0.0.2", 9000, 9000), Route("10.0.0.1", 9000, 9000)), {});
  EXPECT_EQ(finding.id(), "mtu.path");
  EXPECT_EQ(finding.status(), v1::Finding::pass) << finding.message();
  EXPECT_EQ(finding.node(), "node1");
  EXPECT_THAT(finding.observed(), HasSubstr("node1's route to 10.0.0.2 9000"));
}

TEST(PathMtuCheckTest, ShortHopBetweenJumboHostsFailsNamingTheHop) {
  // Both hosts at 9000; a routed hop answered the DF probe with 1500.
  const v1::Finding finding =
      JudgePathMtu(testing::RocePlan(),
                   TcpCell(Route("10.0.0.2", 9000, 1500), Route("10.0.0.1", 9000, 9000)), {});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_THAT(finding.message(),
              HasSubstr("a hop between node1 and node2 carries only 1500 bytes"));
  EXPECT_THAT(finding.remedy(), HasSubstr("switch port/VLAN MTU"));
  EXPECT_THAT(finding.message(), Not(HasSubstr("'s route to")));
}

TEST(PathMtuCheckTest, ShortNetdevFailsNamingTheNode) {
  v1::Finding netdev;
  netdev.set_id("mtu.netdev");
  netdev.set_node("node2");
  netdev.set_status(v1::Finding::fail);
  netdev.set_message("node2 netdev eth1 has MTU 1500, plan expects at least 9000.");
  const v1::Finding finding =
      JudgePathMtu(testing::RocePlan(),
                   TcpCell(Route("10.0.0.2", 9000, 9000), Route("10.0.0.1", 1500, 1500)), {netdev});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(), HasSubstr("node2's route to 10.0.0.1 has mtu 1500"));
  EXPECT_THAT(finding.message(), HasSubstr("netdev eth1 has MTU 1500"));
  EXPECT_THAT(finding.message(), Not(HasSubstr("a hop between")));
  EXPECT_THAT(finding.remedy(), HasSubstr("On node2, raise the data netdev's MTU to 9000"));
}

// A short route on a node whose netdev passes mtu.netdev: a route of its
// own, or the path MTU its kernel learned from a hop's ICMP (a second run
// within 10 minutes of the first sees the hop's figure as the route's).
TEST(PathMtuCheckTest, ShortRouteOverAGoodNetdevPointsAtALearnedHopToo) {
  const v1::Finding finding =
      JudgePathMtu(testing::RocePlan(),
                   TcpCell(Route("10.0.0.2", 1500, 1500), Route("10.0.0.1", 9000, 9000)), {});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(), HasSubstr("node1's route to 10.0.0.2 has mtu 1500 while its "
                                           "data netdev passes mtu.netdev"));
  EXPECT_THAT(finding.message(), HasSubstr("learned from a hop between node1 and node2"));
  EXPECT_THAT(finding.remedy(), HasSubstr("ip route get 10.0.0.2"));
  EXPECT_THAT(finding.remedy(), Not(HasSubstr("raise the data netdev's MTU")));
}

TEST(PathMtuCheckTest, NotRecordedIsUnknownNeverPass) {
  v1::PairResult old_agent = TcpCell({}, {});
  old_agent.mutable_client_result()->clear_path_mtu();
  old_agent.mutable_server_result()->clear_path_mtu();
  v1::Finding finding = JudgePathMtu(testing::RocePlan(), old_agent, {});
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_THAT(finding.message(), HasSubstr("older than mtu.path"));

  old_agent.set_ok(false);
  finding = JudgePathMtu(testing::RocePlan(), old_agent, {});
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_THAT(finding.message(), HasSubstr("failed before either end returned"));
}

// Issue 35: a stalled cell returns no result, but the figures each end
// measured at connect reach it: a short route fails the cell naming the
// node, as for a completed one; figures that fit are unknown, not pass.
TEST(PathMtuCheckTest, AFailedCellIsJudgedOnItsConnectTimeFigures) {
  v1::PairResult stalled = TcpCell(Route("10.0.0.2", 9000, 9000), Route("10.0.0.1", 1500, 1500));
  stalled.set_ok(false);
  v1::Finding finding = JudgePathMtu(testing::RocePlan(), stalled, {});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(), HasSubstr("node2's route to 10.0.0.1 has mtu 1500"));
  EXPECT_THAT(finding.observed(), HasSubstr("at connect; the run failed"));

  stalled = TcpCell(Route("10.0.0.2", 9000, 9000), Route("10.0.0.1", 9000, 9000));
  stalled.set_ok(false);
  finding = JudgePathMtu(testing::RocePlan(), stalled, {});
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_THAT(finding.message(), HasSubstr("not ruled out"));
}

TEST(PathMtuCheckTest, NoFigureReadIsUnknown) {
  v1::PathMtu none;
  none.set_note("the route to 10.0.0.2 is unknown: no route");
  const v1::Finding finding = JudgePathMtu(testing::RocePlan(), TcpCell(none, none), {});
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_THAT(finding.message(), HasSubstr("no route"));
}

TEST(PathMtuCheckTest, VerbsQpAtPlanPasses) {
  const v1::Finding finding = JudgePathMtu(testing::RocePlan(), VerbsCell(4096, 4096), {});
  EXPECT_EQ(finding.status(), v1::Finding::pass) << finding.message();
  EXPECT_EQ(finding.device(), "mlx5_0");
  EXPECT_THAT(finding.observed(), HasSubstr("QP path MTU 4096"));
}

TEST(PathMtuCheckTest, VerbsShortPortNamesItsNode) {
  const v1::Finding finding = JudgePathMtu(testing::RocePlan(), VerbsCell(4096, 1024), {});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(),
              HasSubstr("node2 mlx5_0's port has active MTU 1024: its netdev MTU is short"));
  EXPECT_THAT(finding.message(), Not(HasSubstr("node1 mlx5_0's port")));
}

TEST(PathMtuCheckTest, VerbsQpAboveAShortHopFailsNamingTheHop) {
  // The QP runs at 4096 (both ports at 9000), but a hop carries 1500: the
  // stall a verbs cell shows on such a path.
  v1::PairResult pair = VerbsCell(4096, 4096);
  pair.set_ok(false);
  pair.mutable_client_result()->mutable_path_mtu()->set_route_mtu(1500);
  const v1::Finding finding = JudgePathMtu(testing::RocePlan(), pair, {});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(),
              HasSubstr("a hop between node1 and node2 carries only 1500 bytes"));
}

TEST(PathMtuCheckTest, InfinibandJudgesOnlyTheQp) {
  v1::PairResult pair = VerbsCell(2048, 4096);
  for (v1::PeerTestResult* end : {pair.mutable_client_result(), pair.mutable_server_result()}) {
    end->mutable_path_mtu()->clear_local_route_mtu();
    end->mutable_path_mtu()->clear_route_mtu();
  }
  const v1::Finding finding = JudgePathMtu(testing::InfinibandPlan(), pair, {});
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(), HasSubstr("node1 mlx5_0's port has active MTU 2048"));
  EXPECT_THAT(finding.remedy(), HasSubstr("subnet manager"));
}

}  // namespace
}  // namespace clustercert::controller::checks
