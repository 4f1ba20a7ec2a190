// verify on mtu.path (format 7, issue 35): a fresh certificate recomputes
// the same mtu.path findings, the stalled cell's included (judged on the
// path MTU its ends measured at connect), and an edited figure is caught.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "clustercert/v1/certificate.pb.h"
#include "common/sha256.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/certificate/verdict_recompute.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/plan/plan_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/certificate/matrix_certificate.h"

namespace clustercert::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPlan[] = R"(cluster: mtu-pair
fabric:
  type: roce
  link_rate_gbps: 100
nodes:
  - {name: node1, agent: "127.0.0.1:17071", rails: [mlx5_0]}
  - {name: node2, agent: "127.0.0.1:17072", rails: [mlx5_0]}
pairwise:
  engine: verbs
  tests: [write_bw]
)";

v1::PathMtu Route(const std::string& peer, uint32_t after) {
  v1::PathMtu mtu;
  mtu.set_peer_address(peer);
  mtu.set_qp_mtu(4096);
  mtu.set_port_active_mtu(4096);
  mtu.set_local_route_mtu(9000);
  mtu.set_route_mtu(after);
  return mtu;
}

// A completed cell, or one that stalled behind a routed hop at 1500: its
// run returned nothing but the path MTU both ends measured at connect.
v1::PairResult Cell(const std::string& client, const std::string& server, bool ok) {
  v1::PairResult pair;
  pair.set_test("write_bw");
  pair.set_engine("verbs");
  pair.set_memory("host");
  pair.set_client(client);
  pair.set_server(server);
  pair.set_rail("mlx5_0");
  pair.set_ok(ok);
  pair.set_line_rate_gbps(100);
  pair.set_unit("Gb/s");
  if (ok) {
    pair.set_value(93);
    pair.mutable_client_result()->mutable_bandwidth()->set_avg_gbps(93);
    pair.mutable_server_result()->mutable_bandwidth()->set_avg_gbps(93);
  } else {
    pair.set_error(client + " run: mlx5_0 moved no data for 10.0 s");
  }
  *pair.mutable_client_result()->mutable_path_mtu() = Route("10.0.0.2", ok ? 9000 : 1500);
  *pair.mutable_server_result()->mutable_path_mtu() = Route("10.0.0.1", 9000);
  return pair;
}

v1::Certificate Certificate(uint32_t format) {
  return testing::MatrixCertificate(kPlan, "mtu.yaml", "mtu-pair",
                                    {Cell("node1", "node2", true), Cell("node2", "node1", false)},
                                    format);
}

const v1::Finding* Find(const v1::Certificate& certificate, const std::string& key) {
  for (const auto& check : certificate.checks()) {
    if (check.key() == key) return &check;
  }
  return nullptr;
}

TEST(PathMtuRecomputeTest, AFreshCertificateRecomputesItsPathMtuChecks) {
  const v1::Certificate certificate = Certificate(kCertificateFormatVersion);
  const v1::Finding* healthy = Find(certificate, "mtu.path@node1/mlx5_0->node2 write_bw host");
  const v1::Finding* stalled = Find(certificate, "mtu.path@node2/mlx5_0->node1 write_bw host");
  ASSERT_NE(healthy, nullptr);
  ASSERT_NE(stalled, nullptr);
  EXPECT_EQ(healthy->status(), v1::Finding::pass) << healthy->message();
  EXPECT_EQ(stalled->status(), v1::Finding::fail);
  EXPECT_THAT(stalled->message(), HasSubstr("a hop between node2 and node1 carries only 1500"));
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
  EXPECT_EQ(recheck.checks, certificate.checks_size());
}

TEST(PathMtuRecomputeTest, AnEditedRouteFigureIsCaught) {
  v1::Certificate certificate = Certificate(kCertificateFormatVersion);
  certificate.mutable_pairs(1)->mutable_client_result()->mutable_path_mtu()->set_route_mtu(9000);
  const std::string text = absl::StrJoin(RecheckVerdicts(certificate).differences, "\n");
  EXPECT_THAT(text, HasSubstr("mtu.path@node2/mlx5_0->node1 write_bw host: recorded fail"));
}

TEST(PathMtuRecomputeTest, AFormatSixCertificateHasNoPathMtu) {
  const v1::Certificate certificate = Certificate(6);
  EXPECT_EQ(Find(certificate, "mtu.path@node1/mlx5_0->node2 write_bw host"), nullptr);
  // (The stack.* checks' format rule is another part's; only mtu.path here.)
  const std::string text = absl::StrJoin(RecheckVerdicts(certificate).differences, "\n");
  EXPECT_THAT(text, Not(HasSubstr("mtu.path")));
}

}  // namespace
}  // namespace clustercert::controller
