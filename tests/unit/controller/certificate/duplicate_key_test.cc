// A key given twice in a certificate (issue 34, item 7): protobuf's reader
// keeps the last, a first-wins reader the first, so a signed certificate
// with `"verdict":"not-certified"` prepended verified as valid while other
// tools read it as not certified. verify, diff and report now refuse such a
// file, naming the key and where it is; so does the reader under them, at
// any depth and under either of a field's JSON names.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "controller/certificate/certificate_reader.h"
#include "controller/commands/diff_command.h"
#include "controller/commands/report_command.h"
#include "controller/commands/verify_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/support/special_files.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kFixture =
    std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.json";
const std::string kFixtureKey =
    std::string(CLUSTERCERT_FIXTURES) + "/certificates/loopback-v2-signed.pub";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

template <typename Command>
Ran Capture(Command command) {
  std::fflush(stdout);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Ran ran;
  ran.exit_code = command();
  std::fflush(stdout);
  ran.out = ::testing::internal::GetCapturedStdout();
  ran.err = ::testing::internal::GetCapturedStderr();
  return ran;
}

class DuplicateKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cc_dupkey_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    original_ = ReadAll(kFixture);
    ASSERT_EQ(original_.rfind("{\n", 0), 0u);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The fixture with `insert` placed before the first `before` (after the
  // opening brace when `before` is empty), written to a file of its own.
  std::string Forged(const std::string& name, const std::string& insert,
                     const std::string& before = "") {
    std::string text = original_;
    const size_t at = before.empty() ? 1 : text.find(before);
    EXPECT_NE(at, std::string::npos) << before;
    text.insert(at, insert);
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  Ran Verify(const std::string& path) {
    CommandOptions options;
    options.pubkey = kFixtureKey;
    return Capture([&] { return RunVerifyCommand({path}, options, (dir_ / "none").string()); });
  }

  fs::path dir_;
  std::string original_;
};

TEST_F(DuplicateKeyTest, TheUneditedFixtureVerifies) {
  const Ran ran = Verify(kFixture);
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
}

TEST_F(DuplicateKeyTest, APrependedVerdictMakesVerifyFailNamingTheKey) {
  const std::string forged = Forged("prepended.json", "\"verdict\":\"not-certified\",");
  const Ran ran = Verify(forged);
  EXPECT_NE(ran.exit_code, 0) << ran.out;
  EXPECT_THAT(ran.err, HasSubstr("has the key 'verdict' twice in one object"));
  EXPECT_THAT(ran.err, HasSubstr("line 1, byte 1"));  // where the forged one is
  EXPECT_THAT(ran.out, ::testing::Not(HasSubstr("valid")));
}

TEST_F(DuplicateKeyTest, ANestedDuplicateOrAnAliasIsRefusedToo) {
  // Inside the first pair cell, and as the field's lowerCamel JSON name.
  const std::string nested = Forged("nested.json", "\"avg_gbps\": 900,\n", "\"avg_gbps\"");
  auto loaded = LoadCertificate(nested);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("the key 'avg_gbps' twice"));

  const std::string alias = Forged("alias.json", "\"avgGbps\": 900,\n", "\"avg_gbps\"");
  loaded = LoadCertificate(alias);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("as 'avgGbps'"));

  const std::string escaped = Forged("escaped.json", "\"verd\\u0069ct\":\"not-certified\",");
  loaded = LoadCertificate(escaped);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("'verdict' twice"));
}

TEST_F(DuplicateKeyTest, DiffAndReportRefuseIt) {
  const std::string forged = Forged("prepended.json", "\"verdict\":\"not-certified\",");
  const Ran diff = Capture([&] { return RunDiffCommand({kFixture, forged}, CommandOptions()); });
  EXPECT_EQ(diff.exit_code, 2) << diff.out << diff.err;
  EXPECT_THAT(diff.err, HasSubstr("the key 'verdict' twice"));

  CommandOptions options;
  options.out = (dir_ / "reports").string();
  const Ran report = Capture([&] { return RunReportCommand({forged}, options); });
  EXPECT_NE(report.exit_code, 0) << report.out << report.err;
  EXPECT_THAT(report.err, HasSubstr("the key 'verdict' twice"));
  EXPECT_FALSE(fs::exists(dir_ / "reports" / "report.html"));
}

// The certificate is read like every file named on a command line: a FIFO
// (which would block open(2) for good) or /dev/zero (which never ends) is
// refused at once, naming the path.
TEST_F(DuplicateKeyTest, AFifoOrADeviceAsTheCertificateIsRefusedAtOnce) {
  const std::string fifo = (dir_ / "certificate.json").string();
  ASSERT_TRUE(testing::MakeFifo(fifo));
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    absl::Status status;
    EXPECT_TRUE(testing::FinishesWithin(
        testing::kSpecialFileDeadline, [&] { status = LoadCertificate(path).status(); },
        [&] { testing::ReleaseFifoReader(fifo); }))
        << path;
    EXPECT_FALSE(status.ok()) << path;
    EXPECT_THAT(std::string(status.message()), HasSubstr(path));
    EXPECT_THAT(std::string(status.message()), HasSubstr("not a regular file"));
  }
}

}  // namespace
}  // namespace clustercert::controller
