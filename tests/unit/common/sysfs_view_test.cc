#include "common/sysfs_view.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"
#include "tests/support/temp_tree.h"

namespace clustercert {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// What the escape tests plant outside the root: a view that read it would
// put it in an error message or a listing.
constexpr char kSecret[] = "root:$6$not-for-the-network:19000:0:99999:7:::";
constexpr char kSecretName[] = "shadow-like-file";

// Every case runs twice: through openat2 where the kernel has it, and
// through the component walk that stands in where it does not.
class SysfsViewTest : public ::testing::TestWithParam<SysfsView::Resolution> {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("sysfs_view_test_" + std::to_string(::getpid()));
    fs::remove_all(base_);
    root_ = base_ / "root";
    outside_ = base_ / "outside";
    fs::create_directories(root_ / "sys/devices/pci0000:00/0000:00:04.0/net/eth0");
    fs::create_directories(root_ / "sys/class/net");
    fs::create_directories(outside_ / "ports/1/counters");
    std::ofstream(root_ / "sys/devices/pci0000:00/0000:00:04.0/net/eth0/mtu") << "9000\n";
    std::ofstream(outside_ / kSecretName) << kSecret << "\n";
    std::ofstream(outside_ / "ports/1/counters/symbol_error") << kSecret << "\n";
    fs::create_directory_symlink("../../devices/pci0000:00/0000:00:04.0/net/eth0",
                                 root_ / "sys/class/net/eth0");
    // An absolute link, as a careless capture or a hostile one would make.
    fs::create_directory_symlink("/sys/devices/pci0000:00/0000:00:04.0/net/eth0",
                                 root_ / "sys/class/net/abs0");
    fs::create_symlink(outside_ / kSecretName, root_ / "sys/absolute_out");
    fs::create_directory_symlink(outside_, root_ / "sys/absolute_out_dir");
    // From root/sys/class/net: ../../.. is the root, one more is above it.
    fs::create_symlink(fs::path("../../../../outside") / kSecretName,
                       root_ / "sys/class/net/climbing_out");
    fs::create_directory_symlink("../../../../outside", root_ / "sys/class/net/climbing_dir");
    fs::create_symlink("loop_b", root_ / "sys/loop_a");
    fs::create_symlink("loop_a", root_ / "sys/loop_b");
  }
  void TearDown() override { fs::remove_all(base_); }

  SysfsView View() const { return SysfsView(root_, GetParam()); }

  // The refusal every escape must get: an error, no secret and no listing.
  static void ExpectRefusedWithoutContents(const absl::Status& status) {
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(std::string(status.message()),
                AllOf(Not(HasSubstr("not-for-the-network")), Not(HasSubstr("symbol_error"))));
  }

  fs::path base_;
  fs::path root_;
  fs::path outside_;
};

TEST_P(SysfsViewTest, ReadsThroughRelativeSymlinkAndTrimsNewline) {
  SysfsView view = View();
  auto mtu = view.ReadText("/sys/class/net/eth0/mtu");
  ASSERT_TRUE(mtu.ok()) << mtu.status();
  EXPECT_EQ(*mtu, "9000");
  EXPECT_FALSE(view.is_live());
  auto resolved = view.Resolve("/sys/class/net/eth0");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, "/sys/devices/pci0000:00/0000:00:04.0/net/eth0");
  EXPECT_TRUE(view.Exists("/sys/class/net/eth0/mtu"));
  auto listed = view.ListDir("/sys/class/net/eth0");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(*listed, (std::vector<std::string>{"mtu"}));
}

TEST_P(SysfsViewTest, MissingTailResolvesAsWritten) {
  auto resolved = View().Resolve("/sys/class/net/eth0/device/vendor");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, "/sys/devices/pci0000:00/0000:00:04.0/net/eth0/device/vendor");
}

TEST_P(SysfsViewTest, DotDotComponentIsRefusedBeforeAnythingIsOpened) {
  SysfsView view = View();
  // What ReadPortCounters built from `device: ../../../..`: the real
  // /etc/shadow on a live root, the file above the root here.
  const std::string path = std::string("/sys/class/net/../../../outside/") + kSecretName;
  auto read = view.ReadText(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(), HasSubstr("'..' component"));
  ExpectRefusedWithoutContents(read.status());
  EXPECT_EQ(view.ListDir("/sys/class/net/../../../outside/ports/1/counters").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(view.Exists("/sys/.."));
  EXPECT_FALSE(view.Resolve("/sys/../sys/class").ok());
}

TEST_P(SysfsViewTest, AbsoluteSymlinkOutIsRefused) {
  SysfsView view = View();
  auto read = view.ReadText("/sys/absolute_out");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kPermissionDenied) << read.status();
  EXPECT_THAT(read.status().message(), HasSubstr("resolves outside the view's root"));
  ExpectRefusedWithoutContents(read.status());
  ExpectRefusedWithoutContents(view.ReadBytes("/sys/absolute_out", 4096).status());
  ExpectRefusedWithoutContents(view.ListDir("/sys/absolute_out_dir/ports/1/counters").status());
  ExpectRefusedWithoutContents(view.Resolve("/sys/absolute_out").status());
  EXPECT_FALSE(view.Exists("/sys/absolute_out"));
}

TEST_P(SysfsViewTest, AbsoluteSymlinkIsRefusedEvenWhenItNamesAPathInsideTheRoot) {
  // Before the confinement such a link was re-rooted; now a tree must use
  // relative links, as the kernel's sysfs and `node-agent --capture` do.
  SysfsView view = View();
  EXPECT_EQ(view.ReadText("/sys/class/net/abs0/mtu").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(view.Resolve("/sys/class/net/abs0").status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_P(SysfsViewTest, RelativeSymlinkClimbingOutIsRefused) {
  SysfsView view = View();
  auto read = view.ReadText("/sys/class/net/climbing_out");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kPermissionDenied) << read.status();
  ExpectRefusedWithoutContents(read.status());
  auto listed = view.ListDir("/sys/class/net/climbing_dir/ports/1/counters");
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kPermissionDenied) << listed.status();
  ExpectRefusedWithoutContents(listed.status());
  ExpectRefusedWithoutContents(view.ListDirBounded("/sys/class/net/climbing_dir", 10).status());
  ExpectRefusedWithoutContents(view.Resolve("/sys/class/net/climbing_dir").status());
}

TEST_P(SysfsViewTest, ListingShowsEscapingLinksByNameOnly) {
  auto names = View().ListDir("/sys/class/net");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"abs0", "climbing_dir", "climbing_out", "eth0"}));
}

TEST_P(SysfsViewTest, MissingFileIsNotFoundNamingThePath) {
  auto missing = View().ReadText("/sys/class/net/eth0/speed");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_NE(missing.status().message().find("/sys/class/net/eth0/speed"), std::string::npos);
  EXPECT_EQ(ReasonOf(missing.status()), "No such file or directory");
}

TEST_P(SysfsViewTest, SymlinkLoopIsAnErrorNotAHang) {
  EXPECT_FALSE(View().ReadText("/sys/loop_a").ok());
  EXPECT_FALSE(View().Resolve("/sys/loop_a").ok());
}

TEST_P(SysfsViewTest, ControlCharactersInAPathAreEscapedInTheMessage) {
  auto read = View().ReadText("/sys/class/net/eth0\n2024-01-01 forged log line");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("eth0\\x0a2024"));
}

TEST_P(SysfsViewTest, ListDirIsSortedAndBounded) {
  SysfsView view = View();
  EXPECT_EQ(view.ListDirBounded("/sys/class/net", 2).status().code(),
            absl::StatusCode::kResourceExhausted);
  auto listed = view.ListDirBounded("/sys/class/net", 4);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->front(), "abs0");
}

INSTANTIATE_TEST_SUITE_P(BothResolutions, SysfsViewTest,
                         ::testing::Values(SysfsView::Resolution::kAuto,
                                           SysfsView::Resolution::kComponentWalk),
                         [](const auto& info) {
                           return info.param == SysfsView::Resolution::kAuto ? "Openat2"
                                                                             : "ComponentWalk";
                         });

class SysfsViewLiveTest : public ::testing::TestWithParam<SysfsView::Resolution> {};

TEST_P(SysfsViewLiveTest, SlashRootIsLiveAndReadsProc) {
  SysfsView view("/", GetParam());
  EXPECT_TRUE(view.is_live());
  EXPECT_TRUE(view.Exists("/proc/self"));
  // /proc/self is a plain relative link ("4242"), beneath the root.
  auto status = view.ReadText("/proc/self/status");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_THAT(*status, HasSubstr("Pid:"));
}

TEST_P(SysfsViewLiveTest, ProcMagicLinksAreNotFollowed) {
  SysfsView view("/", GetParam());
  // /proc/self/root and /proc/self/cwd jump anywhere; /proc/self/fd/N too.
  EXPECT_FALSE(view.ReadText("/proc/self/root/proc/self/status").ok());
  EXPECT_FALSE(view.ListDir("/proc/self/cwd").ok());
  EXPECT_FALSE(view.ReadBytes("/proc/self/exe", 16).ok());
}

// Found by the GPU check's dry run: on a host with NVIDIA's CUDA packages
// /usr/local/cuda is an absolute link (through /etc/alternatives), and the
// NCCL beside it went unread. On the live root such links are followed from
// "/", as the kernel does; on any other root they stay refused (above).
TEST_P(SysfsViewLiveTest, AbsoluteLinksOutsideProcAreFollowedOnTheLiveRoot) {
  testing::TempTree tree;
  tree.Write("cuda-13.0/lib64/libnccl.so.2.28.9", "");
  tree.Write("cuda-13.0/version.json", "13.0\n");
  const std::string base = tree.root().string();
  ASSERT_EQ(::symlink((base + "/cuda-13.0").c_str(), (base + "/alternatives-cuda").c_str()), 0);
  ASSERT_EQ(::symlink((base + "/alternatives-cuda").c_str(), (base + "/cuda").c_str()), 0);
  SysfsView view("/", GetParam());
  auto read = view.ReadText(base + "/cuda/version.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "13.0");
  auto listed = view.ListDir(base + "/cuda/lib64");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_THAT(*listed, ::testing::ElementsAre("libnccl.so.2.28.9"));
  auto resolved = view.Resolve(base + "/cuda/lib64");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, base + "/cuda-13.0/lib64");
}

TEST_P(SysfsViewLiveTest, DotDotOnTheLiveRootIsRefused) {
  SysfsView view("/", GetParam());
  auto read = view.ReadText("/sys/class/infiniband/../../../etc/hostname");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << read.status();
}

INSTANTIATE_TEST_SUITE_P(BothResolutions, SysfsViewLiveTest,
                         ::testing::Values(SysfsView::Resolution::kAuto,
                                           SysfsView::Resolution::kComponentWalk),
                         [](const auto& info) {
                           return info.param == SysfsView::Resolution::kAuto ? "Openat2"
                                                                             : "ComponentWalk";
                         });

TEST(SysfsViewResolutionTest, Openat2IsUsedWhereTheKernelHasIt) {
  SysfsView walk("/", SysfsView::Resolution::kComponentWalk);
  EXPECT_FALSE(walk.uses_openat2());
  SysfsView automatic("/");
  if (!automatic.uses_openat2())
    SKIP_FOR_ENVIRONMENT("openat2") << "this kernel or sandbox has no openat2";
  EXPECT_TRUE(automatic.uses_openat2());
}

TEST(SysfsViewResolutionTest, MissingRootIsNotFoundNamingIt) {
  SysfsView view("/nonexistent/sysfs-root");
  auto read = view.ReadText("/sys/class/net");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("/nonexistent/sysfs-root"));
}

}  // namespace
}  // namespace clustercert
