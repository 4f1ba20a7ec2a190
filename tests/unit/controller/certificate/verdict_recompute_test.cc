// verify's second half: every verdict recomputed from the recorded values.
// The fixture is a real signed schema-2 certificate from four loopback
// agents (tcp pairwise matrix, gloo sweeps at three scopes).
#include "controller/certificate/verdict_recompute.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "controller/certificate/certificate_reader.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

v1::Certificate Fixture() {
  auto loaded =
      LoadCertificate(std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.json");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->certificate : v1::Certificate();
}

std::string Differences(const VerdictRecheck& recheck) {
  return absl::StrJoin(recheck.differences, "\n");
}

TEST(VerdictRecomputeTest, AnUneditedCertificateRecomputesToTheSameVerdicts) {
  const v1::Certificate certificate = Fixture();
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << Differences(recheck);
  EXPECT_EQ(recheck.checks, certificate.checks_size());
  EXPECT_EQ(recheck.pairs, 12);
  EXPECT_EQ(recheck.sweeps, 3);
}

TEST(VerdictRecomputeTest, ALoweredBandwidthFailsItsCell) {
  v1::Certificate certificate = Fixture();
  int edited = -1;
  for (int i = 0; i < certificate.pairs_size(); ++i) {
    if (certificate.pairs(i).test() == "write_bw") {
      edited = i;
      break;
    }
  }
  ASSERT_GE(edited, 0);
  auto* pair = certificate.mutable_pairs(edited);
  pair->mutable_server_result()->mutable_bandwidth()->set_avg_gbps(0.1);
  pair->mutable_client_result()->mutable_bandwidth()->set_avg_gbps(0.1);
  const std::string text = Differences(RecheckVerdicts(certificate));
  EXPECT_NE(text.find(absl::StrCat("pairs[", pair->client(), "->", pair->server(),
                                   " write_bw host] verdict: recorded pass")),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("recomputed from the recorded values fail"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: recorded certified, recomputed not-certified"), std::string::npos)
      << text;
}

TEST(VerdictRecomputeTest, AnEditedVerdictIsCaught) {
  v1::Certificate certificate = Fixture();
  for (auto& check : *certificate.mutable_checks()) {
    if (check.id() == "collectives.correctness" && check.device() == "2-node") {
      check.set_status(v1::Finding::fail);
    }
  }
  const std::string text = Differences(RecheckVerdicts(certificate));
  EXPECT_NE(text.find("checks collectives.correctness@2-node: recorded fail"), std::string::npos)
      << text;
  EXPECT_NE(text.find("recomputed from the recorded values pass"), std::string::npos) << text;
}

TEST(VerdictRecomputeTest, ACertifiedVerdictOverFailingChecksIsCaught) {
  v1::Certificate certificate = Fixture();
  certificate.set_verdict("not-certified");
  const std::string text = Differences(RecheckVerdicts(certificate));
  EXPECT_NE(text.find("verdict: recorded not-certified, recomputed certified"), std::string::npos)
      << text;
}

TEST(VerdictRecomputeTest, AnEditedPlanThresholdChangesTheVerdicts) {
  v1::Certificate certificate = Fixture();
  certificate.set_plan_yaml(absl::StrReplaceAll(
      certificate.plan_yaml(), {{"min_busbw_gbytes: 0.02", "min_busbw_gbytes: 50"}}));
  const std::string text = Differences(RecheckVerdicts(certificate));
  EXPECT_NE(text.find("the embedded plan was edited"), std::string::npos) << text;
  EXPECT_NE(text.find("checks collectives.busbw@2-node: recorded pass"), std::string::npos) << text;
}

TEST(VerdictRecomputeTest, EditedSweepRowsNoLongerGiveTheRecordedBusbw) {
  v1::Certificate certificate = Fixture();
  auto* sweep = certificate.mutable_collectives(1);
  for (auto& row : *sweep->mutable_rows()) row.set_oop_busbw_gbytes(row.oop_busbw_gbytes() / 100);
  const std::string text = Differences(RecheckVerdicts(certificate));
  EXPECT_NE(
      text.find(absl::StrCat("collectives[", sweep->scope(), "]: recorded large-message busbw")),
      std::string::npos)
      << text;
}

TEST(VerdictRecomputeTest, ADeletedOrAddedCheckIsCaught) {
  v1::Certificate deleted = Fixture();
  const std::string key = deleted.checks(2).key();
  deleted.mutable_checks()->DeleteSubrange(2, 1);
  const std::string text = Differences(RecheckVerdicts(deleted));
  EXPECT_NE(text.find(absl::StrCat("checks ", key, ": missing from the record")), std::string::npos)
      << text;

  v1::Certificate added = Fixture();
  v1::Finding* extra = added.add_checks();
  extra->set_id("port.rate");
  extra->set_node("local9");
  extra->set_status(v1::Finding::pass);
  const std::string added_text = Differences(RecheckVerdicts(added));
  EXPECT_NE(added_text.find("no such check follows from the recorded values"), std::string::npos)
      << added_text;
}

TEST(VerdictRecomputeTest, ASchemaOneCertificateSaysItCannotBeRecomputed) {
  auto loaded =
      LoadCertificate(std::string(CLUSTERCERT_FIXTURES) + "/certificates/lab-healthy.json");
  ASSERT_TRUE(loaded.ok());
  const std::string text = Differences(RecheckVerdicts(loaded->certificate));
  EXPECT_NE(text.find("embeds no plan"), std::string::npos) << text;
}

}  // namespace
}  // namespace clustercert::controller
