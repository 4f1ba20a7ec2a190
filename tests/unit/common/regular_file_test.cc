// Issue 34, item 6: a FIFO, a device or a socket named where a file is
// expected hung the caller (open(2) on a FIFO waits for a writer) or ate its
// memory (/dev/zero never ends). Each is refused at once, naming the path
// and what it is; reads stop at a stated cap. Item 8: what a trust decision
// rests on must be owned by root or by us and not writable by group/others.
#include "common/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/sysfs_view.h"
#include "common/tls_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/support/special_files.h"
#include "tests/support/temp_tree.h"

namespace clustercert {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using testing::FinishesWithin;
using ::testing::HasSubstr;
using testing::kSpecialFileDeadline;
using testing::ReleaseFifoReader;

class RegularFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (tree_.root() / name).string(); }

  // ReadRegularFile on its own thread, failing the test if it blocks.
  absl::StatusOr<std::string> ReadWithin(const std::string& path, size_t max_bytes) {
    absl::StatusOr<std::string> read = absl::UnknownError("did not finish");
    EXPECT_TRUE(FinishesWithin(
        kSpecialFileDeadline, [&] { read = ReadRegularFile(path, max_bytes, "signing key"); },
        [path] { ReleaseFifoReader(path); }))
        << "reading " << path << " blocked";
    return read;
  }

  testing::TempTree tree_{"regular_file_test"};
};

TEST_F(RegularFileTest, ARegularFileIsReadWhole) {
  tree_.Write("key.pem", "-----BEGIN PRIVATE KEY-----\n");
  auto read = ReadRegularFile(Path("key.pem"), 1024, "signing key");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "-----BEGIN PRIVATE KEY-----\n");
}

TEST_F(RegularFileTest, AFifoIsRefusedAtOnceNamingThePath) {
  const std::string fifo = Path("key.fifo");
  ASSERT_TRUE(testing::MakeFifo(fifo));
  auto read = ReadWithin(fifo, 1024);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition) << read.status();
  EXPECT_THAT(read.status().message(),
              AllOf(HasSubstr("the signing key " + fifo + " is a FIFO, not a regular file"),
                    HasSubstr("give the path of the signing key file itself")));
}

TEST_F(RegularFileTest, DevZeroIsRefusedNotReadUntilMemoryRunsOut) {
  auto read = ReadWithin("/dev/zero", 1024);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition) << read.status();
  EXPECT_THAT(read.status().message(), HasSubstr("/dev/zero is a character device"));
}

TEST_F(RegularFileTest, ASocketAndADirectoryAreRefused) {
  const std::string socket = Path("key.sock");
  const int fd = testing::BindUnixSocket(socket);
  ASSERT_GE(fd, 0);
  auto read = ReadWithin(socket, 1024);
  ::close(fd);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition) << read.status();
  EXPECT_THAT(read.status().message(), AllOf(HasSubstr(socket), HasSubstr("a socket")));

  auto directory = ReadWithin(tree_.root().string(), 1024);
  EXPECT_THAT(directory.status().message(), HasSubstr("is a directory, not a regular file"));
}

TEST_F(RegularFileTest, AFileOverTheCapIsRefusedNamingSizeAndCap) {
  tree_.Write("big.pem", std::string(100, 'x'));
  EXPECT_TRUE(ReadRegularFile(Path("big.pem"), 100, "signing key").ok());
  auto read = ReadRegularFile(Path("big.pem"), 99, "signing key");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted) << read.status();
  EXPECT_THAT(read.status().message(),
              HasSubstr("is 100 bytes, over the cap of 99 bytes for a signing key"));
}

TEST_F(RegularFileTest, NoFollowRefusesASymlinkAndFollowReadsItsTarget) {
  tree_.Write("real.pub", "key\n");
  fs::create_symlink(Path("real.pub"), Path("link.pub"));
  auto refused = OpenRegularFile(Path("link.pub"), "trusted key", /*follow_symlinks=*/false);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("it is a symlink"));
  EXPECT_TRUE(OpenRegularFile(Path("link.pub"), "trusted key", /*follow_symlinks=*/true).ok());
}

TEST_F(RegularFileTest, AMissingFileIsNotFound) {
  auto read = ReadRegularFile(Path("absent.pem"), 10, "plan");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("cannot open the plan " + Path("absent.pem")));
}

// Item 8: the checks behind a trust directory and a capture directory.
// The one directory listing of the trust directory and the capture: what
// `keep` accepts, never "." or "..", and one past the cap refused rather
// than the whole directory read.
TEST_F(RegularFileTest, ListOpenDirectoryKeepsWhatItIsAskedAndStopsPastTheCap) {
  for (const char* name : {"a.pub", "b.pub", "c.txt", ".hidden.pub"}) {
    std::ofstream(Path(name)) << "x";
  }
  UniqueFd dir(::open(tree_.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir.valid());
  const auto pub = [](absl::string_view name) {
    return absl::EndsWith(name, ".pub") && name.front() != '.';
  };
  auto names = ListOpenDirectory(dir.get(), tree_.root().string(), "trust directory", pub, 2);
  ASSERT_TRUE(names.ok()) << names.status();
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"a.pub", "b.pub"}));
  // Listed through a duplicate: the same descriptor lists again whole.
  auto all = ListOpenDirectory(
      dir.get(), tree_.root().string(), "capture directory", [](absl::string_view) { return true; },
      10);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 4u);
  auto over = ListOpenDirectory(dir.get(), tree_.root().string(), "trust directory", pub, 1);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("the trust directory " + tree_.root().string() + " holds more than 1"));
}

TEST_F(RegularFileTest, TrustedOwnershipWantsRootOrUsAndNoGroupOrOtherWrite) {
  tree_.Write("k.pub", "k");
  const std::string key = Path("k.pub");
  struct stat info;
  auto check = [&] {
    EXPECT_EQ(::stat(key.c_str(), &info), 0);
    return CheckTrustedOwnership(info, key, "trusted key");
  };
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  EXPECT_TRUE(check().ok());
  ASSERT_EQ(::chmod(key.c_str(), 0646), 0);
  absl::Status others = check();
  EXPECT_EQ(others.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(others.message(), AllOf(HasSubstr("with mode 0646"), HasSubstr("chmod go-w " + key)));
  ASSERT_EQ(::chmod(key.c_str(), 0664), 0);
  EXPECT_THAT(check().message(), HasSubstr("with mode 0664"));
}

TEST_F(RegularFileTest, TrustedOwnershipRefusesAnotherUsersFile) {
  CLUSTERCERT_REQUIRE_ROOT_FOR_CHOWN();
  tree_.Write("k.pub", "k");
  const std::string key = Path("k.pub");
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  ASSERT_EQ(::chown(key.c_str(), testing::kOtherUid, static_cast<gid_t>(-1)), 0);
  struct stat info;
  ASSERT_EQ(::stat(key.c_str(), &info), 0);
  absl::Status status = CheckTrustedOwnership(info, key, "trusted key");
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("owned by uid 65534 with mode 0644"),
                                      HasSubstr("chown " + std::to_string(::geteuid()))));
}

// The sysfs view: a FIFO in a --sysfs-root tree or a capture read nothing
// and hung GetInventory's pool thread.
class SysfsViewSpecialFileTest : public ::testing::TestWithParam<SysfsView::Resolution> {};

TEST_P(SysfsViewSpecialFileTest, AFifoAttributeIsRefusedAtOnceByEveryRead) {
  testing::TempTree tree("sysfs_fifo");
  tree.Write("sys/class/net/eth0/mtu", "9000\n");
  const std::string fifo = (tree.root() / "sys/class/net/eth0/speed").string();
  ASSERT_TRUE(testing::MakeFifo(fifo));
  SysfsView view(tree.root(), GetParam());
  absl::StatusOr<std::string> text = absl::UnknownError("did not finish");
  absl::StatusOr<std::string> bytes = absl::UnknownError("did not finish");
  EXPECT_TRUE(FinishesWithin(
      kSpecialFileDeadline,
      [&] {
        text = view.ReadText("/sys/class/net/eth0/speed");
        bytes = view.ReadBytes("/sys/class/net/eth0/speed", 64);
      },
      [fifo] { ReleaseFifoReader(fifo); }));
  for (const auto* read : {&text, &bytes}) {
    EXPECT_EQ(read->status().code(), absl::StatusCode::kFailedPrecondition) << read->status();
    EXPECT_THAT(
        read->status().message(),
        HasSubstr("/sys/class/net/eth0/speed: a FIFO where a sysfs or proc file should be"));
    EXPECT_EQ(ReasonOf(read->status()),
              "a FIFO where a sysfs or proc file should be, not read (only regular files are)");
  }
  EXPECT_EQ(*view.ReadText("/sys/class/net/eth0/mtu"), "9000");
}

TEST_P(SysfsViewSpecialFileTest, ProcAndSysFilesOfSizeZeroStillReadWhole) {
  // st_size is 0 for them: the read goes to end-of-file.
  SysfsView view("/", GetParam());
  auto release = view.ReadText("/proc/sys/kernel/osrelease");
  ASSERT_TRUE(release.ok()) << release.status();
  EXPECT_FALSE(release->empty());
  auto modules = view.ReadText("/proc/self/status");
  ASSERT_TRUE(modules.ok()) << modules.status();
  EXPECT_THAT(*modules, HasSubstr("Pid:"));
  if (view.Exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    EXPECT_TRUE(view.ReadText("/sys/kernel/mm/transparent_hugepage/enabled").ok());
  }
}

INSTANTIATE_TEST_SUITE_P(BothResolutions, SysfsViewSpecialFileTest,
                         ::testing::Values(SysfsView::Resolution::kAuto,
                                           SysfsView::Resolution::kComponentWalk),
                         [](const auto& info) {
                           return info.param == SysfsView::Resolution::kAuto ? "Openat2"
                                                                             : "ComponentWalk";
                         });

// TLS files: the agent and the controller load them at start.
TEST_F(RegularFileTest, TlsFilesThatAreAFifoOrADeviceAreRefusedAtOnce) {
  tree_.Write("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  tree_.Write("cert.pem", "-----BEGIN CERTIFICATE-----\n");
  const std::string fifo = Path("key.pem");
  ASSERT_TRUE(testing::MakeFifo(fifo));
  absl::StatusOr<TlsMaterial> with_fifo = absl::UnknownError("did not finish");
  absl::StatusOr<TlsMaterial> with_zero = absl::UnknownError("did not finish");
  EXPECT_TRUE(FinishesWithin(
      kSpecialFileDeadline,
      [&] {
        with_fifo = LoadTlsMaterial({Path("ca.pem"), Path("cert.pem"), fifo});
        with_zero = LoadTlsMaterial({"/dev/zero", Path("cert.pem"), Path("cert.pem")});
      },
      [fifo] { ReleaseFifoReader(fifo); }));
  EXPECT_THAT(with_fifo.status().message(), HasSubstr("the private key " + fifo + " is a FIFO"));
  const absl::StatusOr<TlsMaterial> missing =
      LoadTlsMaterial({Path("absent.pem"), Path("cert.pem"), Path("cert.pem")});
  EXPECT_THAT(missing.status().message(), HasSubstr("run deploy/pki.sh"));
  EXPECT_THAT(with_zero.status().message(),
              HasSubstr("the CA certificate /dev/zero is a character device"));
}

}  // namespace
}  // namespace clustercert
