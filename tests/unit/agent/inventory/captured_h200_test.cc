// The first real GPU host: tests/fixtures/sysfs/h200-vm is what
// `node-agent --capture` wrote on a lent machine with one NVIDIA H200
// (bench/gpu_check.sh, 2026-12-04): a Firecracker VM, kernel
// 6.18.44-fc-v1252-gpu, the open kernel module 580.159.04, NCCL 2.28.3 from
// Ubuntu 24.04's packages, the GPU passed through at 0000:00:06.0 on the root
// bus (no bridge, numa_node -1), no RDMA device, no nvidia_peermem. The
// whole inventory is collected from it as the agent would with
// --sysfs-root, and must describe that host and nothing else.
#include <string>

#include "agent/inventory/inventory_collector.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class CapturedH200Test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto collector = MakeInventoryCollector(view_, "127.0.0.1");
    auto collected = collector->Collect("127.0.0.1");
    ASSERT_TRUE(collected.ok()) << collected.status();
    inventory_ = *std::move(collected);
  }

  SysfsView view_{std::string(CLUSTERCERT_FIXTURES) + "/sysfs/h200-vm"};
  v1::Inventory inventory_;
};

TEST_F(CapturedH200Test, TheGpuIsTheOnePciFunctionAtGen5x16WithNoNumaNode) {
  ASSERT_EQ(inventory_.pci_size(), 1) << inventory_.DebugString();
  const v1::PciFunction& gpu = inventory_.pci(0);
  EXPECT_EQ(gpu.role(), "gpu");
  EXPECT_EQ(gpu.address(), "0000:00:06.0");
  EXPECT_EQ(gpu.vendor_id(), "0x10de");
  EXPECT_EQ(gpu.device_id(), "0x2335");
  EXPECT_EQ(gpu.current_gen(), 5u);
  EXPECT_EQ(gpu.max_gen(), 5u);
  EXPECT_EQ(gpu.current_width(), 16u);
  EXPECT_EQ(gpu.max_width(), 16u);
  // sysfs says -1 in the VM: unset, never node 0 or a crash.
  EXPECT_FALSE(gpu.has_numa_node());
}

TEST_F(CapturedH200Test, TheGpuIsIdentifiedFromNvidiaSmi) {
  ASSERT_EQ(inventory_.pci_size(), 1);
  const v1::PciFunction& gpu = inventory_.pci(0);
  EXPECT_EQ(gpu.identity_source(), "nvidia-smi -q");
  EXPECT_EQ(gpu.serial_number(), "1653724062710");
  EXPECT_EQ(gpu.part_number(), "692-2G520-0282-001");
}

TEST_F(CapturedH200Test, TheStackIsTheOpenModuleWithDmaBufAndNccl2283) {
  const v1::Stack& stack = inventory_.stack();
  EXPECT_EQ(stack.kernel_release(), "6.18.44-fc-v1252-gpu");
  EXPECT_EQ(stack.nvidia_driver_version(), "580.159.04");
  EXPECT_EQ(stack.nvidia_driver_flavour(), "open");
  EXPECT_FALSE(stack.peermem_loaded());
  EXPECT_EQ(stack.gpudirect_mechanism(), "dma-buf");
  EXPECT_EQ(stack.nccl_version(), "2.28.3");
  EXPECT_EQ(stack.nccl_source(), "/usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.28.3");
}

TEST_F(CapturedH200Test, NoRdmaDeviceAndNoGpuNicPath) {
  EXPECT_EQ(inventory_.rdma_devices_size(), 0);
  EXPECT_EQ(inventory_.gpu_nic_paths_size(), 0);
  std::vector<std::string> names;
  for (const auto& netdev : inventory_.netdevs()) names.push_back(netdev.name());
  EXPECT_THAT(names, UnorderedElementsAre("eth0", "ifb0", "ifb1", "lo"));
}

TEST_F(CapturedH200Test, ACapturedTreeDoesNotAskThisMachinesCuda) {
  // The GPU runtime describes the machine the agent runs on, so a captured
  // tree leaves it empty and says why rather than mixing two hosts.
  EXPECT_FALSE(inventory_.gpu_runtime().driver_present());
  EXPECT_EQ(inventory_.gpu_runtime().gpus_size(), 0);
  EXPECT_THAT(inventory_.gpu_runtime().reason(), HasSubstr("fixture or capture"));
}

}  // namespace
}  // namespace clustercert::agent::inventory
