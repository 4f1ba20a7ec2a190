// Damaged copies of fixture hosts: every truncated, garbled or missing file
// must leave its field unset with an Unknown {field, path, reason}, never crash
// and never disturb the fields around it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/inventory/netdev_collector.h"
#include "agent/inventory/pci_collector.h"
#include "agent/inventory/rdma_collector.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using testing::TempSysfsTree;

constexpr char kPort[] = "/sys/class/infiniband/mlx5_0/ports/1";

v1::RdmaDevice FirstDevice(const TempSysfsTree& tree) {
  SysfsView view(tree.root());
  auto netdevs = NetdevCollector(view).Collect();
  EXPECT_TRUE(netdevs.ok()) << netdevs.status();
  auto devices = RdmaCollector(view, nullptr).Collect(MtuLookupFrom(*netdevs));
  EXPECT_TRUE(devices.ok()) << devices.status();
  if (!devices.ok() || devices->empty()) return v1::RdmaDevice();
  return devices->front();
}

TEST(BadInputTest, EmptyRateFileIsUnknownAndTheRestIsRead) {
  TempSysfsTree tree("roce-healthy");
  tree.Write(std::string(kPort) + "/rate", "");
  v1::RdmaDevice device = FirstDevice(tree);
  ASSERT_EQ(device.ports_size(), 1);
  const v1::RdmaPort& port = device.ports(0);
  EXPECT_FALSE(port.has_rate_gbps());
  EXPECT_FALSE(port.has_width());
  EXPECT_EQ(port.rate_text(), "");
  const v1::Unknown* rate = FindUnknown(port.unknowns(), "rate");
  ASSERT_NE(rate, nullptr) << port.DebugString();
  EXPECT_EQ(rate->path(), std::string(kPort) + "/rate");
  EXPECT_EQ(rate->reason().rfind("unparsable: ''", 0), 0u) << rate->reason();
  EXPECT_EQ(port.state(), "ACTIVE");
  EXPECT_EQ(port.active_mtu(), 4096u);
}

TEST(BadInputTest, NonNumericRateNamesTheText) {
  TempSysfsTree tree("roce-healthy");
  tree.Write(std::string(kPort) + "/rate", "fast Gb/sec\n");
  v1::RdmaDevice device = FirstDevice(tree);
  const v1::RdmaPort& port = device.ports(0);
  EXPECT_FALSE(port.has_rate_gbps());
  EXPECT_EQ(port.rate_text(), "fast Gb/sec");
  const v1::Unknown* rate = FindUnknown(port.unknowns(), "rate");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->reason().rfind("unparsable: 'fast Gb/sec'", 0), 0u) << rate->reason();
}

TEST(BadInputTest, MissingStateIsNoSuchFile) {
  TempSysfsTree tree("roce-healthy");
  tree.Remove(std::string(kPort) + "/state");
  v1::RdmaDevice device = FirstDevice(tree);
  const v1::RdmaPort& port = device.ports(0);
  EXPECT_FALSE(port.has_state_code());
  EXPECT_EQ(port.state(), "");
  const v1::Unknown* state = FindUnknown(port.unknowns(), "state");
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->path(), std::string(kPort) + "/state");
  EXPECT_EQ(state->reason(), "No such file or directory");
  EXPECT_EQ(port.phys_state(), "LinkUp");
  EXPECT_DOUBLE_EQ(port.rate_gbps(), 200);
}

TEST(BadInputTest, GarbledIdentityGidAndLidFiles) {
  TempSysfsTree tree("roce-healthy");
  tree.Write("/sys/class/infiniband/mlx5_0/node_guid", "not-a-guid\n");
  tree.Write("/sys/class/infiniband/mlx5_0/node_type", "CA\n");
  tree.Write(std::string(kPort) + "/gids/2", "0000:0000:0000\n");
  tree.Write(std::string(kPort) + "/lid", "zz\n");
  tree.Write(std::string(kPort) + "/phys_state", "LinkUp\n");
  v1::RdmaDevice device = FirstDevice(tree);
  EXPECT_EQ(device.node_guid(), "");
  EXPECT_EQ(device.node_type(), "");
  ASSERT_NE(FindUnknown(device.unknowns(), "node_guid"), nullptr);
  EXPECT_EQ(
      FindUnknown(device.unknowns(), "node_guid")->reason().rfind("unparsable: 'not-a-guid'", 0),
      0u);
  EXPECT_NE(FindUnknown(device.unknowns(), "node_type"), nullptr);
  const v1::RdmaPort& port = device.ports(0);
  EXPECT_EQ(port.gids_size(), 3);  // 0, 1 and 3 survive
  const v1::Unknown* gid = FindUnknown(port.unknowns(), "gids[2]");
  ASSERT_NE(gid, nullptr);
  EXPECT_EQ(gid->path(), std::string(kPort) + "/gids/2");
  EXPECT_FALSE(port.has_lid());
  EXPECT_NE(FindUnknown(port.unknowns(), "lid"), nullptr);
  EXPECT_FALSE(port.has_phys_state_code());
  EXPECT_NE(FindUnknown(port.unknowns(), "phys_state"), nullptr);
  EXPECT_EQ(port.sm_lid(), 0u);
}

TEST(BadInputTest, MissingPortsAndGidsDirectories) {
  TempSysfsTree tree("rxe-vm");
  std::filesystem::remove_all(tree.root() / "sys/devices/virtual/infiniband/rxe0/ports/1/gids");
  v1::RdmaDevice device = FirstDevice(tree);
  ASSERT_EQ(device.ports_size(), 1);
  EXPECT_EQ(device.ports(0).gids_size(), 0);
  EXPECT_NE(FindUnknown(device.ports(0).unknowns(), "gids"), nullptr);
  // No GID names eth0 any more, but rxe's parent still does.
  EXPECT_EQ(device.ports(0).netdev(), "eth0");
  EXPECT_EQ(device.ports(0).active_mtu(), 1024u);

  std::filesystem::remove_all(tree.root() / "sys/devices/virtual/infiniband/rxe0/ports");
  device = FirstDevice(tree);
  EXPECT_EQ(device.ports_size(), 0);
  const v1::Unknown* ports = FindUnknown(device.unknowns(), "ports");
  ASSERT_NE(ports, nullptr);
  EXPECT_EQ(ports->path(), "/sys/class/infiniband/rxe0/ports");
}

TEST(BadInputTest, RxeWithoutParentOrDeviceLinkExplainsThePciGap) {
  TempSysfsTree tree("rxe-vm");
  tree.Remove("/sys/class/infiniband/rxe0/parent");
  v1::RdmaDevice device = FirstDevice(tree);
  EXPECT_EQ(device.parent_netdev(), "");
  EXPECT_NE(FindUnknown(device.unknowns(), "pci_address"), nullptr);
  // The GIDs still name eth0.
  EXPECT_EQ(device.ports(0).netdev(), "eth0");
}

TEST(BadInputTest, GarbageNetdevMtuLeavesRoceMtuUnknown) {
  TempSysfsTree tree("roce-healthy");
  tree.Write("/sys/class/net/enp65s0f0np0/mtu", "jumbo\n");
  tree.Write("/sys/class/net/enp65s0f0np0/speed", "\n");
  SysfsView view(tree.root());
  v1::Netdev netdev = NetdevCollector(view).CollectOne("enp65s0f0np0");
  EXPECT_FALSE(netdev.has_mtu());
  const v1::Unknown* mtu = FindUnknown(netdev.unknowns(), "mtu");
  ASSERT_NE(mtu, nullptr);
  EXPECT_EQ(mtu->path(), "/sys/class/net/enp65s0f0np0/mtu");
  EXPECT_EQ(mtu->reason().rfind("unparsable: 'jumbo'", 0), 0u);
  EXPECT_FALSE(netdev.has_speed_mbps());
  EXPECT_NE(FindUnknown(netdev.unknowns(), "speed_mbps"), nullptr);
  EXPECT_EQ(netdev.operstate(), "up");

  const v1::RdmaPort port = FirstDevice(tree).ports(0);
  EXPECT_FALSE(port.has_active_mtu());
  const v1::Unknown* active = FindUnknown(port.unknowns(), "active_mtu");
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active->reason(), "MTU of netdev enp65s0f0np0 is unknown");
}

TEST(BadInputTest, MissingClassNetIsAnError) {
  TempSysfsTree tree("no-rdma");
  std::filesystem::remove_all(tree.root() / "sys/class/net");
  SysfsView view(tree.root());
  auto netdevs = NetdevCollector(view).Collect();
  EXPECT_FALSE(netdevs.ok());
  EXPECT_TRUE(absl::IsNotFound(netdevs.status()));
}

TEST(BadInputTest, GarbagePciFiles) {
  TempSysfsTree tree("roce-healthy");
  const std::string nic = "/sys/bus/pci/devices/0000:41:00.0";
  tree.Write(nic + "/numa_node", "zero\n");
  tree.Write(nic + "/current_link_speed", "Unknown\n");
  tree.Write(nic + "/current_link_width", "0\n");
  tree.Write(nic + "/max_link_width", "x16\n");
  tree.Remove(nic + "/max_link_speed");
  tree.Write(nic + "/vendor", "\n");
  SysfsView view(tree.root());
  v1::PciFunction f = PciCollector(view).Describe(nic, "nic", "mlx5_0");
  EXPECT_EQ(f.address(), "0000:41:00.0");
  EXPECT_FALSE(f.has_numa_node());
  const v1::Unknown* numa = FindUnknown(f.unknowns(), "numa_node");
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(numa->path(), nic + "/numa_node");
  EXPECT_EQ(numa->reason().rfind("unparsable: 'zero'", 0), 0u);
  EXPECT_FALSE(f.has_current_gen());
  ASSERT_NE(FindUnknown(f.unknowns(), "current_speed_gts"), nullptr);
  EXPECT_NE(FindUnknown(f.unknowns(), "current_speed_gts")->reason().find("'Unknown'"),
            std::string::npos);
  EXPECT_FALSE(f.has_current_width());
  EXPECT_EQ(FindUnknown(f.unknowns(), "current_width")->reason(), "width 0 (the link is down)");
  EXPECT_FALSE(f.has_max_width());
  EXPECT_NE(FindUnknown(f.unknowns(), "max_width"), nullptr);
  EXPECT_EQ(FindUnknown(f.unknowns(), "max_speed_gts")->reason(), "No such file or directory");
  EXPECT_EQ(f.vendor_id(), "");
  EXPECT_NE(FindUnknown(f.unknowns(), "vendor_id"), nullptr);
  EXPECT_EQ(f.device_id(), "0x101d");
}

TEST(BadInputTest, GarbageVendorOnTheBusIsNotAGpu) {
  TempSysfsTree tree("roce-healthy");
  tree.Write("/sys/bus/pci/devices/0000:42:00.0/vendor", "nvidia\n");
  tree.Remove("/sys/bus/pci/devices/0000:43:00.0/class");
  SysfsView view(tree.root());
  auto gpus = PciCollector(view).CollectGpus();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].name(), "gpu0");
  EXPECT_EQ((*gpus)[0].address(), "0000:44:00.0");
}

TEST(BadInputTest, DevicesSortNaturally) {
  TempSysfsTree tree("roce-healthy");
  for (const char* name : {"mlx5_10", "mlx5_2"}) {
    std::filesystem::create_directory_symlink(
        "../../devices/pci0000:40/0000:40:01.1/0000:41:00.1/infiniband/mlx5_1",
        tree.root() / "sys/class/infiniband" / name);
  }
  SysfsView view(tree.root());
  auto devices = RdmaCollector(view, nullptr).Collect(MtuLookupFrom({}));
  ASSERT_TRUE(devices.ok());
  std::vector<std::string> names;
  for (const auto& device : *devices) names.push_back(device.name());
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10"}));
}

}  // namespace
}  // namespace clustercert::agent::inventory
