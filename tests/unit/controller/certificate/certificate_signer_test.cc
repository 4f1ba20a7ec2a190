// Ed25519 signing round trip and the tamper cases verify must catch.
#include "controller/certificate/certificate_signer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_join.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_writer.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;

class CertificateSignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cc_signer_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    key_ = (dir_ / "signing.key").string();
    ASSERT_TRUE(GenerateSigningKey(key_).ok());
    auto loaded =
        LoadCertificate(std::string(CLUSTERCERT_FIXTURES) + "/certificates/lab-healthy.json");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    certificate_ = loaded->certificate;
    ASSERT_TRUE(SignCertificate(certificate_, key_).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Problems(const SignatureCheck& check) { return absl::StrJoin(check.problems, " | "); }

  fs::path dir_;
  std::string key_;
  v1::Certificate certificate_;
};

TEST_F(CertificateSignerTest, KeygenWritesAPrivateKeyOnlyTheOwnerReadsAndAPublicKey) {
  struct stat st {};
  ASSERT_EQ(::stat(key_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto pem = ReadPublicKeyFile(key_ + ".pub");
  ASSERT_TRUE(pem.ok()) << pem.status();
  auto fingerprint = PublicKeyFingerprint(*pem);
  ASSERT_TRUE(fingerprint.ok());
  EXPECT_EQ(fingerprint->rfind("SHA256:", 0), 0u);
  EXPECT_EQ(fingerprint->size(), 7u + 64u);
}

TEST_F(CertificateSignerTest, KeygenNeverOverwritesAKey) {
  const auto status = GenerateSigningKey(key_);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(status.message().find("never overwrites"), std::string::npos) << status;
}

TEST_F(CertificateSignerTest, SignedCertificateIsIntactAndValidOnlyWithATrustedKey) {
  EXPECT_EQ(certificate_.signature().algorithm(), "ed25519");
  EXPECT_GT(certificate_.signature().sections_size(), certificate_.pairs_size());
  // The embedded key shows the content is unchanged, never who signed it.
  auto embedded = CheckSignature(certificate_, TrustedKeys());
  EXPECT_TRUE(embedded.intact) << Problems(embedded);
  EXPECT_FALSE(embedded.trusted);
  EXPECT_FALSE(embedded.valid);
  EXPECT_NE(embedded.untrusted.find(certificate_.signature().public_key_fingerprint()),
            std::string::npos)
      << embedded.untrusted;
  auto trusted = TrustedKeys::FromPublicKeyFile(key_ + ".pub");
  ASSERT_TRUE(trusted.ok()) << trusted.status();
  auto given = CheckSignature(certificate_, *trusted);
  EXPECT_TRUE(given.valid) << Problems(given);
  EXPECT_EQ(given.trusted_by, key_ + ".pub");
  EXPECT_EQ(given.fingerprint, certificate_.signature().public_key_fingerprint());
  // The plan's own private key trusts what it signed (re-certification).
  auto own = TrustedKeys::FromSigningKey(key_);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_TRUE(CheckSignature(certificate_, *own).valid);
}

TEST_F(CertificateSignerTest, SurvivesTheJsonRoundTrip) {
  // verify reads the file back: the signed bytes must not depend on JSON.
  auto json = CertificateJson(certificate_);
  ASSERT_TRUE(json.ok());
  auto parsed = ParseCertificateJson(*json, "round trip");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto check = CheckSignature(*parsed, TrustedKeys());
  EXPECT_TRUE(check.intact) << Problems(check);
}

TEST_F(CertificateSignerTest, SignsANotCertifiedCertificateWithItsReasons) {
  auto loaded =
      LoadCertificate(std::string(CLUSTERCERT_FIXTURES) + "/certificates/lab-slowed.json");
  ASSERT_TRUE(loaded.ok());
  v1::Certificate slowed = loaded->certificate;
  ASSERT_GT(slowed.verdict_reasons_size(), 0);
  ASSERT_TRUE(SignCertificate(slowed, key_).ok());
  EXPECT_TRUE(CheckSignature(slowed, TrustedKeys()).intact);
  slowed.set_verdict_reasons(0, "nothing to see");
  auto check = CheckSignature(slowed, TrustedKeys());
  EXPECT_NE(Problems(check).find("verdict_reasons was edited"), std::string::npos)
      << Problems(check);
}

TEST_F(CertificateSignerTest, AnotherKeyIsRefused) {
  const std::string other = (dir_ / "other.key").string();
  ASSERT_TRUE(GenerateSigningKey(other).ok());
  auto trusted = TrustedKeys::FromPublicKeyFile(other + ".pub");
  ASSERT_TRUE(trusted.ok());
  auto check = CheckSignature(certificate_, *trusted);
  EXPECT_TRUE(check.intact);
  EXPECT_FALSE(check.valid);
  EXPECT_NE(check.untrusted.find("signed by another key"), std::string::npos) << check.untrusted;
}

TEST_F(CertificateSignerTest, AnEditedValueNamesThePairCell) {
  certificate_.mutable_pairs(0)->mutable_client_result()->mutable_latency()->set_typical_us(1.0);
  auto check = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(check.intact);
  EXPECT_NE(Problems(check).find("pairs[node1->node4 rxe0 write_bw host] was edited"),
            std::string::npos)
      << Problems(check);
}

TEST_F(CertificateSignerTest, AnEditedVerdictIsCaught) {
  certificate_.set_verdict("not-certified");
  auto header = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(header.intact);
  EXPECT_NE(Problems(header).find("header was edited"), std::string::npos) << Problems(header);

  ASSERT_TRUE(SignCertificate(certificate_, key_).ok());
  certificate_.mutable_checks(0)->set_status(v1::Finding::pass);
  certificate_.mutable_checks(0)->set_severity(v1::Finding::warning);
  auto checks = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(checks.intact);
  EXPECT_NE(Problems(checks).find("checks was edited"), std::string::npos) << Problems(checks);
}

TEST_F(CertificateSignerTest, AnEditedPlanIsCaught) {
  certificate_.set_plan_yaml("cluster: other\n");
  auto check = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(check.intact);
  EXPECT_NE(Problems(check).find("plan_yaml was edited"), std::string::npos) << Problems(check);
}

TEST_F(CertificateSignerTest, AnEditedSignatureIsCaught) {
  std::string value = certificate_.signature().value();
  value[0] = value[0] == 'A' ? 'B' : 'A';
  certificate_.mutable_signature()->set_value(value);
  auto check = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(check.intact);
  EXPECT_NE(Problems(check).find("signature does not match"), std::string::npos) << Problems(check);
}

TEST_F(CertificateSignerTest, ASwappedEmbeddedKeyIsCaught) {
  // Re-signing with another key and pasting the original fingerprint back.
  const std::string fingerprint = certificate_.signature().public_key_fingerprint();
  const std::string other = (dir_ / "other.key").string();
  ASSERT_TRUE(GenerateSigningKey(other).ok());
  ASSERT_TRUE(SignCertificate(certificate_, other).ok());
  certificate_.mutable_signature()->set_public_key_fingerprint(fingerprint);
  auto check = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(check.intact);
  EXPECT_NE(Problems(check).find("embedded public key is SHA256:"), std::string::npos)
      << Problems(check);
}

TEST_F(CertificateSignerTest, UnsignedIsNotValidAndSaysHowToSign) {
  certificate_.clear_signature();
  auto check = CheckSignature(certificate_, TrustedKeys());
  EXPECT_FALSE(check.is_signed);
  EXPECT_FALSE(check.intact);
  EXPECT_NE(Problems(check).find("certificate.signing_key"), std::string::npos);
}

TEST_F(CertificateSignerTest, AMissingOrForeignKeyFileIsASentenceWithTheFix) {
  v1::Certificate copy = certificate_;
  auto missing = SignCertificate(copy, (dir_ / "nope.key").string());
  EXPECT_NE(missing.message().find("controller keygen --out"), std::string::npos) << missing;
  std::ofstream(dir_ / "junk.key") << "not a key\n";
  auto junk = SignCertificate(copy, (dir_ / "junk.key").string());
  EXPECT_NE(junk.message().find("is not an Ed25519 private key"), std::string::npos) << junk;
}

}  // namespace
}  // namespace clustercert::controller
