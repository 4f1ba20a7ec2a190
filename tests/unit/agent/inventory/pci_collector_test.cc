#include "agent/inventory/pci_collector.h"

#include <string>
#include <vector>

#include "agent/inventory/netdev_collector.h"
#include "agent/inventory/rdma_collector.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using testing::FixtureRoot;

std::vector<v1::PciFunction> CollectFixture(const std::string& name) {
  SysfsView view(FixtureRoot(name));
  auto rdma = RdmaCollector(view, nullptr).Collect(MtuLookupFrom({}));
  EXPECT_TRUE(rdma.ok()) << rdma.status();
  auto functions = PciCollector(view).Collect(rdma.ok() ? *rdma : std::vector<v1::RdmaDevice>{});
  EXPECT_TRUE(functions.ok()) << functions.status();
  return functions.ok() ? *functions : std::vector<v1::PciFunction>{};
}

std::vector<std::string> Summary(const std::vector<v1::PciFunction>& functions) {
  std::vector<std::string> out;
  for (const auto& f : functions) out.push_back(f.role() + ":" + f.name() + "@" + f.address());
  return out;
}

void ExpectGen4(const v1::PciFunction& f, uint32_t current_width) {
  EXPECT_DOUBLE_EQ(f.current_speed_gts(), 16.0) << f.name();
  EXPECT_EQ(f.current_gen(), 4u) << f.name();
  EXPECT_EQ(f.current_width(), current_width) << f.name();
  EXPECT_DOUBLE_EQ(f.max_speed_gts(), 16.0) << f.name();
  EXPECT_EQ(f.max_gen(), 4u) << f.name();
  EXPECT_EQ(f.max_width(), 16u) << f.name();
  EXPECT_EQ(f.numa_node(), 0) << f.name();
  EXPECT_EQ(f.unknowns_size(), 0) << f.DebugString();
}

TEST(PciCollectorTest, IbHdrHealthy) {
  auto functions = CollectFixture("ib-hdr-healthy");
  EXPECT_EQ(Summary(functions),
            (std::vector<std::string>{"nic:mlx5_0@0000:41:00.0", "gpu:gpu0@0000:42:00.0",
                                      "gpu:gpu1@0000:45:00.0", "gpu:gpu2@0000:46:00.0",
                                      "gpu:gpu3@0000:47:00.0"}));
  ASSERT_EQ(functions.size(), 5u);
  const v1::PciFunction& nic = functions[0];
  EXPECT_EQ(nic.sysfs_path(),
            "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3f:00.0/0000:40:00.0/0000:41:00.0");
  EXPECT_EQ(nic.vendor_id(), "0x15b3");
  EXPECT_EQ(nic.device_id(), "0x101b");
  EXPECT_EQ(nic.class_code(), "0x020700");
  ExpectGen4(nic, 16);
  for (size_t i = 1; i < functions.size(); ++i) {
    EXPECT_EQ(functions[i].vendor_id(), "0x10de");
    EXPECT_EQ(functions[i].device_id(), "0x20b0");
    EXPECT_EQ(functions[i].class_code(), "0x030200");
    ExpectGen4(functions[i], 16);
  }
}

TEST(PciCollectorTest, RoceHealthyNicsAtX16) {
  auto functions = CollectFixture("roce-healthy");
  EXPECT_EQ(Summary(functions),
            (std::vector<std::string>{"nic:mlx5_0@0000:41:00.0", "nic:mlx5_1@0000:41:00.1",
                                      "gpu:gpu0@0000:42:00.0", "gpu:gpu1@0000:43:00.0",
                                      "gpu:gpu2@0000:44:00.0", "gpu:gpu3@0000:45:00.0"}));
  for (const auto& f : functions) ExpectGen4(f, 16);
  EXPECT_EQ(functions[1].sysfs_path(), "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.1");
}

TEST(PciCollectorTest, RoceBrokenNicsAtX8) {
  auto functions = CollectFixture("roce-broken");
  ASSERT_EQ(functions.size(), 6u);
  ExpectGen4(functions[0], 8);
  ExpectGen4(functions[1], 8);
  for (size_t i = 2; i < functions.size(); ++i) ExpectGen4(functions[i], 16);
}

TEST(PciCollectorTest, NoRdmaHostCountsNoGpuAndSkipsTheAspeedVga) {
  SysfsView view(FixtureRoot("no-rdma"));
  ASSERT_TRUE(view.Exists("/sys/bus/pci/devices/0000:03:00.0/class"));
  auto gpus = PciCollector(view).CollectGpus();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
  EXPECT_TRUE(CollectFixture("no-rdma").empty());
}

TEST(PciCollectorTest, RxeVmHasNoPciNicAndNoGpu) { EXPECT_TRUE(CollectFixture("rxe-vm").empty()); }

TEST(PciCollectorTest, VirtioFunctionHasNoLinkFilesAndNoNumaNode) {
  SysfsView view(FixtureRoot("rxe-vm"));
  v1::PciFunction virtio =
      PciCollector(view).Describe("/sys/bus/pci/devices/0000:00:04.0", "nic", "eth0");
  EXPECT_EQ(virtio.address(), "0000:00:04.0");
  EXPECT_EQ(virtio.sysfs_path(), "/sys/devices/pci0000:00/0000:00:04.0");
  EXPECT_EQ(virtio.vendor_id(), "0x1af4");
  EXPECT_EQ(virtio.class_code(), "0x020000");
  EXPECT_FALSE(virtio.has_current_speed_gts());
  EXPECT_FALSE(virtio.has_max_width());
  EXPECT_FALSE(virtio.has_numa_node());
  for (const char* field : {"current_speed_gts", "max_speed_gts", "current_width", "max_width"}) {
    const v1::Unknown* unknown = FindUnknown(virtio.unknowns(), field);
    ASSERT_NE(unknown, nullptr) << field;
    EXPECT_EQ(unknown->reason(), "No such file or directory");
  }
  EXPECT_EQ(FindUnknown(virtio.unknowns(), "current_width")->path(),
            "/sys/bus/pci/devices/0000:00:04.0/current_link_width");
  const v1::Unknown* numa = FindUnknown(virtio.unknowns(), "numa_node");
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(numa->reason(), "numa_node is -1 (firmware did not report it)");
}

TEST(PciCollectorTest, MissingFunctionIsExplainedNotFatal) {
  SysfsView view(FixtureRoot("no-rdma"));
  v1::PciFunction ghost =
      PciCollector(view).Describe("/sys/bus/pci/devices/0000:99:00.0", "nic", "mlx5_9");
  EXPECT_EQ(ghost.address(), "");
  EXPECT_NE(FindUnknown(ghost.unknowns(), "sysfs_path"), nullptr);
  EXPECT_NE(FindUnknown(ghost.unknowns(), "vendor_id"), nullptr);
}

}  // namespace
}  // namespace clustercert::agent::inventory
