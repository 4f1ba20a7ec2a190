// verify on the lossless checks of format 6: a fresh certificate recomputes
// to the same lossless.* findings, an edited counter is caught, and a
// format-5 certificate (which had none) still matches.
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

constexpr char kPlan[] = R"(cluster: lossless-pair
fabric:
  type: roce
  link_rate_gbps: 100
  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}
nodes:
  - {name: node1, agent: "127.0.0.1:17071", rails: [mlx5_0]}
  - {name: node2, agent: "127.0.0.1:17072", rails: [mlx5_0]}
pairwise:
  engine: verbs
  tests: [write_bw]
)";

void Add(google::protobuf::RepeatedPtrField<v1::CounterDelta>* deltas, const std::string& name,
         uint64_t delta) {
  v1::CounterDelta* d = deltas->Add();
  d->set_source("ethtool");
  d->set_name(name);
  d->set_delta(delta);
  d->set_after(delta);
}

v1::PairResult Cell(const std::string& client, const std::string& server) {
  v1::PairResult pair;
  pair.set_test("write_bw");
  pair.set_engine("verbs");
  pair.set_memory("host");
  pair.set_client(client);
  pair.set_server(server);
  pair.set_rail("mlx5_0");
  pair.set_ok(true);
  pair.set_line_rate_gbps(100);
  pair.set_value(93);
  pair.set_unit("Gb/s");
  pair.set_threshold(80);
  pair.set_traffic_class(106);
  pair.mutable_client_result()->mutable_bandwidth()->set_avg_gbps(93);
  pair.mutable_server_result()->mutable_bandwidth()->set_avg_gbps(93);
  Add(pair.mutable_client_counters(), "tx_prio3_bytes", 11'600'000'000);
  Add(pair.mutable_client_counters(), "rx_prio3_pause", 40);
  Add(pair.mutable_server_counters(), "rx_prio3_bytes", 11'600'000'000);
  Add(pair.mutable_server_counters(), "tx_prio3_pause", 40);
  return pair;
}

// What the run writes, for a given format: the reachability checks, the
// matrix's checks by that format's rules, keys, findings and verdict.
v1::Certificate Certificate(uint32_t format) {
  return testing::MatrixCertificate(kPlan, "lossless.yaml", "lossless-pair",
                                    {Cell("node1", "node2"), Cell("node2", "node1")}, format);
}

int Count(const v1::Certificate& certificate, const std::string& prefix) {
  int n = 0;
  for (const auto& check : certificate.checks()) n += check.id().rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(LosslessRecomputeTest, AFreshCertificateRecomputesItsLosslessChecks) {
  const v1::Certificate certificate = Certificate(kCertificateFormatVersion);
  EXPECT_EQ(certificate.format_version(), 8u);
  EXPECT_EQ(Count(certificate, "lossless."), 6);  // 2 cells x 3 checks
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
  EXPECT_EQ(recheck.checks, certificate.checks_size());
}

TEST(LosslessRecomputeTest, AnEditedPriorityCounterIsCaught) {
  v1::Certificate certificate = Certificate(kCertificateFormatVersion);
  // The bytes "moved" to priority 0 after the run: the recorded pass no
  // longer follows.
  for (auto& delta : *certificate.mutable_pairs(0)->mutable_client_counters()) {
    if (delta.name() == "tx_prio3_bytes") delta.set_name("tx_prio0_bytes");
  }
  const std::string text = absl::StrJoin(RecheckVerdicts(certificate).differences, "\n");
  EXPECT_THAT(text, HasSubstr("checks lossless.priority@node1/mlx5_0->node2 write_bw host: "
                              "recorded pass (error)"));
  EXPECT_THAT(text, HasSubstr("recomputed from the recorded values fail (error), observed 0 % on "
                              "priority 3 (node1 mlx5_0 sent 11.6 GB)"));
}

TEST(LosslessRecomputeTest, AFormatFiveCertificateStillMatches) {
  const v1::Certificate certificate = Certificate(5);
  EXPECT_EQ(Count(certificate, "lossless."), 0);
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
}

TEST(LosslessRecomputeTest, LosslessChecksInAFormatFiveCertificateFollowFromNothing) {
  v1::Certificate certificate = Certificate(kCertificateFormatVersion);
  certificate.set_format_version(5);
  const std::string text = absl::StrJoin(RecheckVerdicts(certificate).differences, "\n");
  EXPECT_THAT(text, HasSubstr("checks lossless.drops@node2/mlx5_0->node1 write_bw host: recorded "
                              "pass (error), observed no drop counter rose, expected no drop "
                              "counter rising, but no such check follows from the recorded "
                              "values"));
}

}  // namespace
}  // namespace clustercert::controller
