#include "controller/report/report_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/report/html_report.h"
#include "controller/report/junit_report.h"
#include "controller/report/markdown_report.h"
#include "controller/report/pair_csv.h"
#include "controller/report/prometheus_metrics.h"
#include "tests/unit/controller/report/report_test_support.h"
#include "tests/unit/controller/report/ring_certificate.h"

namespace clustercert::controller::report {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::LoadFixture;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / absl::StrCat("report_files_", name, "_", getpid());
  fs::remove_all(dir);
  return dir;
}

TEST(WriteReports, WritesTheThreeReportsThePairCsvAndTheMetricsIntoANewDirectory) {
  const v1::Certificate certificate = LoadFixture("lab-slowed");
  const fs::path dir = FreshDir("ok") / "nested";
  auto paths = WriteReports(certificate, dir.string());
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_THAT(*paths, ElementsAre((dir / "report.html").string(), (dir / "report.md").string(),
                                  (dir / "junit.xml").string(), (dir / "pairs.csv").string(),
                                  (dir / "clustercert.prom").string()));
  EXPECT_EQ(Read((*paths)[0]), RenderHtmlReport(certificate));
  EXPECT_EQ(Read((*paths)[1]), RenderMarkdownReport(certificate));
  EXPECT_EQ(Read((*paths)[2]), RenderJunitReport(certificate));
  EXPECT_EQ(Read((*paths)[3]), RenderPairCsv(certificate));
  EXPECT_EQ(Read((*paths)[4]), RenderPrometheusMetrics(certificate));
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_NE(entry.path().extension(), ".partial") << "left behind: " << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 5u);
  // A second run replaces the reports in place.
  v1::Certificate other = certificate;
  other.set_cluster("second-run");
  ASSERT_TRUE(WriteReports(other, dir.string()).ok());
  EXPECT_THAT(Read((dir / "report.md").string()), HasSubstr("second-run"));
}

TEST(WriteReports, ALargeReportLinksToTheCsvWrittenBesideIt) {
  const fs::path dir = FreshDir("large");
  auto paths = WriteReports(testing::RingCertificate(40), dir.string());
  ASSERT_TRUE(paths.ok()) << paths.status();
  auto root = testing::ParseMarkup(Read((*paths)[0]), /*html=*/true);
  ASSERT_NE(root, nullptr);
  size_t outside = 0;
  for (const auto* a : root->FindAll("a")) {
    const std::string href = a->Attr("href");
    if (absl::StartsWith(href, "#")) continue;
    ++outside;
    EXPECT_THAT(*paths, Contains((dir / href).string())) << href;
  }
  EXPECT_GT(outside, 0u);
}

TEST(WriteReports, ADirectoryThatIsAFileIsASentenceWithTheFix) {
  const fs::path dir = FreshDir("file");
  fs::create_directories(dir);
  const fs::path file = dir / "not-a-dir";
  std::ofstream(file) << "x";
  auto paths = WriteReports(LoadFixture("lab-healthy"), file.string());
  ASSERT_FALSE(paths.ok());
  EXPECT_THAT(paths.status().message(), HasSubstr(file.string()));
  EXPECT_THAT(paths.status().message(), HasSubstr("pass --out with a writable directory"));
}

TEST(WriteReports, AReportPathTakenByADirectoryNamesIt) {
  const fs::path dir = FreshDir("taken");
  fs::create_directories(dir / "report.md" / "inside");
  auto paths = WriteReports(LoadFixture("lab-healthy"), dir.string());
  ASSERT_FALSE(paths.ok());
  EXPECT_THAT(paths.status().message(), HasSubstr((dir / "report.md").string()));
  EXPECT_THAT(paths.status().message(), HasSubstr("pass --out with another directory"));
  EXPECT_FALSE(fs::exists(dir / "report.md.partial"));
}

// Root writes into read-only directories (CAP_DAC_OVERRIDE), and CI runs as
// root: for one scope this thread's filesystem uid becomes nobody, which
// drops that capability until the uid is root again (capabilities(7)).
class ScopedFilesystemUidNobody {
 public:
  ScopedFilesystemUidNobody() : was_(::setfsuid(kNobody)) {}
  ~ScopedFilesystemUidNobody() { ::setfsuid(was_); }
  ScopedFilesystemUidNobody(const ScopedFilesystemUidNobody&) = delete;
  ScopedFilesystemUidNobody& operator=(const ScopedFilesystemUidNobody&) = delete;
  // setfsuid(-1) changes nothing and answers the current filesystem uid.
  static bool Active() { return ::setfsuid(static_cast<uid_t>(-1)) == kNobody; }

 private:
  static constexpr uid_t kNobody = 65534;
  int was_;
};

TEST(WriteReports, AnUnwritableDirectoryIsReported) {
  const fs::path dir = FreshDir("readonly");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const v1::Certificate certificate = LoadFixture("lab-healthy");
  absl::StatusOr<std::vector<std::string>> paths;
  {
    // As another user, the directory (0500, ours) is unwritable for root too.
    ScopedFilesystemUidNobody nobody;
    ASSERT_TRUE(geteuid() != 0 || ScopedFilesystemUidNobody::Active());
    paths = WriteReports(certificate, dir.string());
  }
  fs::permissions(dir, fs::perms::owner_all);
  ASSERT_FALSE(paths.ok());
  EXPECT_THAT(paths.status().message(), HasSubstr((dir / "report.html.partial").string()));
}

}  // namespace
}  // namespace clustercert::controller::report
