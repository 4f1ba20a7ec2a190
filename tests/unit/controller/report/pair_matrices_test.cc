#include "controller/report/pair_matrices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller::report {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using testing::LoadFixture;

v1::Certificate TwoNodes(double rate1, double rate2) {
  v1::Certificate certificate;
  for (auto [name, rate] : {std::pair{"a", rate1}, std::pair{"b", rate2}}) {
    v1::NodeResult* node = certificate.add_nodes();
    node->set_name(name);
    v1::RdmaDevice* device = node->mutable_inventory()->add_rdma_devices();
    device->set_name("mlx5_0");
    device->add_ports()->set_rate_gbps(rate);
  }
  return certificate;
}

v1::PairResult Bandwidth(double gbps) {
  v1::PairResult pair;
  pair.set_test("write_bw");
  pair.set_client("a");
  pair.set_server("b");
  pair.set_rail("mlx5_0");
  pair.set_memory("host");
  pair.set_ok(true);
  pair.set_value(gbps);
  pair.set_unit("Gb/s");
  pair.mutable_verdict()->set_status(v1::Finding::pass);
  return pair;
}

TEST(PairMatrices, GroupsTheFixtureByTestRailAndMemoryWithoutRetests) {
  const v1::Certificate certificate = LoadFixture("lab-slowed");
  const auto matrices = GroupPairMatrices(certificate);
  ASSERT_EQ(matrices.size(), 2u);
  EXPECT_EQ(matrices[0].Title(), "write_bw rxe0 host");
  EXPECT_EQ(matrices[0].kind, PairKind::kBandwidth);
  EXPECT_EQ(matrices[0].cells.size(), 6u);
  EXPECT_EQ(matrices[1].Title(), "write_lat rxe0 host");
  EXPECT_EQ(matrices[1].kind, PairKind::kLatency);
  EXPECT_THAT(matrices[0].nodes, ElementsAre("node1", "node2", "node3", "node4"));
  EXPECT_EQ(Retests(certificate).size(), 4u);
  EXPECT_EQ(CellStatus(certificate.pairs(3)), v1::Finding::fail);
}

TEST(PairMatrices, ScaleFromTheVerdictTextOfASchemaOneCertificate) {
  const v1::Certificate certificate = LoadFixture("lab-healthy");
  const v1::PairResult& bw = certificate.pairs(0);  // 0.04658 Gb/s (1.8 % of 2.5 Gb/s)
  const CellScale scale = ScaleOf(bw, certificate);
  EXPECT_DOUBLE_EQ(scale.reference, 2.5);
  EXPECT_THAT(scale.floor_fraction, DoubleNear(0.002, 1e-12));
  ASSERT_TRUE(scale.ratio.has_value());
  EXPECT_DOUBLE_EQ(*scale.ratio, bw.value() / 2.5);
  const v1::PairResult& lat = certificate.pairs(2);  // typical <= 20000 us
  const CellScale latency = ScaleOf(lat, certificate);
  EXPECT_DOUBLE_EQ(latency.reference, 20000);
  EXPECT_DOUBLE_EQ(*latency.ratio, lat.value() / 20000);
}

TEST(PairMatrices, SchemaTwoFieldsComeFirst) {
  const v1::Certificate certificate = TwoNodes(100, 200);
  v1::PairResult pair = Bandwidth(150);
  pair.set_line_rate_gbps(200);
  pair.set_threshold(160);
  pair.mutable_verdict()->set_observed("150 Gb/s (75 % of 400 Gb/s)");
  const CellScale scale = ScaleOf(pair, certificate);
  EXPECT_DOUBLE_EQ(scale.reference, 200);
  EXPECT_DOUBLE_EQ(scale.floor_fraction, 0.8);
  EXPECT_DOUBLE_EQ(*scale.ratio, 0.75);
}

TEST(PairMatrices, FallsBackToThresholdOverFractionThenToTheInventory) {
  const v1::Certificate certificate = TwoNodes(100, 200);
  v1::PairResult pair = Bandwidth(90);
  pair.set_threshold(80);
  pair.mutable_verdict()->set_expected(">= 80 % of line rate");
  EXPECT_DOUBLE_EQ(ScaleOf(pair, certificate).reference, 100);  // 80 / 0.8

  v1::PairResult bare = Bandwidth(90);
  const CellScale scale = ScaleOf(bare, certificate);
  EXPECT_DOUBLE_EQ(scale.reference, 100);  // the slower port
  EXPECT_DOUBLE_EQ(*scale.ratio, 0.9);

  bare.set_rail("");
  EXPECT_FALSE(ScaleOf(bare, certificate).ratio.has_value());  // nothing to compare with
}

TEST(PairMatrices, AFailedTestHasNoRatio) {
  const v1::Certificate certificate = LoadFixture("lab-slowed");
  EXPECT_FALSE(ScaleOf(certificate.pairs(3), certificate).ratio.has_value());
}

}  // namespace
}  // namespace clustercert::controller::report
