#include "common/sysfs_view.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace clustercert {
namespace {

namespace fs = std::filesystem;

class SysfsViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sysfs_view_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "sys/devices/pci0000:00/0000:00:04.0/net/eth0");
    fs::create_directories(root_ / "sys/class/net");
    std::ofstream(root_ / "sys/devices/pci0000:00/0000:00:04.0/net/eth0/mtu") << "9000\n";
    fs::create_directory_symlink("../../devices/pci0000:00/0000:00:04.0/net/eth0",
                                 root_ / "sys/class/net/eth0");
    // An absolute link, as a careless capture would make: must stay inside the root.
    fs::create_directory_symlink("/sys/devices/pci0000:00/0000:00:04.0/net/eth0",
                                 root_ / "sys/class/net/abs0");
    fs::create_symlink("loop_b", root_ / "sys/loop_a");
    fs::create_symlink("loop_a", root_ / "sys/loop_b");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(SysfsViewTest, ReadsThroughRelativeSymlinkAndTrimsNewline) {
  SysfsView view(root_);
  auto mtu = view.ReadText("/sys/class/net/eth0/mtu");
  ASSERT_TRUE(mtu.ok()) << mtu.status();
  EXPECT_EQ(*mtu, "9000");
  EXPECT_FALSE(view.is_live());
}

TEST_F(SysfsViewTest, AbsoluteSymlinkResolvesInsideRoot) {
  SysfsView view(root_);
  auto resolved = view.Resolve("/sys/class/net/abs0");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, "/sys/devices/pci0000:00/0000:00:04.0/net/eth0");
  EXPECT_EQ(*view.ReadText("/sys/class/net/abs0/mtu"), "9000");
}

TEST_F(SysfsViewTest, MissingFileIsNotFoundNamingThePath) {
  SysfsView view(root_);
  auto missing = view.ReadText("/sys/class/net/eth0/speed");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_NE(missing.status().message().find("/sys/class/net/eth0/speed"), std::string::npos);
  EXPECT_EQ(ReasonOf(missing.status()), "No such file or directory");
}

TEST_F(SysfsViewTest, SymlinkLoopIsAnErrorNotAHang) {
  SysfsView view(root_);
  EXPECT_FALSE(view.ReadText("/sys/loop_a").ok());
}

TEST_F(SysfsViewTest, ListDirIsSorted) {
  SysfsView view(root_);
  auto names = view.ListDir("/sys/class/net");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"abs0", "eth0"}));
}

TEST(SysfsViewLiveTest, SlashRootIsLive) {
  SysfsView view("/");
  EXPECT_TRUE(view.is_live());
  EXPECT_TRUE(view.Exists("/proc/self"));
}

}  // namespace
}  // namespace clustercert
