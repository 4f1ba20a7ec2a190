// The version facts of v1::Stack (kernel, NVIDIA driver and flavour, NCCL)
// and the GPUDirect mechanism derived from them.
//
// Formats: /proc/sys/kernel/osrelease is uname -r's one line; the NVIDIA
// banner is the first line of /proc/driver/nvidia/version as the open GPU
// kernel modules ("NVIDIA UNIX Open Kernel Module for x86_64  550.54.15 ...")
// and the proprietary module ("NVIDIA UNIX x86_64 Kernel Module  535.129.03
// <date>") print it; NCCL's packages install libnccl.so.2.<minor>.<patch>
// with the soname link libnccl.so.2 next to it (ldconfig makes the link).
//
// The fixture trees tests/fixtures/sysfs/versions-*:
//   versions-open-dmabuf: Ubuntu 24.04, kernel 6.8.0-45-generic, open module
//     550.54.15, nvidia_peermem not loaded, NCCL 2.21.5 in
//     /usr/lib/x86_64-linux-gnu with libnccl.so.2 -> libnccl.so.2.21.5.
//   versions-proprietary-5.10: Debian 11, kernel 5.10.0-28-amd64, proprietary
//     535.129.03, no nvidia_peermem, libnccl.so.2.18.3 and .2.19.3 in
//     /usr/local/cuda/lib64 without a soname link.
//   versions-peermem: Ubuntu 22.04, kernel 5.15.0-91-generic, proprietary
//     535.129.03 with nvidia_peermem loaded, NCCL 2.21.5 in
//     /usr/lib/x86_64-linux-gnu and 2.18.3 in the CUDA toolkit's targets folder.
#include <filesystem>
#include <string>
#include <vector>

#include "agent/inventory/stack_collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_tree.h"

namespace clustercert::agent::inventory {
namespace {

namespace fs = std::filesystem;
using ::clustercert::testing::TempTree;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kOpenBanner[] =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"
    "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n";
constexpr char kProprietaryBanner[] =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
    "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n";
constexpr char kNvidiaLoaded[] =
    "nvidia 56737792 2 nvidia_modeset, Live 0x0000000000000000 (POE)\n";

class NoCommands : public process::CommandRunner {
 public:
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>&,
                                             absl::Duration) override {
    return absl::InternalError("a capture runs no command");
  }
};

const v1::Unknown* FindUnknown(const v1::Stack& stack, const std::string& field) {
  for (const auto& unknown : stack.unknowns()) {
    if (unknown.field() == field) return &unknown;
  }
  return nullptr;
}

v1::Stack CollectTree(const fs::path& root) {
  SysfsView view(root);
  NoCommands runner;
  return StackCollector(view, runner).Collect();
}

v1::Stack CollectFixture(const std::string& name) {
  const fs::path root = fs::path(CLUSTERCERT_FIXTURES) / "sysfs" / name;
  EXPECT_TRUE(fs::exists(root / "proc/modules")) << root;
  return CollectTree(root);
}

// A host with the nvidia module loaded, no peermem, and the given kernel and banner.
void WriteGpuHost(const TempTree& tree, const std::string& kernel, const std::string& banner) {
  tree.Write("proc/modules", kNvidiaLoaded);
  if (!kernel.empty()) tree.Write("proc/sys/kernel/osrelease", kernel + "\n");
  if (!banner.empty()) tree.Write("proc/driver/nvidia/version", banner);
}

TEST(ParseNvidiaDriverBannerTest, TellsOpenFromProprietary) {
  auto open = ParseNvidiaDriverBanner(kOpenBanner);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_EQ(open->flavour, "open");
  EXPECT_EQ(open->version, "550.54.15");
  auto proprietary = ParseNvidiaDriverBanner(kProprietaryBanner);
  ASSERT_TRUE(proprietary.ok()) << proprietary.status();
  EXPECT_EQ(proprietary->flavour, "proprietary");
  EXPECT_EQ(proprietary->version, "535.129.03");
  auto arm = ParseNvidiaDriverBanner(
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build");
  ASSERT_TRUE(arm.ok());
  EXPECT_EQ(arm->flavour, "open");
  EXPECT_EQ(arm->version, "580.95.05");
}

TEST(ParseNvidiaDriverBannerTest, RejectsGarbageAndTruncation) {
  EXPECT_FALSE(ParseNvidiaDriverBanner("").ok());
  EXPECT_FALSE(ParseNvidiaDriverBanner("\x01\x02 binary garbage").ok());
  EXPECT_FALSE(ParseNvidiaDriverBanner("NVRM version: NVIDIA UNIX x86_64 Kern").ok());
  EXPECT_FALSE(ParseNvidiaDriverBanner("NVRM version: NVIDIA UNIX x86_64 Kernel Module  ").ok());
  auto status = ParseNvidiaDriverBanner("GCC version:  gcc version 12.3.0").status();
  EXPECT_THAT(status.message(), HasSubstr("expected 'NVRM version: ...'"));
}

TEST(ParseKernelReleaseTest, ReadsMajorAndMinor) {
  auto release = ParseKernelRelease("6.8.0-45-generic");
  ASSERT_TRUE(release.ok());
  EXPECT_EQ(release->major, 6);
  EXPECT_EQ(release->minor, 8);
  release = ParseKernelRelease("5.12-rc1");
  ASSERT_TRUE(release.ok());
  EXPECT_EQ(release->minor, 12);
  EXPECT_FALSE(ParseKernelRelease("6").ok());
  EXPECT_FALSE(ParseKernelRelease("").ok());
  EXPECT_FALSE(ParseKernelRelease("linux.six").ok());
  EXPECT_FALSE(ParseKernelRelease("99999999999.1").ok());
}

TEST(NcclVersionFromLibraryNameTest, TakesMinorAndPatch) {
  EXPECT_EQ(*NcclVersionFromLibraryName("libnccl.so.2.21.5"), "2.21.5");
  EXPECT_EQ(*NcclVersionFromLibraryName("/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3"), "2.18.3");
  EXPECT_FALSE(NcclVersionFromLibraryName("libnccl.so.2").ok());
  EXPECT_FALSE(NcclVersionFromLibraryName("libnccl.so").ok());
  EXPECT_FALSE(NcclVersionFromLibraryName("libnccl.so.2.21").ok());
  EXPECT_FALSE(NcclVersionFromLibraryName("libnccl.so.2.21.5.bak").ok());
  EXPECT_FALSE(NcclVersionFromLibraryName("libnccl-net.so.2.21.5").ok());
  EXPECT_FALSE(NcclVersionFromLibraryName("libnccl.so.2.x.5").ok());
}

TEST(StackVersionsFixtureTest, OpenModulesOnNewKernelGiveDmaBuf) {
  v1::Stack stack = CollectFixture("versions-open-dmabuf");
  EXPECT_EQ(stack.kernel_release(), "6.8.0-45-generic");
  EXPECT_EQ(stack.nvidia_driver_version(), "550.54.15");
  EXPECT_EQ(stack.nvidia_driver_flavour(), "open");
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_EQ(stack.gpudirect_mechanism(), "dma-buf");
  EXPECT_EQ(stack.gpudirect_source(),
            "kernel 6.8.0-45-generic >= 5.12 and NVIDIA open kernel module 550.54.15: DMA-BUF");
  EXPECT_EQ(stack.nccl_version(), "2.21.5");
  EXPECT_EQ(stack.nccl_source(), "/usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.21.5");
  EXPECT_EQ(FindUnknown(stack, "gpudirect_mechanism"), nullptr);
  EXPECT_EQ(FindUnknown(stack, "kernel_release"), nullptr);
}

TEST(StackVersionsFixtureTest, ProprietaryOnOldKernelHasNone) {
  v1::Stack stack = CollectFixture("versions-proprietary-5.10");
  EXPECT_EQ(stack.kernel_release(), "5.10.0-28-amd64");
  EXPECT_EQ(stack.nvidia_driver_version(), "535.129.03");
  EXPECT_EQ(stack.nvidia_driver_flavour(), "proprietary");
  EXPECT_EQ(stack.gpudirect_mechanism(), "none");
  EXPECT_THAT(stack.gpudirect_source(), StartsWith("nvidia_peermem not loaded and no DMA-BUF: "));
  EXPECT_THAT(stack.gpudirect_source(), HasSubstr("kernel 5.10.0-28-amd64 < 5.12"));
  EXPECT_THAT(stack.gpudirect_source(), HasSubstr("proprietary NVIDIA kernel module 535.129.03"));
  EXPECT_EQ(FindUnknown(stack, "gpudirect_mechanism"), nullptr);
  // No soname link: the newest versioned file, and the other one named.
  EXPECT_EQ(stack.nccl_version(), "2.19.3");
  EXPECT_EQ(stack.nccl_source(),
            "/usr/local/cuda/lib64/libnccl.so.2.19.3 (no libnccl.so.2 link), the newest; the "
            "folder also has 2.18.3");
}

TEST(StackVersionsFixtureTest, PeermemLoadedWinsAndSecondNcclIsNamed) {
  v1::Stack stack = CollectFixture("versions-peermem");
  EXPECT_EQ(stack.kernel_release(), "5.15.0-91-generic");
  EXPECT_EQ(stack.nvidia_driver_flavour(), "proprietary");
  EXPECT_TRUE(stack.peermem_loaded());
  EXPECT_EQ(stack.gpudirect_mechanism(), "nvidia_peermem");
  EXPECT_EQ(stack.gpudirect_source(),
            "nvidia_peermem loaded (/sys/module/nvidia_peermem/version (version 535.129.03))");
  EXPECT_EQ(stack.nccl_version(), "2.21.5");
  EXPECT_EQ(stack.nccl_source(),
            "/usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.21.5; also 2.18.3 in "
            "/usr/local/cuda/targets/x86_64-linux/lib");
}

// The older shared fixtures carry no version files: empty fields, no new Unknowns
// except where GPUDirect itself cannot be decided.
TEST(StackVersionsFixtureTest, OlderFixtures) {
  v1::Stack healthy = CollectFixture("roce-healthy");
  EXPECT_EQ(healthy.gpudirect_mechanism(), "nvidia_peermem");
  EXPECT_TRUE(healthy.kernel_release().empty());
  EXPECT_TRUE(healthy.nccl_version().empty());
  EXPECT_THAT(healthy.nccl_source(), StartsWith("no libnccl.so.2.<minor>.<patch> in "));

  // nvidia is loaded but neither the kernel nor the driver flavour is in the
  // tree, so whether DMA-BUF would work is unknown, not "no".
  v1::Stack broken = CollectFixture("roce-broken");
  EXPECT_EQ(broken.gpudirect_mechanism(), "none");
  const v1::Unknown* unknown = FindUnknown(broken, "gpudirect_mechanism");
  ASSERT_NE(unknown, nullptr) << broken.DebugString();
  EXPECT_THAT(unknown->reason(), HasSubstr("kernel release unknown"));
  EXPECT_THAT(unknown->reason(), HasSubstr("NVIDIA driver flavour unknown"));

  v1::Stack plain = CollectFixture("no-rdma");
  EXPECT_EQ(plain.gpudirect_mechanism(), "none");
  EXPECT_THAT(plain.gpudirect_source(), HasSubstr("no NVIDIA kernel driver is loaded"));
  EXPECT_EQ(FindUnknown(plain, "gpudirect_mechanism"), nullptr);
}

TEST(StackVersionsTest, DmaBufNeedsKernel512Exactly) {
  TempTree at;
  WriteGpuHost(at, "5.12.0", kOpenBanner);
  EXPECT_EQ(CollectTree(at.root()).gpudirect_mechanism(), "dma-buf");
  TempTree below;
  WriteGpuHost(below, "5.11.22-100-generic", kOpenBanner);
  v1::Stack stack = CollectTree(below.root());
  EXPECT_EQ(stack.gpudirect_mechanism(), "none");
  EXPECT_THAT(stack.gpudirect_source(), HasSubstr("kernel 5.11.22-100-generic < 5.12"));
}

TEST(StackVersionsTest, VersionFromTheBannerWhenTheModuleHasNoVersionFile) {
  TempTree tree;
  WriteGpuHost(tree, "6.8.0-45-generic", kOpenBanner);
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_EQ(stack.nvidia_driver_version(), "550.54.15");
  EXPECT_EQ(stack.nvidia_driver_flavour(), "open");
}

TEST(StackVersionsTest, OpenModuleWithUnknownKernelIsUndecided) {
  TempTree tree;
  WriteGpuHost(tree, "", kOpenBanner);
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_TRUE(stack.kernel_release().empty());
  EXPECT_EQ(FindUnknown(stack, "kernel_release"), nullptr);  // absent, not unreadable
  EXPECT_EQ(stack.gpudirect_mechanism(), "none");
  const v1::Unknown* unknown = FindUnknown(stack, "gpudirect_mechanism");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->path(), "/proc/sys/kernel/osrelease");
  EXPECT_THAT(stack.gpudirect_source(), StartsWith("nvidia_peermem not loaded and DMA-BUF "
                                                   "undecided: kernel release unknown"));
}

TEST(StackVersionsTest, ProprietaryModuleDecidesEvenWithoutAKernel) {
  TempTree tree;
  WriteGpuHost(tree, "", kProprietaryBanner);
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_EQ(stack.gpudirect_mechanism(), "none");
  EXPECT_EQ(FindUnknown(stack, "gpudirect_mechanism"), nullptr);
}

TEST(StackVersionsTest, GarbageVersionFilesAreUnknownNotValues) {
  TempTree tree;
  tree.Write("proc/modules", kNvidiaLoaded);
  tree.Write("proc/sys/kernel/osrelease", "6.8.0 with spaces\n");
  tree.Write("sys/module/nvidia/version", "\x7f\x45\x4c\x46garbage\n");
  tree.Write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Ker");  // truncated
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_TRUE(stack.kernel_release().empty());
  EXPECT_TRUE(stack.nvidia_driver_version().empty());
  EXPECT_TRUE(stack.nvidia_driver_flavour().empty());
  ASSERT_NE(FindUnknown(stack, "kernel_release"), nullptr);
  EXPECT_THAT(FindUnknown(stack, "kernel_release")->reason(), StartsWith("unparsable: "));
  ASSERT_NE(FindUnknown(stack, "nvidia_driver_version"), nullptr);
  ASSERT_NE(FindUnknown(stack, "nvidia_driver_flavour"), nullptr);
  EXPECT_EQ(FindUnknown(stack, "nvidia_driver_flavour")->path(), "/proc/driver/nvidia/version");
  EXPECT_EQ(stack.gpudirect_mechanism(), "none");
  EXPECT_NE(FindUnknown(stack, "gpudirect_mechanism"), nullptr);
}

TEST(StackVersionsTest, NcclSonameToAnUnversionedFileFallsBackToTheListing) {
  TempTree tree;
  tree.Write("proc/modules", "");
  tree.Write("usr/lib/x86_64-linux-gnu/libnccl.so.2", "a copied library\n");
  tree.Write("usr/lib/x86_64-linux-gnu/libnccl.so.2.20.3", "placeholder\n");
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_EQ(stack.nccl_version(), "2.20.3");
  EXPECT_THAT(stack.nccl_source(), HasSubstr("(libnccl.so.2 names no version)"));
}

TEST(StackVersionsTest, NcclSymlinkLoopIsNotAVersion) {
  TempTree tree;
  tree.Write("proc/modules", "");
  const fs::path dir = tree.root() / "usr/lib64";
  fs::create_directories(dir);
  fs::create_symlink("libnccl.so.2.99.1", dir / "libnccl.so.2");
  fs::create_symlink("libnccl.so.2", dir / "libnccl.so.2.99.1");
  v1::Stack stack = CollectTree(tree.root());
  // The loop's names are listed, so 2.99.1 is seen by name, never followed forever.
  EXPECT_EQ(stack.nccl_version(), "2.99.1");
}

TEST(StackVersionsTest, NoNcclIsEmptyWithTheFoldersSearched) {
  TempTree tree;
  tree.Write("proc/modules", "");
  tree.Write("usr/lib/x86_64-linux-gnu/libc.so.6", "placeholder\n");
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_TRUE(stack.nccl_version().empty());
  EXPECT_THAT(stack.nccl_source(), HasSubstr("/usr/local/cuda/targets/x86_64-linux/lib"));
  EXPECT_EQ(FindUnknown(stack, "nccl_version"), nullptr);
}

TEST(StackVersionsTest, NcclFolderThatIsAFileGivesNoVersion) {
  TempTree tree;
  tree.Write("proc/modules", "");
  // /usr/lib64 as a file: listing it fails with ENOTDIR (NotFound), any other
  // failure would be Unknown; either way no version is invented.
  tree.Write("usr/lib64", "not a folder\n");
  v1::Stack stack = CollectTree(tree.root());
  EXPECT_TRUE(stack.nccl_version().empty());
}

TEST(SysfsViewBoundedTest, ListDirBoundedStopsAtTheLimit) {
  TempTree tree;
  for (int i = 0; i < 5; ++i) tree.Write("usr/lib/f" + std::to_string(i), "x");
  SysfsView view(tree.root());
  auto all = view.ListDirBounded("/usr/lib", 5);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 5u);
  EXPECT_EQ(all->front(), "f0");
  auto capped = view.ListDirBounded("/usr/lib", 4);
  EXPECT_TRUE(absl::IsResourceExhausted(capped.status())) << capped.status();
  EXPECT_EQ(ReasonOf(capped.status()), "more than 4 entries, not listed");
  EXPECT_TRUE(absl::IsNotFound(view.ListDirBounded("/usr/none", 4).status()));
}

}  // namespace
}  // namespace clustercert::agent::inventory
