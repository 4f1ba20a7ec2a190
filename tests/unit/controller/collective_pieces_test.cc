// The controller's collective pieces without agents: scope choice, the
// rendezvous relay, merging ranks' rows and the verdicts (the mpirun command:
// mpirun_sweep_test.cc).
#include <map>

#include "controller/collectives/collective_scopes.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/collectives/store_relay.h"
#include "controller/collectives/sweep_merge.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

TEST(ChooseScopes, FourNodesGiveAllThreeScopes) {
  ScopeChoice choice = ChooseScopes({"1-node", "2-node", "all-nodes"}, {0, 1, 2, 3});
  ASSERT_EQ(choice.scopes.size(), 3u);
  EXPECT_EQ(choice.scopes[0].nodes, (std::vector<size_t>{0}));
  EXPECT_EQ(choice.scopes[1].nodes, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(choice.scopes[2].nodes, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(choice.skipped.empty());
}

TEST(ChooseScopes, TwoNodesDoNotRepeatTheTwoNodeSweep) {
  ScopeChoice choice = ChooseScopes({"1-node", "2-node", "all-nodes"}, {1, 3});
  ASSERT_EQ(choice.scopes.size(), 2u);
  EXPECT_EQ(choice.scopes[1].nodes, (std::vector<size_t>{1, 3}));
  ASSERT_EQ(choice.skipped.size(), 1u);
  EXPECT_NE(choice.skipped[0].find("2-node scope already"), std::string::npos);
}

TEST(ChooseScopes, OneNodeCannotFormTwoNodeScope) {
  ScopeChoice choice = ChooseScopes({"2-node"}, {2});
  EXPECT_TRUE(choice.scopes.empty());
  ASSERT_EQ(choice.skipped.size(), 1u);
  EXPECT_NE(choice.skipped[0].find("1 node(s) answered"), std::string::npos);
}

TEST(RanksOnNode, DefaultsPerBackend) {
  plan::Collectives collectives;
  plan::Node node;
  node.gpus = 4;
  EXPECT_EQ(RanksOnNode(collectives, node), 4);  // nccl: one per GPU
  collectives.backend = plan::CollectiveBackend::kGloo;
  EXPECT_EQ(RanksOnNode(collectives, node), 1);
  collectives.ranks_per_node = 2;
  EXPECT_EQ(RanksOnNode(collectives, node), 2);
}

v1::StoreEntry Entry(const std::string& key, const std::string& value) {
  v1::StoreEntry entry;
  entry.set_key(key);
  entry.set_value(value);
  return entry;
}

TEST(StoreRelay, RelaysEachKeyOnceToEveryOtherNode) {
  StoreRelay relay(3);
  google::protobuf::RepeatedPtrField<v1::StoreEntry> from0;
  *from0.Add() = Entry("rank0", "a");
  relay.Publish(0, from0);
  EXPECT_TRUE(relay.TakeFor(0).empty());  // its own key is not sent back
  auto to1 = relay.TakeFor(1);
  ASSERT_EQ(to1.size(), 1u);
  EXPECT_EQ(to1[0].key(), "rank0");
  EXPECT_TRUE(relay.TakeFor(1).empty());  // once
  google::protobuf::RepeatedPtrField<v1::StoreEntry> from2;
  *from2.Add() = Entry("rank2", "c");
  relay.Publish(2, from2);
  auto to1_again = relay.TakeFor(1);
  ASSERT_EQ(to1_again.size(), 1u);
  EXPECT_EQ(to1_again[0].key(), "rank2");
  EXPECT_EQ(relay.TakeFor(2).size(), 1u);  // rank0 only
}

sweep::SweepRow Row(int64_t bytes, double oop_us, double ip_us, int64_t wrong = 0) {
  sweep::SweepRow row;
  row.bytes = bytes;
  row.count = bytes / 4;
  row.out_of_place = {oop_us, 0, 0, wrong};
  row.in_place = {ip_us, 0, 0, 0};
  return row;
}

TEST(MergeRankRows, SlowestRankSetsTimeAndBandwidth) {
  // 4 ranks; 1 MB in 100 us on the slowest rank -> algbw 10 GB/s, busbw 15.
  std::vector<RankRow> rows = {{0, Row(1000000, 80, 90)},
                               {1, Row(1000000, 100, 95, 2)},
                               {2, Row(1000000, 60, 70)},
                               {3, Row(1000000, 70, 200, 1)},
                               {0, Row(8, 5, 6)}};
  std::vector<v1::CollectiveRow> merged = MergeRankRows(rows, 4);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].bytes(), 8);  // sorted by size
  const v1::CollectiveRow& big = merged[1];
  EXPECT_DOUBLE_EQ(big.oop_time_us(), 100);
  EXPECT_NEAR(big.oop_algbw_gbytes(), 10.0, 1e-9);
  EXPECT_NEAR(big.oop_busbw_gbytes(), 15.0, 1e-9);
  EXPECT_EQ(big.oop_wrong(), 3);
  EXPECT_DOUBLE_EQ(big.ip_time_us(), 200);
  EXPECT_NEAR(big.ip_busbw_gbytes(), 7.5, 1e-9);
}

// The same times under alltoall's factor (n-1)/n: busbw 7.5, not 15.
TEST(MergeRankRows, BusbwUsesTheOperationsFactor) {
  std::vector<RankRow> rows = {{0, Row(1000000, 100, 90)}, {1, Row(1000000, 80, 90)}};
  rows[0].row.operation = rows[1].row.operation = "alltoall";
  std::vector<v1::CollectiveRow> merged = MergeRankRows(rows, 4, "alltoall");
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_NEAR(merged[0].oop_algbw_gbytes(), 10.0, 1e-9);
  EXPECT_NEAR(merged[0].oop_busbw_gbytes(), 7.5, 1e-9);
  EXPECT_EQ(ForeignOperation(rows, "alltoall"), "");
  EXPECT_EQ(ForeignOperation(rows, "all_gather"),
            "rank 0's worker swept alltoall, not all_gather: its node-agent or collective worker "
            "predates collectives.operations; install the controller's release on every node");
}

TEST(ScopesPerOperation, EachScopeOncePerOperationInPlanOrder) {
  const std::vector<CollectiveScope> scopes =
      ScopesPerOperation({{"1-node", {0}}, {"2-node", {0, 1}}}, {"all_reduce", "alltoall"});
  ASSERT_EQ(scopes.size(), 4u);
  EXPECT_EQ(scopes[0].name + " " + scopes[0].operation, "1-node all_reduce");
  EXPECT_EQ(scopes[1].name + " " + scopes[1].operation, "1-node alltoall");
  EXPECT_EQ(scopes[3].name + " " + scopes[3].operation, "2-node alltoall");
  EXPECT_EQ(scopes[3].nodes, (std::vector<size_t>{0, 1}));
}

TEST(LargeMessageFigure, BestOfTheTopEighth) {
  std::vector<v1::CollectiveRow> rows;
  for (int64_t bytes : {1 << 10, 1 << 17, 1 << 18, 1 << 19, 1 << 20}) {
    v1::CollectiveRow row;
    row.set_bytes(bytes);
    row.set_oop_busbw_gbytes(bytes == (1 << 10) ? 99.0 : bytes / double(1 << 20) * 10);
    rows.push_back(row);
  }
  LargeMessageBusbw figure = LargeMessageFigure(rows);
  EXPECT_EQ(figure.from_bytes, 1 << 17);
  EXPECT_DOUBLE_EQ(figure.busbw_gbytes, 10.0);  // the 1 KiB outlier is not a large message
}

TEST(NcclTestsTable, HasHeaderAndOneLinePerRow) {
  std::vector<v1::CollectiveRow> rows(3);
  for (int i = 0; i < 3; ++i) rows[i].set_bytes(8 << i);
  std::string table = NcclTestsTable(rows);
  int lines = 0;
  for (char c : table) lines += c == '\n';
  EXPECT_EQ(lines, 3 + 3);
  EXPECT_NE(table.find("busbw"), std::string::npos);
}

v1::CollectiveSweep Sweep(const std::string& scope, int nodes, int ranks, double busbw) {
  v1::CollectiveSweep sweep;
  sweep.set_scope(scope);
  for (int i = 0; i < nodes; ++i) sweep.add_nodes("node" + std::to_string(i + 1));
  sweep.set_ranks(ranks);
  sweep.set_ok(true);
  sweep.set_transport("tcp");
  v1::CollectiveRow* row = sweep.add_rows();
  row->set_bytes(1 << 20);
  row->set_oop_busbw_gbytes(busbw);
  row->set_oop_wrong(0);
  row->set_has_in_place(true);
  row->set_ip_wrong(0);
  sweep.set_large_busbw_gbytes(busbw);
  sweep.set_large_from_bytes(1 << 17);
  return sweep;
}

std::map<std::string, v1::Finding> ById(const std::vector<v1::Finding>& findings) {
  std::map<std::string, v1::Finding> out;
  for (const auto& finding : findings) out[finding.id()] = finding;
  return out;
}

plan::Plan GlooPlan(double floor) {
  plan::Plan plan;
  plan.collectives.enabled = true;
  plan.collectives.backend = plan::CollectiveBackend::kGloo;
  plan.collectives.min_busbw_gbytes = floor;
  return plan;
}

TEST(JudgeSweep, FloorPassesAndFailsBetweenNodes) {
  auto pass = ById(JudgeSweep(GlooPlan(1.0), Sweep("all-nodes", 4, 4, 1.5), "tcp"));
  EXPECT_EQ(pass["collectives.run"].status(), v1::Finding::pass);
  EXPECT_EQ(pass["collectives.correctness"].status(), v1::Finding::pass);
  EXPECT_EQ(pass["collectives.busbw"].status(), v1::Finding::pass);
  EXPECT_EQ(pass["collectives.transport"].status(), v1::Finding::pass);
  EXPECT_EQ(pass["collectives.busbw"].device(), "all-nodes");

  auto fail = ById(JudgeSweep(GlooPlan(1.0), Sweep("all-nodes", 4, 4, 0.2), "tcp"));
  EXPECT_EQ(fail["collectives.busbw"].status(), v1::Finding::fail);
  EXPECT_NE(fail["collectives.busbw"].message().find("0.20 GB/s"), std::string::npos);
  EXPECT_FALSE(fail["collectives.busbw"].remedy().empty());

  auto inside = ById(JudgeSweep(GlooPlan(1.0), Sweep("1-node", 1, 2, 0.2), "tcp"));
  EXPECT_EQ(inside["collectives.busbw"].status(), v1::Finding::skipped);
}

// Every operation is judged by the same checks, named after its scope, and
// scaled per operation; all_reduce keeps the names it always had.
TEST(JudgeSweeps, EachOperationHasItsOwnFindings) {
  v1::CollectiveSweep all_reduce = Sweep("2-node", 2, 2, 1.5);
  v1::CollectiveSweep alltoall = Sweep("2-node", 2, 2, 0.2);
  alltoall.set_operation("alltoall");
  EXPECT_EQ(SweepName(all_reduce), "2-node");
  EXPECT_EQ(SweepName(alltoall), "2-node alltoall");
  plan::Plan plan = GlooPlan(1.0);
  std::map<std::string, v1::Finding> by_key;
  for (const auto& finding : JudgeSweeps(plan, {all_reduce, alltoall})) {
    by_key[finding.id() + "@" + finding.device()] = finding;
  }
  EXPECT_EQ(by_key["collectives.busbw@2-node"].status(), v1::Finding::pass);
  EXPECT_EQ(by_key["collectives.busbw@2-node alltoall"].status(), v1::Finding::fail);
  EXPECT_NE(by_key["collectives.busbw@2-node alltoall"].message().find("alltoall busbw is"),
            std::string::npos)
      << by_key["collectives.busbw@2-node alltoall"].message();
  EXPECT_TRUE(FindingOfSweep(by_key["collectives.busbw@2-node alltoall"], alltoall));
  EXPECT_FALSE(FindingOfSweep(by_key["collectives.busbw@2-node alltoall"], all_reduce));
  EXPECT_EQ(by_key.count("collectives.scaling@1-node -> 2-node"), 1u);
  EXPECT_EQ(by_key.count("collectives.scaling@1-node -> 2-node alltoall"), 1u);
}

TEST(JudgeSweep, WrongElementsAndFailedRunsFail) {
  v1::CollectiveSweep sweep = Sweep("2-node", 2, 2, 1.0);
  sweep.mutable_rows(0)->set_ip_wrong(5);
  sweep.set_ok(false);
  sweep.set_error("node2 rank 1: was killed by signal 11 (SIGSEGV)");
  auto findings = ById(JudgeSweep(GlooPlan(0), sweep, "tcp"));
  EXPECT_EQ(findings["collectives.run"].status(), v1::Finding::fail);
  EXPECT_NE(findings["collectives.run"].message().find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(findings["collectives.correctness"].status(), v1::Finding::fail);
  EXPECT_EQ(findings["collectives.correctness"].observed(), "#wrong 5");
  EXPECT_EQ(findings["collectives.busbw"].status(), v1::Finding::skipped);  // no floor in the plan
}

TEST(JudgeSweep, NcclSocketFallbackFailsAndMissingGdrWarns) {
  plan::Plan plan;
  plan.collectives.enabled = true;
  v1::CollectiveSweep sweep = Sweep("2-node", 2, 8, 20);
  sweep.mutable_nccl_transport()->set_net_socket_channels(4);
  auto socket = ById(JudgeSweep(plan, sweep, ""));
  EXPECT_EQ(socket["collectives.transport"].status(), v1::Finding::fail);
  EXPECT_EQ(socket["collectives.transport"].severity(), v1::Finding::error);

  sweep.mutable_nccl_transport()->set_net_socket_channels(0);
  sweep.mutable_nccl_transport()->set_net_ib_channels(4);
  sweep.mutable_nccl_transport()->set_net_ib_gdr_channels(2);
  auto partial = ById(JudgeSweep(plan, sweep, ""));
  EXPECT_EQ(partial["collectives.transport"].status(), v1::Finding::fail);
  EXPECT_EQ(partial["collectives.transport"].severity(), v1::Finding::warning);

  sweep.mutable_nccl_transport()->set_net_ib_gdr_channels(4);
  EXPECT_EQ(ById(JudgeSweep(plan, sweep, ""))["collectives.transport"].status(), v1::Finding::pass);
}

// An HGX-class pair of nodes: 8 rails of 400 Gb/s each, so what the rails
// carry is 8 x 400 / 8 = 400 GB/s of busbw.
plan::Plan HgxPlan() {
  plan::Plan plan;  // nccl: error severity
  plan.collectives.enabled = true;
  plan.fabric.link_rate_gbps = 400;
  for (int i = 1; i <= 4; ++i) {
    plan::Node node;
    node.name = "node" + std::to_string(i);
    for (int r = 0; r < 8; ++r) node.rails.push_back("mlx5_" + std::to_string(r));
    node.gpus = 8;
    plan.nodes.push_back(node);
  }
  return plan;
}

// The seed's figures at HGX scale: NVLink gives the 1-node sweep ~480 GB/s,
// the 2-node sweep is bounded by the rails. The old 1-node/3 rule failed this
// healthy cluster; the fabric rule passes it.
TEST(JudgeScaling, NvlinkFigureIsReportedNotCompared) {
  const plan::Plan plan = HgxPlan();
  v1::CollectiveSweep one = Sweep("1-node", 1, 8, 480);
  v1::CollectiveSweep two = Sweep("2-node", 2, 16, 150);
  v1::Finding healthy = JudgeScaling(plan, {&one}, &two);
  EXPECT_EQ(healthy.status(), v1::Finding::pass) << healthy.message();
  EXPECT_NE(healthy.observed().find("1-node (intra-node) 480.00 GB/s"), std::string::npos)
      << healthy.observed();
  EXPECT_NE(healthy.expected().find("400.00 GB/s"), std::string::npos) << healthy.expected();

  // 3x or more below what the rails carry: RDMA is not used between nodes.
  two.set_large_busbw_gbytes(120);
  v1::Finding collapse = JudgeScaling(plan, {&one}, &two);
  EXPECT_EQ(collapse.status(), v1::Finding::fail);
  EXPECT_EQ(collapse.severity(), v1::Finding::error);
  EXPECT_NE(collapse.message().find("3.3x below 400.00 GB/s"), std::string::npos)
      << collapse.message();
  EXPECT_EQ(JudgeScaling(plan, {&one}, nullptr).status(), v1::Finding::skipped);
  plan::Plan no_rate = plan;
  no_rate.fabric.link_rate_gbps = 0;
  EXPECT_EQ(JudgeScaling(no_rate, {&one}, &two).status(), v1::Finding::skipped);
  // The plan's own floor, when set, stands for the capacity.
  plan::Plan floor = plan;
  floor.collectives.min_busbw_gbytes = 300;
  two.set_large_busbw_gbytes(110);
  EXPECT_EQ(JudgeScaling(floor, {}, &two).status(), v1::Finding::pass);
  two.set_large_busbw_gbytes(90);
  EXPECT_EQ(JudgeScaling(floor, {}, &two).status(), v1::Finding::fail);
  // gloo over tcp: the same fall is a warning, not a block.
  plan::Plan gloo = GlooPlan(0);
  gloo.fabric.link_rate_gbps = 100;
  two.set_large_busbw_gbytes(1);
  EXPECT_EQ(JudgeScaling(gloo, {&one}, &two).severity(), v1::Finding::warning);
}

// The floor follows the rails: 0.8 x 8 x 400 / 8 = 320 GB/s; with one of
// two 200 Gb/s rails dead the 2-node figure is ~22 GB/s and fails the
// two-rail floor of 40 GB/s, where the old fixed 22 GB/s passed it.
TEST(JudgeSweep, FloorFollowsTheRails) {
  plan::Plan plan = HgxPlan();
  auto hgx = ById(JudgeSweep(plan, Sweep("2-node", 2, 16, 330), ""));
  EXPECT_EQ(hgx["collectives.busbw"].status(), v1::Finding::pass);
  EXPECT_NE(
      hgx["collectives.busbw"].expected().find(">= 320.00 GB/s (0.8 x 8 rail(s) x 400 Gb/s / 8)"),
      std::string::npos)
      << hgx["collectives.busbw"].expected();
  for (auto& node : plan.nodes) node.rails = {"mlx5_0", "mlx5_1"};
  plan.fabric.link_rate_gbps = 200;
  auto dead_rail = ById(JudgeSweep(plan, Sweep("2-node", 2, 16, 22), ""));
  EXPECT_EQ(dead_rail["collectives.busbw"].status(), v1::Finding::fail);
  EXPECT_NE(dead_rail["collectives.busbw"].message().find("expected at least 40.00 GB/s"),
            std::string::npos)
      << dead_rail["collectives.busbw"].message();
  plan.collectives.min_busbw_gbytes = 22;  // still overrides
  EXPECT_EQ(ById(JudgeSweep(plan, Sweep("2-node", 2, 16, 22), ""))["collectives.busbw"].status(),
            v1::Finding::pass);
  plan.collectives.min_busbw_gbytes = 0;
  plan.collectives.min_fraction_of_fabric = 0.5;
  EXPECT_EQ(SweepFloor(plan, Sweep("2-node", 2, 16, 22)).gbytes, 25);
  EXPECT_EQ(SweepFloor(plan, Sweep("2-node", 2, 16, 22)).fabric_gbytes, 50);
}

// Every node's 1-node sweep against the median: the node whose NVLink path
// is slow is named; the others pass.
TEST(JudgeIntraNode, OneNodeFarBelowTheMedianIsNamed) {
  const plan::Plan plan = HgxPlan();
  std::vector<v1::CollectiveSweep> sweeps;
  for (double busbw : {481.0, 478.0, 120.0, 480.0}) sweeps.push_back(Sweep("1-node", 1, 8, busbw));
  for (int i = 0; i < 4; ++i) sweeps[i].set_nodes(0, "node" + std::to_string(i + 1));
  std::vector<const v1::CollectiveSweep*> one_node;
  for (const auto& sweep : sweeps) one_node.push_back(&sweep);
  std::vector<v1::Finding> findings = JudgeIntraNode(plan, one_node);
  ASSERT_EQ(findings.size(), 4u);
  for (int i : {0, 1, 3})
    EXPECT_EQ(findings[i].status(), v1::Finding::pass) << findings[i].message();
  EXPECT_EQ(findings[2].status(), v1::Finding::fail);
  EXPECT_EQ(findings[2].node(), "node3");
  EXPECT_EQ(findings[2].device(), "1-node");
  EXPECT_EQ(findings[2].severity(), v1::Finding::error);
  EXPECT_NE(findings[2].message().find("median 479.00 GB/s"), std::string::npos)
      << findings[2].message();
  // Two nodes cannot say which one is slow.
  findings = JudgeIntraNode(plan, {one_node[0], one_node[2]});
  EXPECT_EQ(findings[0].status(), v1::Finding::skipped);
  // Every collectives finding of a 1-node sweep carries its node.
  std::vector<v1::Finding> all = JudgeSweeps(plan, sweeps);
  for (const auto& finding : all) {
    if (finding.id() == "collectives.run") {
      EXPECT_FALSE(finding.node().empty());
    }
  }
}

}  // namespace
}  // namespace clustercert::controller
