#include "controller/commands/report_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / absl::StrCat("report_command_", name, "_", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ReportCommand, WritesNextToTheCertificateAndPrintsThePaths) {
  const fs::path dir = FreshDir("beside");
  const fs::path certificate = dir / "certificate.json";
  fs::copy_file(report::testing::FixturePath("lab-slowed"), certificate);
  ::testing::internal::CaptureStdout();
  const int code = RunReportCommand({certificate.string()}, CommandOptions());
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out,
            absl::StrCat((dir / "report.html").string(), "\n", (dir / "report.md").string(), "\n",
                         (dir / "junit.xml").string(), "\n", (dir / "pairs.csv").string(), "\n",
                         (dir / "clustercert.prom").string(), "\n"));
  EXPECT_TRUE(fs::exists(dir / "report.html"));
}

TEST(ReportCommand, WritesIntoOutAndSpeaksJson) {
  const fs::path dir = FreshDir("out");
  CommandOptions options;
  options.out = (dir / "reports").string();
  options.json = true;
  ::testing::internal::CaptureStdout();
  const int code = RunReportCommand({report::testing::FixturePath("lab-healthy")}, options);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_THAT(out, HasSubstr(absl::StrCat("\"reports\": [\"",
                                          (dir / "reports" / "report.html").string(), "\", ")));
  EXPECT_TRUE(fs::exists(dir / "reports" / "junit.xml"));
}

TEST(ReportCommand, UsageAndUnreadableCertificatesExitTwo) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunReportCommand({}, CommandOptions()), kExitUsage);
  EXPECT_EQ(RunReportCommand({"a.json", "b.json"}, CommandOptions()), kExitUsage);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("usage: controller report"));

  const fs::path dir = FreshDir("bad");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunReportCommand({(dir / "missing.json").string()}, CommandOptions()), kExitUsage);
  EXPECT_THAT(
      ::testing::internal::GetCapturedStderr(),
      HasSubstr(absl::StrCat("cannot open the certificate ", (dir / "missing.json").string())));

  const fs::path garbage = dir / "garbage.json";
  std::ofstream(garbage) << "{\"tool\": \"clustercert\", \"no_such_field\": 1}";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunReportCommand({garbage.string()}, CommandOptions()), kExitUsage);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("is not a clustercert certificate"));
}

TEST(ReportCommand, AnUnwritableOutExitsThree) {
  const fs::path dir = FreshDir("unwritable");
  const fs::path file = dir / "a-file";
  std::ofstream(file) << "x";
  CommandOptions options;
  options.out = file.string();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunReportCommand({report::testing::FixturePath("lab-healthy")}, options),
            kExitCannotRun);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr(absl::StrCat("cannot create the report directory ", file.string())));
}

}  // namespace
}  // namespace clustercert::controller
