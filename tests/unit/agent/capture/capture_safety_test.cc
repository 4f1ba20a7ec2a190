// Issue 34. Item 6: a FIFO in the tree a capture copies hung it (the source
// is read through SysfsView, which now refuses anything but a regular file);
// the FIFO is left out, named, and the capture finishes. Item 8: `--capture
// DIR` wrote into a directory another user owned (an attacker's empty
// directory in /tmp), whose owner could then forge the capture; it is now
// refused unless the capturing user owns it and group/others cannot write.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "agent/capture/host_capture.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/support/special_files.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent {
namespace {

namespace fs = std::filesystem;
using inventory::testing::FixtureRoot;
using inventory::testing::TempSysfsTree;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

// A fresh path under the temp directory, removed with the object.
class OutDir {
 public:
  explicit OutDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ =
        fs::temp_directory_path() / ("capture_safety_" + tag + "_" + std::to_string(::getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(path_);
  }
  ~OutDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

absl::StatusOr<CaptureReport> Capture(const fs::path& root, const fs::path& out) {
  SysfsView view(root);
  CaptureOptions options;
  options.run_tools = false;
  return HostCapture(view, nullptr, nullptr, options).Write(out);
}

TEST(CaptureSafetyTest, AFifoInTheSourceIsLeftOutNamedAndTheCaptureFinishes) {
  TempSysfsTree tree("roce-healthy");
  // One read by copy (ReadBytes), one by text (ReadText): /proc/cmdline.
  const fs::path mtu = fs::weakly_canonical(tree.root() / "sys/class/net/enp65s0f0np0/mtu");
  ASSERT_TRUE(fs::remove(mtu));
  ASSERT_TRUE(clustercert::testing::MakeFifo(mtu.string()));
  const fs::path cmdline = tree.root() / "proc/cmdline";
  ASSERT_TRUE(clustercert::testing::MakeFifo(cmdline.string()));

  OutDir out("fifo");
  absl::StatusOr<CaptureReport> report = absl::UnknownError("did not finish");
  ASSERT_TRUE(clustercert::testing::FinishesWithin(
      clustercert::testing::kSpecialFileDeadline,
      [&] { report = Capture(tree.root(), out.path()); },
      [&] {
        clustercert::testing::ReleaseFifoReader(mtu.string());
        clustercert::testing::ReleaseFifoReader(cmdline.string());
      }))
      << "capturing a tree with a FIFO blocked";
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string fifo_reason = "a FIFO where a sysfs or proc file should be";
  bool mtu_named = false;
  bool cmdline_named = false;
  for (const std::string& line : report->left_out) {
    if (line.find("/enp65s0f0np0/mtu: " + fifo_reason) != std::string::npos) mtu_named = true;
    if (line.find("/proc/cmdline: " + fifo_reason) != std::string::npos) cmdline_named = true;
  }
  EXPECT_TRUE(mtu_named) << ::testing::PrintToString(report->left_out);
  EXPECT_TRUE(cmdline_named) << ::testing::PrintToString(report->left_out);
  // Nothing was written in the FIFOs' places; the rest was copied.
  EXPECT_FALSE(fs::exists(out.path() / "proc/cmdline"));
  EXPECT_TRUE(fs::exists(out.path() / "proc/modules"));
  EXPECT_GT(report->files, 10u);
}

TEST(CaptureSafetyTest, ANewDirectoryIsCreatedWithoutGroupOrOtherWriteWhateverTheUmask) {
  OutDir out("new");
  const mode_t old_umask = ::umask(0);
  auto report = Capture(FixtureRoot("no-rdma"), out.path());
  ::umask(old_umask);
  ASSERT_TRUE(report.ok()) << report.status();
  struct stat info;
  ASSERT_EQ(::stat(out.str().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0755u);
  EXPECT_EQ(info.st_uid, ::geteuid());
}

TEST(CaptureSafetyTest, AnEmptyDirectoryWeOwnIsUsedAsBefore) {
  OutDir out("mkdtemp");
  ASSERT_EQ(::mkdir(out.str().c_str(), 0700), 0);
  auto report = Capture(FixtureRoot("no-rdma"), out.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(fs::exists(out.path() / "clustercert-capture/README.txt"));
}

TEST(CaptureSafetyTest, ADirectoryGroupOrOthersMayWriteIsRefused) {
  for (const mode_t mode : {0777, 0757, 0775}) {
    OutDir out("writable");
    ASSERT_EQ(::mkdir(out.str().c_str(), 0700), 0);
    ASSERT_EQ(::chmod(out.str().c_str(), mode), 0);
    auto report = Capture(FixtureRoot("no-rdma"), out.path());
    EXPECT_EQ(report.status().code(), absl::StatusCode::kPermissionDenied) << report.status();
    char shown[8];
    std::snprintf(shown, sizeof(shown), "%04o", static_cast<unsigned>(mode));
    EXPECT_THAT(report.status().message(),
                AllOf(HasSubstr("the capture directory " + out.str() + " is owned by uid " +
                                std::to_string(::geteuid()) + " with mode " + shown),
                      HasSubstr("chmod go-w " + out.str())));
    EXPECT_TRUE(fs::is_empty(out.path())) << "nothing may be written before the refusal";
  }
}

TEST(CaptureSafetyTest, ADirectoryAnotherUserOwnsIsRefused) {
  CLUSTERCERT_REQUIRE_ROOT_FOR_CHOWN();
  OutDir out("foreign");
  ASSERT_EQ(::mkdir(out.str().c_str(), 0755), 0);
  ASSERT_EQ(::chown(out.str().c_str(), clustercert::testing::kOtherUid, static_cast<gid_t>(-1)), 0);
  auto report = Capture(FixtureRoot("no-rdma"), out.path());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kPermissionDenied) << report.status();
  EXPECT_THAT(report.status().message(),
              AllOf(HasSubstr(out.str() + " is owned by uid 65534 with mode 0755"),
                    HasSubstr("chown 0 " + out.str()), HasSubstr("name a new directory")));
  EXPECT_TRUE(fs::is_empty(out.path()));
}

TEST(CaptureSafetyTest, RunHostCaptureReportsTheRefusalAndFails) {
  OutDir out("cli");
  ASSERT_EQ(::mkdir(out.str().c_str(), 0700), 0);
  ASSERT_EQ(::chmod(out.str().c_str(), 0777), 0);
  ::testing::internal::CaptureStderr();
  const int status = RunHostCapture(FixtureRoot("no-rdma").string(), out.str());
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_THAT(said,
              HasSubstr("node-agent --capture: the capture directory " + out.str() +
                        " is owned by uid " + std::to_string(::geteuid()) + " with mode 0777"));
}

}  // namespace
}  // namespace clustercert::agent
