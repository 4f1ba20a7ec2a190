// Issue 34. Item 6: a FIFO as the plan's signing_key, as `verify --pubkey`
// or as a trusted .pub hung `run` or `verify` in open(2); /dev/zero as the
// key was read until memory ran out. Each is refused within seconds naming
// the path. Item 8: a trust directory owned by another user (mode 0755) was
// trusted; the directory and its keys must be root's or ours, and not
// writable by group or others.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/trusted_keys.h"
#include "controller/commands/verify_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/support/special_files.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;
using clustercert::testing::FinishesWithin;
using clustercert::testing::kSpecialFileDeadline;
using clustercert::testing::ReleaseFifoReader;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kFixture =
    std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.json";
const std::string kFixtureKey =
    std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.pub";

class SpecialKeyFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cc_special_keys_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(trusted());
    ::chmod(dir_.c_str(), 0755);
    ::chmod(trusted().c_str(), 0755);
    fs::copy_file(kFixtureKey, trusted() + "/cluster.pub");
    ::chmod((trusted() + "/cluster.pub").c_str(), 0644);
    fifo_ = (dir_ / "key.fifo").string();
    ASSERT_TRUE(clustercert::testing::MakeFifo(fifo_));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string trusted() const { return (dir_ / "trusted").string(); }

  // `work` on its own thread; the test fails if it blocks.
  void Within(const std::function<void()>& work) {
    const std::string fifo = fifo_;
    EXPECT_TRUE(FinishesWithin(kSpecialFileDeadline, work, [fifo] { ReleaseFifoReader(fifo); }))
        << "the call blocked on a special file";
  }

  // `controller verify` as the CLI runs it; its exit code.
  int Verify(const std::string& pubkey, const std::string& trust_dir) {
    CommandOptions options;
    options.pubkey = pubkey;
    options.trust_dir = trust_dir;
    int code = -1;
    std::fflush(stdout);
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    Within([&] { code = RunVerifyCommand({kFixture}, options, (dir_ / "none").string()); });
    std::fflush(stdout);
    ::testing::internal::GetCapturedStdout();
    said_ = ::testing::internal::GetCapturedStderr();
    return code;
  }

  fs::path dir_;
  std::string fifo_;
  std::string said_;
};

TEST_F(SpecialKeyFilesTest, AFifoOrDevZeroAsTheSigningKeyIsRefusedAtOnce) {
  auto loaded = LoadCertificate(kFixture);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  v1::Certificate certificate = loaded->certificate;
  absl::Status fifo_status = absl::UnknownError("did not finish");
  absl::Status zero_status = absl::UnknownError("did not finish");
  absl::StatusOr<TrustedKeys> from_key = absl::UnknownError("did not finish");
  Within([&] {
    fifo_status = SignCertificate(certificate, fifo_);
    zero_status = SignCertificate(certificate, "/dev/zero");
    from_key = TrustedKeys::FromSigningKey(fifo_);
  });
  EXPECT_EQ(fifo_status.code(), absl::StatusCode::kFailedPrecondition) << fifo_status;
  EXPECT_THAT(fifo_status.message(),
              AllOf(HasSubstr("the signing key " + fifo_ + " is a FIFO, not a regular file"),
                    HasSubstr("fix certificate.signing_key in the plan")));
  EXPECT_THAT(zero_status.message(), HasSubstr("the signing key /dev/zero is a character device"));
  EXPECT_THAT(from_key.status().message(), HasSubstr(fifo_ + " is a FIFO"));
}

TEST_F(SpecialKeyFilesTest, AnOversizedSigningKeyIsRefusedNamingTheCap) {
  const std::string big = (dir_ / "big.key").string();
  std::ofstream(big) << std::string(kMaxKeyFileBytes + 1, 'k');
  auto loaded = LoadCertificate(kFixture);
  ASSERT_TRUE(loaded.ok());
  v1::Certificate certificate = loaded->certificate;
  const absl::Status status = SignCertificate(certificate, big);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("over the cap of 16384 bytes for a signing key"));
}

TEST_F(SpecialKeyFilesTest, AFifoOrDevZeroAsPubkeyIsRefusedAtOnce) {
  absl::StatusOr<TrustedKeys> fifo = absl::UnknownError("did not finish");
  absl::StatusOr<TrustedKeys> zero = absl::UnknownError("did not finish");
  absl::StatusOr<std::string> read = absl::UnknownError("did not finish");
  Within([&] {
    fifo = TrustedKeys::FromPublicKeyFile(fifo_);
    zero = TrustedKeys::FromPublicKeyFile("/dev/zero");
    read = ReadPublicKeyFile(fifo_);
  });
  EXPECT_EQ(fifo.status().code(), absl::StatusCode::kFailedPrecondition) << fifo.status();
  EXPECT_THAT(fifo.status().message(), HasSubstr("the public key " + fifo_ + " is a FIFO"));
  EXPECT_THAT(zero.status().message(), HasSubstr("the public key /dev/zero is a character device"));
  EXPECT_THAT(read.status().message(), HasSubstr(fifo_ + " is a FIFO"));
  // And through the CLI: a usage error, not a hang.
  EXPECT_EQ(Verify(fifo_, ""), 2);
  EXPECT_EQ(Verify("/dev/zero", ""), 2);
}

TEST_F(SpecialKeyFilesTest, AFifoOrADeviceAmongTheTrustedKeysIsRefusedAtOnce) {
  ASSERT_EQ(::rename(fifo_.c_str(), (trusted() + "/fifo.pub").c_str()), 0);
  fifo_ = trusted() + "/fifo.pub";
  absl::StatusOr<TrustedKeys> keys = absl::UnknownError("did not finish");
  Within([&] { keys = TrustedKeys::FromDirectory(trusted()); });
  EXPECT_EQ(keys.status().code(), absl::StatusCode::kFailedPrecondition) << keys.status();
  EXPECT_THAT(keys.status().message(), AllOf(HasSubstr("the trusted key " + fifo_ + " is a FIFO"),
                                             HasSubstr("move it out of the trust directory")));
  EXPECT_EQ(Verify("", trusted()), 2);
  fs::remove(fifo_);

  // A link to /dev/zero is followed and refused by what it leads to.
  fs::create_symlink("/dev/zero", trusted() + "/zero.pub");
  Within([&] { keys = TrustedKeys::FromDirectory(trusted()); });
  EXPECT_THAT(keys.status().message(),
              HasSubstr("the trusted key " + trusted() + "/zero.pub is a character device"));
  fs::remove(trusted() + "/zero.pub");

  // A dangling link trusts nothing, as before; the real key still verifies.
  fs::create_symlink(dir_ / "gone.pub", trusted() + "/dangling.pub");
  auto honest = TrustedKeys::FromDirectory(trusted());
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ(honest->size(), 1u);
  EXPECT_EQ(Verify("", trusted()), 0) << said_;
}

TEST_F(SpecialKeyFilesTest, AnOversizedTrustedKeyIsRefused) {
  std::ofstream(trusted() + "/big.pub") << std::string(kMaxKeyFileBytes + 1, 'k');
  auto keys = TrustedKeys::FromDirectory(trusted());
  EXPECT_EQ(keys.status().code(), absl::StatusCode::kResourceExhausted) << keys.status();
  EXPECT_THAT(keys.status().message(), HasSubstr(trusted() + "/big.pub is 16385 bytes"));
}

TEST_F(SpecialKeyFilesTest, ATrustDirectoryOrKeyGroupOrOthersMayWriteIsRefused) {
  const std::string key = trusted() + "/cluster.pub";
  for (const mode_t mode : {0757, 0775}) {
    ASSERT_EQ(::chmod(trusted().c_str(), mode), 0);
    auto keys = TrustedKeys::FromDirectory(trusted());
    EXPECT_EQ(keys.status().code(), absl::StatusCode::kPermissionDenied) << keys.status();
    EXPECT_THAT(keys.status().message(), AllOf(HasSubstr("the trust directory " + trusted()),
                                               HasSubstr("chmod go-w " + trusted())));
  }
  ASSERT_EQ(::chmod(trusted().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(key.c_str(), 0664), 0);
  auto keys = TrustedKeys::FromDirectory(trusted());
  EXPECT_THAT(keys.status().message(),
              AllOf(HasSubstr("the trusted key " + key + " is owned by uid"),
                    HasSubstr("mode 0664"), HasSubstr("chmod go-w " + key)));
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  EXPECT_TRUE(TrustedKeys::FromDirectory(trusted()).ok());
}

TEST_F(SpecialKeyFilesTest, ATrustDirectoryOrKeyAnotherUserOwnsIsRefused) {
  CLUSTERCERT_REQUIRE_ROOT_FOR_CHOWN();
  const std::string key = trusted() + "/cluster.pub";
  // The attack seen: another user's directory, mode 0755, was trusted.
  ASSERT_EQ(::chown(trusted().c_str(), clustercert::testing::kOtherUid, -1), 0);
  auto keys = TrustedKeys::FromDirectory(trusted());
  EXPECT_EQ(keys.status().code(), absl::StatusCode::kPermissionDenied) << keys.status();
  EXPECT_THAT(keys.status().message(), AllOf(HasSubstr("the trust directory " + trusted() +
                                                       " is owned by uid 65534 with mode 0755"),
                                             HasSubstr("chown 0 " + trusted())));
  EXPECT_EQ(Verify("", trusted()), 2);
  ASSERT_EQ(::chown(trusted().c_str(), 0, -1), 0);

  ASSERT_EQ(::chown(key.c_str(), clustercert::testing::kOtherUid, -1), 0);
  EXPECT_THAT(TrustedKeys::FromDirectory(trusted()).status().message(),
              HasSubstr("the trusted key " + key + " is owned by uid 65534"));
  ASSERT_EQ(::chown(key.c_str(), 0, -1), 0);
  EXPECT_TRUE(TrustedKeys::FromDirectory(trusted()).ok());
}

}  // namespace
}  // namespace clustercert::controller
