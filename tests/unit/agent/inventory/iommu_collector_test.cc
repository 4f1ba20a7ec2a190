#include "agent/inventory/iommu_collector.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/inventory/pci_collector.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::ElementsAre;
using testing::FixtureRoot;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kImage[] =
    "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=5b1e0c2a-7f3e-4d0a-9c1e-2f6b8d9e0a11 ro";

std::vector<v1::PciFunction> Functions(const SysfsView& view) {
  v1::RdmaDevice nic;
  nic.set_name("mlx5_0");
  nic.set_pci_address("0000:19:00.0");
  auto functions = PciCollector(view).Collect({nic});
  return functions.ok() ? *functions : std::vector<v1::PciFunction>{};
}

v1::Iommu CollectFrom(const SysfsView& view) {
  return IommuCollector(view).Collect(Functions(view));
}

TEST(IommuCmdlineWordsTest, KeepsOnlyIommuWords) {
  EXPECT_THAT(IommuCmdlineWords(absl::StrCat(kImage,
                                             " quiet intel_iommu=on,sm_on iommu=pt "
                                             "iommu.strict=0 iommu.passthrough=1 "
                                             "amd_iommu=off iommufoo=1 noiommu\n")),
              ElementsAre("intel_iommu=on,sm_on", "iommu=pt", "iommu.strict=0",
                          "iommu.passthrough=1", "amd_iommu=off"));
  EXPECT_THAT(IommuCmdlineWords(kImage), IsEmpty());
  EXPECT_THAT(IommuCmdlineWords(""), IsEmpty());
}

TEST(IommuCmdlineWordsTest, GarbageIsBounded) {
  std::string hostile;
  for (int i = 0; i < 1000; ++i) hostile += "iommu=" + std::string(200, 'x') + " ";
  std::vector<std::string> words = IommuCmdlineWords(hostile);
  EXPECT_EQ(words.size(), 16u);
  EXPECT_EQ(words[0].size(), 64u);
}

TEST(ClassifyIommuTest, Modes) {
  const std::vector<std::string> none;
  EXPECT_EQ(ClassifyIommu({"intel_iommu=off"}, true, 2, true, none), "off");
  EXPECT_EQ(ClassifyIommu({"amd_iommu=off"}, true, 2, true, none), "off");
  EXPECT_EQ(ClassifyIommu({}, true, 0, true, none), "off");  // no unit: not running
  EXPECT_EQ(ClassifyIommu({"intel_iommu=on", "iommu=pt"}, true, 2, true, none), "passthrough");
  EXPECT_EQ(ClassifyIommu({"iommu.passthrough=1"}, true, 2, true, none), "passthrough");
  EXPECT_EQ(ClassifyIommu({"iommu.passthrough=0"}, true, 2, true, none), "translated");
  EXPECT_EQ(ClassifyIommu({"intel_iommu=on"}, true, 2, true, none), "translated");
  EXPECT_EQ(ClassifyIommu({}, true, 2, true, none), "translated");
  // The group type is what the kernel did; the command line only asked.
  EXPECT_EQ(ClassifyIommu({}, true, 2, true, {"identity", "identity"}), "passthrough");
  EXPECT_EQ(ClassifyIommu({"iommu=pt"}, true, 2, true, {"identity", "DMA-FQ"}), "translated");
  // Nothing readable.
  EXPECT_EQ(ClassifyIommu({}, false, 0, false, none), "unknown");
  EXPECT_EQ(ClassifyIommu({}, false, 2, true, none), "unknown");
}

TEST(IommuCollectorTest, PassthroughHost) {
  SysfsView view(FixtureRoot("acs-clean"));
  v1::Iommu iommu = CollectFrom(view);
  EXPECT_EQ(iommu.mode(), "passthrough");
  EXPECT_EQ(iommu.cmdline(), "intel_iommu=on iommu=pt");
  EXPECT_THAT(iommu.units(), ElementsAre("dmar0", "dmar1"));
  EXPECT_THAT(iommu.source(), HasSubstr("iommu_group/type of the GPUs and NICs: identity"));
}

TEST(IommuCollectorTest, TranslatingHost) {
  SysfsView view(FixtureRoot("acs-redirect"));
  v1::Iommu iommu = CollectFrom(view);
  EXPECT_EQ(iommu.mode(), "translated");
  EXPECT_EQ(iommu.cmdline(), "intel_iommu=on");
  EXPECT_THAT(iommu.source(), HasSubstr("DMA-FQ"));
}

TEST(IommuCollectorTest, CommandLineDecidesWithoutGroupTypes) {
  testing::TempSysfsTree tree("acs-clean");
  for (const char* group : {"31", "32", "33"}) {
    tree.Remove(std::string("/sys/kernel/iommu_groups/") + group + "/type");
  }
  SysfsView view(tree.root());
  EXPECT_EQ(CollectFrom(view).mode(), "passthrough");  // iommu=pt
  tree.Write("/proc/cmdline", std::string(kImage) + " intel_iommu=on\n");
  EXPECT_EQ(CollectFrom(view).mode(), "translated");
}

TEST(IommuCollectorTest, NoUnitIsOff) {
  SysfsView view(FixtureRoot("roce-healthy"));  // no sys/class/iommu, no proc/cmdline
  v1::Iommu iommu = CollectFrom(view);
  EXPECT_EQ(iommu.mode(), "off");
  EXPECT_THAT(iommu.units(), IsEmpty());
  EXPECT_THAT(iommu.source(), HasSubstr("/sys/class/iommu absent"));
  EXPECT_THAT(iommu.source(), HasSubstr("/proc/cmdline unreadable"));
}

TEST(IommuCollectorTest, CmdlineOffWins) {
  testing::TempSysfsTree tree("acs-redirect");
  tree.Write("/proc/cmdline", std::string(kImage) + " intel_iommu=off\n");
  SysfsView view(tree.root());
  // Stale groups cannot exist with the IOMMU off; the command line is explicit.
  EXPECT_EQ(CollectFrom(view).mode(), "off");
}

}  // namespace
}  // namespace clustercert::agent::inventory
