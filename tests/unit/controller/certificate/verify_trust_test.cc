// Issue 15, deliverable 7: verify means trusted. The attack seen: a real
// certificate edited (cluster renamed, a bandwidth x65) and re-signed with a
// fresh key verified as valid, because verify checked the signature against
// the key the certificate itself embeds.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/certificate_writer.h"
#include "controller/certificate/trusted_keys.h"
#include "controller/commands/verify_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFixture =
    std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.json";
const std::string kFixtureKey =
    std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.pub";

struct Verified {
  int exit_code = -1;
  std::string out;
};

class VerifyTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cc_trust_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "trusted");
    fs::copy_file(kFixtureKey, dir_ / "trusted" / "cluster.pub");
    // A trust directory must not be group-writable; a umask of 002 would
    // make these so.
    fs::permissions(dir_ / "trusted", fs::perms(0755));
    fs::permissions(dir_ / "trusted" / "cluster.pub", fs::perms(0644));
    nowhere_ = (dir_ / "no-such-dir").string();

    // The forgery, made as the attacker made it.
    auto loaded = LoadCertificate(kFixture);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    forged_ = loaded->certificate;
    forged_.set_cluster("forged-cluster");
    auto* bandwidth = forged_.mutable_pairs(0)->mutable_server_result()->mutable_bandwidth();
    bandwidth->set_avg_gbps(bandwidth->avg_gbps() * 65);
    const std::string attacker_key = (dir_ / "attacker.key").string();
    ASSERT_TRUE(GenerateSigningKey(attacker_key).ok());
    ASSERT_TRUE(SignCertificate(forged_, attacker_key).ok());
    auto pem = ReadPublicKeyFile(attacker_key + ".pub");
    ASSERT_TRUE(pem.ok());
    attacker_fingerprint_ = *PublicKeyFingerprint(*pem);
    forged_path_ = (dir_ / "forged.json").string();
    auto json = CertificateJson(forged_);
    ASSERT_TRUE(json.ok());
    std::ofstream(forged_path_) << *json;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `controller verify` as the CLI runs it, with `default_dir` standing in
  // for /etc/clustercert/trusted-keys.
  Verified Verify(const std::string& path, const std::string& pubkey, const std::string& trust_dir,
                  const std::string& default_dir) {
    CommandOptions options;
    options.pubkey = pubkey;
    options.trust_dir = trust_dir;
    std::fflush(stdout);
    ::testing::internal::CaptureStdout();
    Verified result;
    result.exit_code = RunVerifyCommand({path}, options, default_dir);
    std::fflush(stdout);
    result.out = ::testing::internal::GetCapturedStdout();
    return result;
  }

  fs::path dir_;
  std::string nowhere_;
  v1::Certificate forged_;
  std::string forged_path_;
  std::string attacker_fingerprint_;
};

TEST_F(VerifyTrustTest, AReSignedForgeryIsIntactButNotTrusted) {
  const SignatureCheck check = CheckSignature(forged_, TrustedKeys(nowhere_));
  EXPECT_TRUE(check.intact);
  EXPECT_FALSE(check.trusted);
  EXPECT_FALSE(check.valid);
  EXPECT_EQ(check.fingerprint, attacker_fingerprint_);
  EXPECT_THAT(check.untrusted, HasSubstr(attacker_fingerprint_));
  EXPECT_THAT(check.untrusted, HasSubstr("pass the cluster's public key with --pubkey FILE or add "
                                         "it to " +
                                         nowhere_));
}

TEST_F(VerifyTrustTest, TheForgeryFailsWithoutATrustedKey) {
  const Verified verified = Verify(forged_path_, "", "", nowhere_);
  EXPECT_EQ(verified.exit_code, 1) << verified.out;
  EXPECT_THAT(verified.out, HasSubstr("signature: intact, but the signer is NOT TRUSTED: Ed25519 "
                                      "key " +
                                      attacker_fingerprint_));
  EXPECT_THAT(verified.out, HasSubstr("--pubkey FILE or add it to " + nowhere_));
  EXPECT_THAT(verified.out, Not(HasSubstr("\nvalid\n")));
}

TEST_F(VerifyTrustTest, TheForgeryFailsWithTheRealPublicKey) {
  auto real = TrustedKeys::FromPublicKeyFile(kFixtureKey);
  ASSERT_TRUE(real.ok()) << real.status();
  const SignatureCheck check = CheckSignature(forged_, *real);
  EXPECT_FALSE(check.valid);
  EXPECT_THAT(check.untrusted, HasSubstr("it was signed by another key"));

  const Verified verified = Verify(forged_path_, kFixtureKey, "", nowhere_);
  EXPECT_EQ(verified.exit_code, 1) << verified.out;
  EXPECT_THAT(verified.out, HasSubstr("signed by another key"));
}

TEST_F(VerifyTrustTest, TheForgeryFailsAgainstATrustDirectory) {
  const std::string trusted = (dir_ / "trusted").string();
  const Verified verified = Verify(forged_path_, "", trusted, nowhere_);
  EXPECT_EQ(verified.exit_code, 1) << verified.out;
  EXPECT_THAT(verified.out,
              HasSubstr("is not among the 1 key(s) in the trust directory " + trusted));
  // The default directory, when it exists, is consulted the same way.
  EXPECT_EQ(Verify(forged_path_, "", "", trusted).exit_code, 1);
}

TEST_F(VerifyTrustTest, AnHonestCertificateVerifiesWithItsKeyOrATrustDirectory) {
  const std::string trusted = (dir_ / "trusted").string();
  const Verified pinned = Verify(kFixture, kFixtureKey, "", nowhere_);
  EXPECT_EQ(pinned.exit_code, 0) << pinned.out;
  EXPECT_THAT(pinned.out, HasSubstr("(trusted: " + kFixtureKey + ")"));
  const Verified directory = Verify(kFixture, "", trusted, nowhere_);
  EXPECT_EQ(directory.exit_code, 0) << directory.out;
  EXPECT_THAT(directory.out, HasSubstr("(trusted: " + trusted + "/cluster.pub)"));
  const Verified by_default = Verify(kFixture, "", "", trusted);
  EXPECT_EQ(by_default.exit_code, 0) << by_default.out;
  // An honest certificate with nothing to trust is intact but not verified.
  const Verified untrusted = Verify(kFixture, "", "", nowhere_);
  EXPECT_EQ(untrusted.exit_code, 1) << untrusted.out;
  EXPECT_THAT(untrusted.out, HasSubstr("NOT VERIFIED: the content matches its signature"));
}

TEST_F(VerifyTrustTest, TheTrustDirectoryMustBeTheAdministratorsAlone) {
  const std::string trusted = (dir_ / "trusted").string();
  ::chmod(trusted.c_str(), 0777);
  auto open = TrustedKeys::FromDirectory(trusted);
  EXPECT_EQ(open.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(open.status().message(), HasSubstr("chmod go-w " + trusted));
  EXPECT_EQ(Verify(kFixture, "", trusted, nowhere_).exit_code, 2);
  ::chmod(trusted.c_str(), 0755);

  const std::string key = trusted + "/cluster.pub";
  ::chmod(key.c_str(), 0666);
  EXPECT_THAT(TrustedKeys::FromDirectory(trusted).status().message(),
              HasSubstr("chmod go-w " + key));
  ::chmod(key.c_str(), 0644);

  std::ofstream(trusted + "/junk.pub") << "not a key\n";
  auto junk = TrustedKeys::FromDirectory(trusted);
  EXPECT_THAT(junk.status().message(), HasSubstr(trusted + "/junk.pub: "));
  EXPECT_THAT(junk.status().message(), HasSubstr("move the file out of the trust directory"));
  fs::remove(trusted + "/junk.pub");

  std::ofstream(trusted + "/README") << "not a key, and not a .pub: ignored\n";
  auto keys = TrustedKeys::FromDirectory(trusted);
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 1u);
}

TEST_F(VerifyTrustTest, PubkeyAndTrustDirTogetherIsAUsageError) {
  CommandOptions options;
  options.pubkey = kFixtureKey;
  options.trust_dir = (dir_ / "trusted").string();
  auto trust = VerifyTrust(options, nowhere_);
  EXPECT_EQ(trust.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(trust.status().message(), HasSubstr("not both"));
  EXPECT_EQ(Verify(kFixture, kFixtureKey, (dir_ / "trusted").string(), nowhere_).exit_code, 2);
  // A --trust-dir that does not exist is a usage error, not "trust nothing".
  EXPECT_EQ(Verify(kFixture, "", nowhere_, nowhere_).exit_code, 2);
}

TEST_F(VerifyTrustTest, JsonSaysIntactButNotTrusted) {
  CommandOptions options;
  options.json = true;
  std::fflush(stdout);
  ::testing::internal::CaptureStdout();
  const int code = RunVerifyCommand({forged_path_}, options, nowhere_);
  std::fflush(stdout);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 1);
  EXPECT_THAT(out, HasSubstr("\"valid\": false, \"signed\": true, \"intact\": true, \"trusted\": "
                             "false, \"fingerprint\": \"" +
                             attacker_fingerprint_ + "\""));
}

TEST_F(VerifyTrustTest, ControlCharactersFromTheCertificateDoNotReachTheTerminal) {
  // A cluster name that moves the cursor could overprint verify's verdict.
  forged_.set_cluster("x\x1b[2K\rvalid");
  auto json = CertificateJson(forged_);
  ASSERT_TRUE(json.ok());
  std::ofstream(forged_path_) << *json;
  const Verified verified = Verify(forged_path_, "", "", nowhere_);
  EXPECT_THAT(verified.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(verified.out, HasSubstr("x\\x1b[2K\\rvalid"));
}

}  // namespace
}  // namespace clustercert::controller
