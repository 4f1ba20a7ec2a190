#include "agent/inventory/module_files.h"

#include <string>
#include <utility>
#include <vector>

#include "agent/inventory/stack_collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_tree.h"

namespace clustercert::agent::inventory {
namespace {

using ::clustercert::testing::TempTree;
using ::testing::HasSubstr;

constexpr char kRelease[] = "6.8.0-45-generic";

std::string Fixture(const std::string& name) {
  return std::string(CLUSTERCERT_FIXTURES) + "/sysfs/" + name;
}

std::string ModuleImage(const std::string& host, const std::string& module) {
  SysfsView view(Fixture(host));
  auto bytes = view.ReadBytes(
      std::string("/lib/modules/") + kRelease + "/updates/dkms/" + module + ".ko", 1 << 20);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

class FakeRunner : public process::CommandRunner {
 public:
  explicit FakeRunner(absl::StatusOr<process::CommandResult> result) : result_(std::move(result)) {}
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration) override {
    calls.push_back(argv);
    return result_;
  }
  std::vector<std::vector<std::string>> calls;

 private:
  absl::StatusOr<process::CommandResult> result_;
};

TEST(ModinfoFieldTest, ReadsTheSrcversionModinfoPrints) {
  // modinfo -F srcversion on this file prints 4F2B7A9C1E3D5B8A0C6E2F4.
  const std::string image = ModuleImage("stack-cx7-healthy", "mlx5_core");
  EXPECT_EQ(*ModinfoField(image, "srcversion"), "4F2B7A9C1E3D5B8A0C6E2F4");
  EXPECT_EQ(*ModinfoField(image, "depends"), "mlxfw,mlx_compat");
  EXPECT_EQ(*ModinfoField(image, "no_such_key"), "");
}

TEST(ModinfoFieldTest, RefusesTruncatedAndForeignImages) {
  const std::string image = ModuleImage("stack-cx7-healthy", "mlx5_core");
  EXPECT_THAT(
      std::string(
          ModinfoField(image.substr(0, image.size() - 10), "srcversion").status().message()),
      HasSubstr("outside the image"));
  EXPECT_THAT(std::string(ModinfoField("#!/bin/sh\necho hi\n", "srcversion").status().message()),
              HasSubstr("not an ELF"));
  std::string elf32 = image;
  elf32[4] = 1;
  EXPECT_FALSE(ModinfoField(elf32, "srcversion").ok());
  // A section table that points past the end.
  std::string far = image;
  far[0x28 + 5] = 0x7f;
  EXPECT_FALSE(ModinfoField(far, "srcversion").ok());
}

TEST(ParseModulesDepTest, NamesEachModuleByItsFile) {
  const auto files = ParseModulesDep(
      "kernel/drivers/infiniband/core/ib_core.ko:\n"
      "updates/dkms/mlx5_core.ko.zst: updates/dkms/mlxfw.ko.zst\n"
      "kernel/drivers/pci/controller/pci-hyperv-intf.ko.xz:\n"
      "/etc/passwd.ko: \n"
      "../../escape.ko:\n"
      "garbage without colon\n");
  EXPECT_EQ(files.at("ib_core"), "kernel/drivers/infiniband/core/ib_core.ko");
  EXPECT_EQ(files.at("mlx5_core"), "updates/dkms/mlx5_core.ko.zst");
  EXPECT_EQ(files.at("pci_hyperv_intf"), "kernel/drivers/pci/controller/pci-hyperv-intf.ko.xz");
  EXPECT_EQ(files.size(), 3u);
}

TEST(ModuleFileReaderTest, ReadsTheFilesModulesDepNames) {
  SysfsView view(Fixture("stack-cx7-srcversion-mismatch"));
  FakeRunner runner(absl::InternalError("not expected"));
  const auto files = ModuleFileReader(view, runner, false).Read(kRelease, {"mlx5_core", "ib_core"});
  EXPECT_TRUE(files.at("mlx5_core").read);
  EXPECT_EQ(files.at("mlx5_core").srcversion, "D03A6C8E2B4F7A1C9E5B3D6");
  EXPECT_EQ(files.at("mlx5_core").path, "/lib/modules/6.8.0-45-generic/updates/dkms/mlx5_core.ko");
  EXPECT_EQ(files.at("ib_core").srcversion, "2E8A4C6B0D9F1E3A5C7B8D0");
  EXPECT_TRUE(runner.calls.empty());
}

TEST(ModuleFileReaderTest, ACompressedFileGoesThroughModinfoWithAFixedArgv) {
  TempTree tree;
  tree.Write(std::string("lib/modules/") + kRelease + "/modules.dep",
             "updates/dkms/mlx5_core.ko.zst:\n");
  tree.Write(std::string("lib/modules/") + kRelease + "/updates/dkms/mlx5_core.ko.zst", "zstd");
  SysfsView view(tree.root());
  FakeRunner runner(process::CommandResult{0, "D03A6C8E2B4F7A1C9E5B3D6\n", ""});
  const auto files = ModuleFileReader(view, runner, true).Read(kRelease, {"mlx5_core"});
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0],
            (std::vector<std::string>{"modinfo", "-F", "srcversion", "mlx5_core"}));
  EXPECT_EQ(files.at("mlx5_core").srcversion, "D03A6C8E2B4F7A1C9E5B3D6");
  EXPECT_TRUE(files.at("mlx5_core").read);

  // A captured tree never runs modinfo: the file stays unread, with why.
  FakeRunner unused(absl::InternalError("not expected"));
  const auto captured = ModuleFileReader(view, unused, false).Read(kRelease, {"mlx5_core"});
  EXPECT_FALSE(captured.at("mlx5_core").read);
  EXPECT_FALSE(captured.at("mlx5_core").unknown);
  EXPECT_THAT(captured.at("mlx5_core").source, HasSubstr("compressed"));
  EXPECT_TRUE(unused.calls.empty());
}

TEST(ModuleFileReaderTest, ModinfoFailingOrANameOffTheListIsUnknown) {
  TempTree tree;
  tree.Write(std::string("lib/modules/") + kRelease + "/modules.dep",
             "updates/dkms/mlx5_core.ko.xz:\nkernel/fs/evil.ko.xz:\n");
  SysfsView view(tree.root());
  FakeRunner runner(process::CommandResult{1, "", "modinfo: ERROR: Module mlx5_core not found.\n"});
  const auto files = ModuleFileReader(view, runner, true).Read(kRelease, {"mlx5_core", "evil"});
  EXPECT_TRUE(files.at("mlx5_core").unknown);
  EXPECT_THAT(files.at("mlx5_core").source, HasSubstr("exited with status 1"));
  EXPECT_TRUE(files.at("evil").unknown);
  EXPECT_EQ(runner.calls.size(), 1u);  // never for "evil"
}

TEST(ModuleFileReaderTest, AHostileReleaseNamesNoFolder) {
  SysfsView view(Fixture("stack-cx7-healthy"));
  FakeRunner runner(absl::InternalError("not expected"));
  const auto files = ModuleFileReader(view, runner, false).Read("../../etc", {"mlx5_core"});
  EXPECT_FALSE(files.at("mlx5_core").read);
  EXPECT_TRUE(files.at("mlx5_core").unknown);
}

TEST(ModuleFileReaderTest, ACaptureWithoutLibModulesIsNotAnUnknown) {
  SysfsView view(Fixture("roce-healthy"));
  FakeRunner runner(absl::InternalError("not expected"));
  const auto files = ModuleFileReader(view, runner, false).Read(kRelease, {"mlx5_core"});
  EXPECT_FALSE(files.at("mlx5_core").read);
  EXPECT_FALSE(files.at("mlx5_core").unknown);
  EXPECT_THAT(files.at("mlx5_core").source, HasSubstr("has no /lib/modules/"));
}

TEST(StackCollectorModulesTest, RecordsSrcversionsAndLoadRanksOfAConnectX7Host) {
  SysfsView view(Fixture("stack-cx7-srcversion-mismatch"));
  FakeRunner runner(absl::InternalError("not expected"));
  const v1::Stack stack = StackCollector(view, runner).Collect();
  bool seen = false;
  for (const auto& module : stack.modules()) {
    if (module.name() != "mlx5_core") continue;
    seen = true;
    EXPECT_TRUE(module.loaded());
    EXPECT_FALSE(module.builtin());
    EXPECT_EQ(module.srcversion(), "4F2B7A9C1E3D5B8A0C6E2F4");
    EXPECT_EQ(module.file_srcversion(), "D03A6C8E2B4F7A1C9E5B3D6");
    EXPECT_TRUE(module.file_read());
    EXPECT_EQ(module.load_rank(), 8u);  // the ninth line of /proc/modules
  }
  EXPECT_TRUE(seen);
  for (const auto& unknown : stack.unknowns()) {
    EXPECT_NE(unknown.field(), "modules.file_srcversion") << unknown.reason();
  }
}

}  // namespace
}  // namespace clustercert::agent::inventory
