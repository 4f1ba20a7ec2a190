// A node-agent's NaN or infinity end to end (issue 34, item 7): the run over
// fake agents judges the cells it feeds unknown, never pass; the signed
// certificate survives its JSON file (a -nan used to break its own
// signature) and verify recomputes the same unknowns; an infinity edited
// into a passing certificate is caught by the recomputation.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/version.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/certificate_writer.h"
#include "controller/certificate/trusted_keys.h"
#include "controller/certificate/verdict_recompute.h"
#include "controller/commands/certification_run.h"
#include "controller/plan/plan_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_tcp_agent.h"
#include "tests/support/simulated_clock.h"
#include "tests/support/temp_tree.h"

namespace clustercert::controller {
namespace {

using testing::FakeTcpAgent;
using ::testing::HasSubstr;

constexpr char kPlan[] = R"(cluster: non-finite
fabric: {type: ethernet, link_rate_gbps: 10, min_netdev_mtu: 1500}
nodes:
  - {name: node1, agent: "127.0.0.1:17071", data_ip: 10.0.0.1, gpus: 0}
  - {name: node2, agent: "127.0.0.1:17072", data_ip: 10.0.0.2, gpus: 0}
  - {name: node3, agent: "127.0.0.1:17073", data_ip: 10.0.0.3, gpus: 0}
agents: {insecure: true, retries: 0}
pairwise: {engine: tcp, tests: [write_bw], duration_s: 1, min_fraction_of_line_rate: 0.5}
)";

class NonFiniteCertificateTest : public ::testing::Test {
 protected:
  // A run in which node3, as the receiving end, reports `node3_gbps`.
  v1::Certificate Run(double node3_gbps) {
    auto parsed = plan::ParsePlan(kPlan, "non-finite.yaml");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    plan_ = *parsed;
    for (const plan::Node& node : plan_.nodes) {
      NodeState state;
      state.node = node;
      state.client =
          std::make_unique<FakeTcpAgent>(node.name, node.name == "node3" ? node3_gbps : 9);
      nodes_.push_back(std::move(state));
    }
    return RunCertification(plan_, nodes_, progress_, clock_).certificate;
  }

  // Signed with a fresh key, written as certificate.json is and read back
  // as verify reads it.
  v1::Certificate SignedRoundTrip(v1::Certificate certificate) {
    const std::string key = (tree_.root() / absl::StrCat("key", ++keys_)).string();
    EXPECT_TRUE(GenerateSigningKey(key).ok());
    EXPECT_TRUE(SignCertificate(certificate, key).ok());
    auto json = CertificateJson(certificate);
    EXPECT_TRUE(json.ok()) << json.status();
    auto parsed = ParseCertificateJson(*json, "certificate.json");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    auto trusted = TrustedKeys::FromSigningKey(key);
    EXPECT_TRUE(trusted.ok()) << trusted.status();
    const SignatureCheck check = CheckSignature(*parsed, *trusted);
    EXPECT_TRUE(check.valid) << absl::StrJoin(check.problems, "\n");
    return *parsed;
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  Progress progress_{stderr, /*quiet=*/true};
  ::clustercert::testing::SimulatedClock clock_;
  ::clustercert::testing::TempTree tree_{"clustercert_non_finite"};
  int keys_ = 0;
};

TEST_F(NonFiniteCertificateTest, NaNAndInfAreUnknownInTheRunAndInVerify) {
  const double negative_nan = std::copysign(std::numeric_limits<double>::quiet_NaN(), -1.0);
  for (const double bad : {negative_nan, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(bad);
    nodes_.clear();
    const v1::Certificate certificate = Run(bad);
    int invalid = 0;
    for (const v1::PairResult& pair : certificate.pairs()) {
      if (pair.server() != "node3") {
        EXPECT_EQ(pair.verdict().status(), v1::Finding::pass) << pair.verdict().message();
        continue;
      }
      ++invalid;
      EXPECT_EQ(pair.verdict().status(), v1::Finding::unknown) << pair.verdict().message();
      EXPECT_THAT(pair.verdict().message(),
                  HasSubstr(absl::StrCat("node3 reported a non-finite avg_gbps (",
                                         std::isnan(bad) ? "nan" : "inf",
                                         "): the measurement is invalid; rerun")));
    }
    EXPECT_EQ(invalid, 2);
    EXPECT_EQ(certificate.verdict(), "not-certified");

    // The run's own certificate, signed and read back, verifies: intact,
    // and every verdict recomputes the same.
    const v1::Certificate read_back = SignedRoundTrip(certificate);
    const VerdictRecheck recheck = RecheckVerdicts(read_back);
    EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
  }
}

// The forgery the guard stops: a failing cell's figure made inf (which
// cleared the floor) with its verdict made pass.
TEST_F(NonFiniteCertificateTest, AnInfinityEditedIntoACellIsCaughtByVerify) {
  v1::Certificate certificate = Run(1);  // node3 receives at 1 Gb/s of 10: fails
  bool edited = false;
  for (v1::PairResult& pair : *certificate.mutable_pairs()) {
    if (pair.server() != "node3") continue;
    ASSERT_EQ(pair.verdict().status(), v1::Finding::fail);
    pair.mutable_server_result()->mutable_bandwidth()->set_avg_gbps(
        std::numeric_limits<double>::infinity());
    pair.mutable_verdict()->set_status(v1::Finding::pass);
    edited = true;
    break;
  }
  ASSERT_TRUE(edited);
  const std::string text = absl::StrJoin(RecheckVerdicts(certificate).differences, "\n");
  EXPECT_THAT(text, HasSubstr("recorded pass"));
  EXPECT_THAT(text, HasSubstr("unknown"));
}

}  // namespace
}  // namespace clustercert::controller
