#include "agent/inventory/stack_collector.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_tree.h"

namespace clustercert::agent::inventory {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kRealModules[] =
    "mlx5_ib 434176 0 - Live 0x0000000000000000\n"
    "ib_uverbs 163840 2 rdma_ucm,mlx5_ib, Live 0x0000000000000000\n"
    "mlx5_core 2088960 1 mlx5_ib, Live 0x0000000000000000\n"
    "ib_core 442368 8 rdma_cm,ib_cm,iw_cm,mlx5_ib,ib_uverbs, Live 0x0000000000000000\n"
    "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
    "nvidia 56737792 23 nvidia_peermem,nvidia_modeset, Live 0x0000000000000000 (POE)\n";

using ::clustercert::testing::TempTree;

// Answers every command with one canned result and remembers what was asked.
class FakeCommandRunner : public process::CommandRunner {
 public:
  explicit FakeCommandRunner(absl::StatusOr<process::CommandResult> result)
      : result_(std::move(result)) {}
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration timeout) override {
    calls.push_back(argv);
    return result_;
  }
  std::vector<std::vector<std::string>> calls;

 private:
  absl::StatusOr<process::CommandResult> result_;
};

std::map<std::string, bool> LoadedMap(const v1::Stack& stack) {
  std::map<std::string, bool> loaded;
  for (const auto& module : stack.modules()) loaded[module.name()] = module.loaded();
  return loaded;
}

bool HasUnknown(const v1::Stack& stack, const std::string& field) {
  for (const auto& unknown : stack.unknowns()) {
    if (unknown.field() == field) return true;
  }
  return false;
}

FakeCommandRunner UnusedRunner() { return FakeCommandRunner(absl::InternalError("not expected")); }

TEST(ParseProcModulesTest, ReadsRealLines) {
  ProcModules parsed = ParseProcModules(kRealModules);
  EXPECT_TRUE(parsed.bad_lines.empty());
  ASSERT_EQ(parsed.modules.size(), 6u);
  EXPECT_EQ(parsed.modules[0].name, "mlx5_ib");
  EXPECT_EQ(parsed.modules[0].size_bytes, 434176u);
  EXPECT_EQ(parsed.modules[0].state, "Live");
  EXPECT_EQ(parsed.modules[5].name, "nvidia");
}

TEST(ParseProcModulesTest, SkipsGarbageLineAndKeepsTheRest) {
  ProcModules parsed = ParseProcModules(
      "mlx5_ib 434176 0 - Live 0x0000000000000000\n"
      "this is not a module line\n"
      "ib_core 442368 8 - Unloading 0x0000000000000000\n");
  ASSERT_EQ(parsed.modules.size(), 2u);
  EXPECT_EQ(parsed.modules[1].state, "Unloading");
  ASSERT_EQ(parsed.bad_lines.size(), 1u);
  EXPECT_THAT(parsed.bad_lines[0], HasSubstr("line 2"));
  EXPECT_THAT(parsed.bad_lines[0], HasSubstr("'this is not a module line'"));
}

TEST(ParseProcModulesTest, EmptyFileHasNoModules) {
  ProcModules parsed = ParseProcModules("");
  EXPECT_TRUE(parsed.modules.empty());
  EXPECT_TRUE(parsed.bad_lines.empty());
}

TEST(ParseOfedInfoTest, StripsTrailingColonAndNewline) {
  EXPECT_EQ(*ParseOfedInfo("MLNX_OFED_LINUX-5.8-1.1.2.1:\n"), "MLNX_OFED_LINUX-5.8-1.1.2.1");
  EXPECT_EQ(*ParseOfedInfo("MLNX_OFED_LINUX-5.8-1.1.2.1"), "MLNX_OFED_LINUX-5.8-1.1.2.1");
  EXPECT_EQ(*ParseOfedInfo("\nOFED-internal-24.04-0.6.6:\n"), "OFED-internal-24.04-0.6.6");
  EXPECT_FALSE(ParseOfedInfo("").ok());
  EXPECT_FALSE(ParseOfedInfo(":").ok());
  EXPECT_FALSE(ParseOfedInfo("bash: ofed_info: command not found").ok());
}

TEST(RdmaCoreVersionTest, TakesThePackageVersionAfterTheAbiNumbers) {
  EXPECT_EQ(*RdmaCoreVersionFromLibraryName("libibverbs.so.1.14.44.0"), "44.0");
  EXPECT_EQ(*RdmaCoreVersionFromLibraryName("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"),
            "44.0");
  EXPECT_EQ(*RdmaCoreVersionFromLibraryName("libibverbs.so.1.14.58mlnx43"), "58mlnx43");
  EXPECT_FALSE(RdmaCoreVersionFromLibraryName("libibverbs.so.1").ok());
  EXPECT_FALSE(RdmaCoreVersionFromLibraryName("/usr/sbin/node-agent").ok());
}

TEST(RdmaCoreVersionTest, FindsTheLoadedLibibverbs) {
  auto path = LoadedLibibverbsPath();
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_THAT(fs::path(*path).filename().string(), StartsWith("libibverbs.so."));
  EXPECT_TRUE(RdmaCoreVersionFromLibraryName(*path).ok()) << *path;
}

TEST(StackCollectorTest, CaptureWithModulesPeermemAndOfed) {
  TempTree tree;
  tree.Write("proc/modules", kRealModules);
  tree.Write("sys/module/nvidia_peermem/version", "535.129.03\n");
  tree.Write("clustercert-capture/ofed_info", "MLNX_OFED_LINUX-5.8-1.1.2.1:\n");
  SysfsView view(tree.root());
  auto runner = UnusedRunner();
  v1::Stack stack = StackCollector(view, runner).Collect();

  EXPECT_TRUE(runner.calls.empty());
  auto loaded = LoadedMap(stack);
  ASSERT_EQ(loaded.size(), 7u);
  EXPECT_TRUE(loaded["mlx5_core"]);
  EXPECT_TRUE(loaded["mlx5_ib"]);
  EXPECT_TRUE(loaded["ib_core"]);
  EXPECT_TRUE(loaded["ib_uverbs"]);
  EXPECT_FALSE(loaded["rdma_rxe"]);
  EXPECT_TRUE(loaded["nvidia"]);
  EXPECT_TRUE(loaded["nvidia_peermem"]);
  EXPECT_TRUE(stack.peermem_loaded());
  EXPECT_EQ(stack.peermem_source(), "/sys/module/nvidia_peermem/version (version 535.129.03)");
  EXPECT_EQ(stack.ofed_version(), "MLNX_OFED_LINUX-5.8-1.1.2.1");
  EXPECT_EQ(stack.ofed_source(), "/clustercert-capture/ofed_info");
  // A capture says nothing about the libibverbs loaded here.
  EXPECT_TRUE(stack.rdma_core_version().empty());
  EXPECT_TRUE(HasUnknown(stack, "rdma_core_version"));
  EXPECT_FALSE(HasUnknown(stack, "modules"));
}

TEST(StackCollectorTest, OfedCaptureWithoutTrailingColon) {
  TempTree tree;
  tree.Write("proc/modules", "");
  tree.Write("clustercert-capture/ofed_info", "MLNX_OFED_LINUX-23.10-0.5.5.0");
  SysfsView view(tree.root());
  auto runner = UnusedRunner();
  v1::Stack stack = StackCollector(view, runner).Collect();
  EXPECT_EQ(stack.ofed_version(), "MLNX_OFED_LINUX-23.10-0.5.5.0");
}

TEST(StackCollectorTest, LegacyNvMemAndUnloadingModules) {
  TempTree tree;
  tree.Write("proc/modules",
             "mlx5_core 2088960 1 - Unloading 0x0000000000000000\nrdma_rxe 131072 0 - Live 0x0\n");
  tree.Write("sys/kernel/mm/memory_peers/nv_mem/version", "1.3-0\n");
  SysfsView view(tree.root());
  auto runner = UnusedRunner();
  v1::Stack stack = StackCollector(view, runner).Collect();
  auto loaded = LoadedMap(stack);
  EXPECT_FALSE(loaded["mlx5_core"]);
  EXPECT_TRUE(loaded["rdma_rxe"]);
  EXPECT_TRUE(stack.peermem_loaded());
  EXPECT_THAT(stack.peermem_source(), StartsWith("/sys/kernel/mm/memory_peers/nv_mem/version"));
  // The capture has no ofed_info: OFED is absent, not unknown.
  EXPECT_TRUE(stack.ofed_version().empty());
  EXPECT_THAT(stack.ofed_source(), StartsWith("ofed_info not found: upstream rdma-core"));
  EXPECT_FALSE(HasUnknown(stack, "ofed_version"));
}

TEST(StackCollectorTest, PeermemFromProcModulesOnly) {
  TempTree tree;
  tree.Write("proc/modules", "nvidia_peermem 16384 0 - Live 0x0000000000000000\n");
  SysfsView view(tree.root());
  auto runner = UnusedRunner();
  v1::Stack stack = StackCollector(view, runner).Collect();
  EXPECT_TRUE(stack.peermem_loaded());
  EXPECT_EQ(stack.peermem_source(), "/proc/modules lists nvidia_peermem");
}

TEST(StackCollectorTest, GarbageLineIsReportedAndOthersStillCount) {
  TempTree tree;
  tree.Write("proc/modules", "mlx5_ib 434176 0 - Live 0x0\n%%% garbage\n");
  SysfsView view(tree.root());
  auto runner = UnusedRunner();
  v1::Stack stack = StackCollector(view, runner).Collect();
  EXPECT_TRUE(LoadedMap(stack)["mlx5_ib"]);
  EXPECT_TRUE(HasUnknown(stack, "modules"));
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_THAT(stack.peermem_source(), HasSubstr("/proc/modules has no nvidia_peermem"));
}

TEST(StackCollectorTest, UnreadableProcModulesIsUnknownNotUnloaded) {
  TempTree tree;  // no proc/modules
  SysfsView view(tree.root());
  auto runner = UnusedRunner();
  v1::Stack stack = StackCollector(view, runner).Collect();
  EXPECT_EQ(stack.modules_size(), 0);
  ASSERT_TRUE(HasUnknown(stack, "modules"));
  EXPECT_EQ(stack.unknowns(0).path(), "/proc/modules");
  EXPECT_EQ(stack.unknowns(0).reason(), "No such file or directory");
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_TRUE(HasUnknown(stack, "peermem_loaded"));
  EXPECT_THAT(stack.peermem_source(), HasSubstr("could not read /proc/modules"));
}

TEST(StackCollectorTest, LiveRunsOfedInfoThroughTheRunner) {
  SysfsView view("/");
  ASSERT_TRUE(view.is_live());
  FakeCommandRunner runner(process::CommandResult{0, "MLNX_OFED_LINUX-5.8-1.1.2.1:\n", ""});
  v1::Stack stack = StackCollector(view, runner).Collect();
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_THAT(runner.calls[0], ElementsAre("ofed_info", "-s"));
  EXPECT_EQ(stack.ofed_version(), "MLNX_OFED_LINUX-5.8-1.1.2.1");
  EXPECT_EQ(stack.ofed_source(), "ofed_info -s");
  // The live branch reads rdma-core from the libibverbs this test binary loaded.
  auto expected = RdmaCoreVersionFromLibraryName(*LoadedLibibverbsPath());
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(stack.rdma_core_version(), *expected);
  EXPECT_THAT(stack.rdma_core_source(), HasSubstr("libibverbs.so."));
  std::cout << "[ info     ] " << stack.ShortDebugString() << "\n";
}

TEST(StackCollectorTest, LiveMissingOfedInfoMeansUpstream) {
  SysfsView view("/");
  FakeCommandRunner runner(absl::NotFoundError("ofed_info not found in /usr/bin:/bin"));
  v1::Stack stack = StackCollector(view, runner).Collect();
  EXPECT_TRUE(stack.ofed_version().empty());
  EXPECT_THAT(stack.ofed_source(), StartsWith("ofed_info not found: upstream rdma-core"));
  EXPECT_FALSE(HasUnknown(stack, "ofed_version"));
}

TEST(StackCollectorTest, LiveOfedInfoTimeoutOrFailureIsUnknown) {
  SysfsView view("/");
  FakeCommandRunner timeout(absl::DeadlineExceededError("ofed_info did not finish within 10s"));
  v1::Stack stack = StackCollector(view, timeout).Collect();
  EXPECT_TRUE(stack.ofed_version().empty());
  EXPECT_TRUE(HasUnknown(stack, "ofed_version"));

  FakeCommandRunner failing(process::CommandResult{1, "", "rpm: database locked\n"});
  stack = StackCollector(view, failing).Collect();
  EXPECT_TRUE(stack.ofed_version().empty());
  ASSERT_TRUE(HasUnknown(stack, "ofed_version"));
  EXPECT_THAT(stack.ofed_source(), HasSubstr("rpm: database locked"));
}

// The shared fixture trees (tests/fixtures/sysfs/README.md describes each host).
class StackFixtureTest : public ::testing::Test {
 protected:
  v1::Stack CollectFixture(const std::string& name) {
    const fs::path root = fs::path(CLUSTERCERT_FIXTURES) / "sysfs" / name;
    EXPECT_TRUE(fs::exists(root / "proc/modules")) << root;
    SysfsView view(root);
    return StackCollector(view, runner_).Collect();
  }
  FakeCommandRunner runner_ = UnusedRunner();
};

TEST_F(StackFixtureTest, RoceHealthy) {
  v1::Stack stack = CollectFixture("roce-healthy");
  auto loaded = LoadedMap(stack);
  for (const char* name :
       {"mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "nvidia", "nvidia_peermem"}) {
    EXPECT_TRUE(loaded[name]) << name;
  }
  EXPECT_FALSE(loaded["rdma_rxe"]);
  EXPECT_TRUE(stack.peermem_loaded());
  EXPECT_EQ(stack.peermem_source(), "/sys/module/nvidia_peermem/version (version 535.129.03)");
  EXPECT_EQ(stack.ofed_version(), "MLNX_OFED_LINUX-5.8-1.1.2.1");
  EXPECT_FALSE(HasUnknown(stack, "modules"));
  EXPECT_TRUE(runner_.calls.empty());
}

TEST_F(StackFixtureTest, RoceBrokenHasNoPeermem) {
  v1::Stack stack = CollectFixture("roce-broken");
  EXPECT_FALSE(LoadedMap(stack)["nvidia_peermem"]);
  EXPECT_TRUE(LoadedMap(stack)["mlx5_ib"]);
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_FALSE(HasUnknown(stack, "peermem_loaded"));
  EXPECT_EQ(stack.ofed_version(), "MLNX_OFED_LINUX-5.8-1.1.2.1");
}

TEST_F(StackFixtureTest, RxeVmIsUpstreamSoftRoce) {
  v1::Stack stack = CollectFixture("rxe-vm");
  auto loaded = LoadedMap(stack);
  EXPECT_TRUE(loaded["rdma_rxe"]);
  EXPECT_TRUE(loaded["ib_core"]);
  EXPECT_FALSE(loaded["mlx5_core"]);
  EXPECT_FALSE(loaded["nvidia"]);
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_TRUE(stack.ofed_version().empty());
  EXPECT_THAT(stack.ofed_source(), StartsWith("ofed_info not found: upstream rdma-core"));
}

TEST_F(StackFixtureTest, NoRdmaHasNoModulesOfInterest) {
  v1::Stack stack = CollectFixture("no-rdma");
  ASSERT_EQ(stack.modules_size(), 7);
  for (const auto& module : stack.modules()) EXPECT_FALSE(module.loaded()) << module.name();
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_TRUE(stack.ofed_version().empty());
  // Only rdma-core, which a capture cannot tell, is unknown.
  ASSERT_EQ(stack.unknowns_size(), 1) << stack.DebugString();
  EXPECT_EQ(stack.unknowns(0).field(), "rdma_core_version");
}

}  // namespace
}  // namespace clustercert::agent::inventory
