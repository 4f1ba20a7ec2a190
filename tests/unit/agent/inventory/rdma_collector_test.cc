#include "agent/inventory/rdma_collector.h"

#include <optional>
#include <string>
#include <vector>

#include "agent/inventory/netdev_collector.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using testing::FixtureRoot;

// Counts calls so tests can prove fixtures never reach the hardware source.
class CountingPortAttributeSource : public PortAttributeSource {
 public:
  absl::StatusOr<PortAttributes> Query(const std::string& device, uint32_t port) override {
    ++calls;
    PortAttributes attributes;
    attributes.active_mtu_bytes = 2048;
    attributes.max_mtu_bytes = 4096;
    return attributes;
  }
  int calls = 0;
};

std::vector<v1::RdmaDevice> CollectFixture(const std::string& name,
                                           PortAttributeSource* source = nullptr) {
  SysfsView view(FixtureRoot(name));
  auto netdevs = NetdevCollector(view).Collect();
  EXPECT_TRUE(netdevs.ok()) << netdevs.status();
  RdmaCollector collector(view, source);
  auto devices =
      collector.Collect(MtuLookupFrom(netdevs.ok() ? *netdevs : std::vector<v1::Netdev>{}));
  EXPECT_TRUE(devices.ok()) << devices.status();
  return devices.ok() ? *devices : std::vector<v1::RdmaDevice>{};
}

TEST(RoceActiveMtuTest, FollowsIboeGetMtu) {
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(9000), 4096u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(4200), 4096u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(4192), 4096u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(4191), 2048u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(1500), 1024u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(1120), 1024u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(1119), 512u);
  EXPECT_EQ(*RoceActiveMtuForNetdevMtu(352), 256u);
  EXPECT_FALSE(RoceActiveMtuForNetdevMtu(351).ok());
  EXPECT_FALSE(RoceActiveMtuForNetdevMtu(0).ok());
}

TEST(RdmaCollectorTest, IbHdrHealthy) {
  auto devices = CollectFixture("ib-hdr-healthy");
  ASSERT_EQ(devices.size(), 1u);
  const v1::RdmaDevice& mlx5 = devices[0];
  EXPECT_EQ(mlx5.name(), "mlx5_0");
  EXPECT_EQ(mlx5.node_type(), "CA");
  EXPECT_EQ(mlx5.fw_ver(), "20.31.1014");
  EXPECT_EQ(mlx5.node_guid(), "0c42:a103:0065:f2c0");
  EXPECT_EQ(mlx5.sys_image_guid(), "0c42:a103:0065:f2c0");
  EXPECT_EQ(mlx5.board_id(), "MT_0000000223");
  EXPECT_EQ(mlx5.hca_type(), "MT4123");
  EXPECT_EQ(mlx5.pci_address(), "0000:41:00.0");
  EXPECT_EQ(mlx5.parent_netdev(), "");
  EXPECT_EQ(mlx5.unknowns_size(), 0) << mlx5.DebugString();
  ASSERT_EQ(mlx5.ports_size(), 1);
  const v1::RdmaPort& port = mlx5.ports(0);
  EXPECT_EQ(port.port(), 1u);
  EXPECT_EQ(port.state_code(), 4u);
  EXPECT_EQ(port.state(), "ACTIVE");
  EXPECT_EQ(port.phys_state_code(), 5u);
  EXPECT_EQ(port.phys_state(), "LinkUp");
  EXPECT_DOUBLE_EQ(port.rate_gbps(), 200);
  EXPECT_EQ(port.rate_text(), "200 Gb/sec (4X HDR)");
  EXPECT_EQ(port.width(), 4u);
  EXPECT_EQ(port.speed_name(), "HDR");
  EXPECT_EQ(port.link_layer(), "InfiniBand");
  EXPECT_EQ(port.lid(), 5u);
  EXPECT_EQ(port.sm_lid(), 1u);
  ASSERT_EQ(port.gids_size(), 1);
  EXPECT_EQ(port.gids(0).index(), 0u);
  EXPECT_EQ(port.gids(0).gid(), "fe80:0000:0000:0000:0c42:a103:0065:f2c0");
  EXPECT_EQ(port.gids(0).type(), "IB/RoCE v1");
  EXPECT_EQ(port.gids(0).netdev(), "");
  EXPECT_EQ(port.gids(0).ipv4(), "");
  EXPECT_EQ(port.netdev(), "ib0");  // IPoIB on the same PCI function
  EXPECT_FALSE(port.has_active_mtu());
  ASSERT_EQ(port.unknowns_size(), 1) << port.DebugString();
  EXPECT_EQ(port.unknowns(0).field(), "active_mtu");
  EXPECT_EQ(port.unknowns(0).path(), "/sys/class/infiniband/mlx5_0/ports/1");
  EXPECT_EQ(port.unknowns(0).reason(),
            "not in sysfs; needs ibv_query_port on a live device or a captured "
            "clustercert-capture/ibv_devinfo");
}

TEST(RdmaCollectorTest, PortAttributeSourceGivesTheActiveMtuAndItsSource) {
  CountingPortAttributeSource source;
  auto devices = CollectFixture("ib-hdr-healthy", &source);
  EXPECT_EQ(source.calls, 1);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].ports(0).active_mtu(), 2048u);
  EXPECT_EQ(devices[0].ports(0).active_mtu_source(), "ibv_query_port");
}

void ExpectRoceGids(const v1::RdmaPort& port, const std::string& netdev, const std::string& ipv4,
                    const std::string& link_local) {
  ASSERT_EQ(port.gids_size(), 4) << port.DebugString();
  const char* types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(port.gids(i).index(), static_cast<uint32_t>(i));
    EXPECT_EQ(port.gids(i).type(), types[i]);
    EXPECT_EQ(port.gids(i).netdev(), netdev);
  }
  EXPECT_EQ(port.gids(0).gid(), link_local);
  EXPECT_EQ(port.gids(1).gid(), link_local);
  EXPECT_EQ(port.gids(0).ipv4(), "");
  EXPECT_EQ(port.gids(1).ipv4(), "");
  EXPECT_EQ(port.gids(2).ipv4(), ipv4);
  EXPECT_EQ(port.gids(3).ipv4(), ipv4);
  EXPECT_EQ(port.netdev(), netdev);
}

TEST(RdmaCollectorTest, RoceHealthy) {
  auto devices = CollectFixture("roce-healthy");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name(), "mlx5_0");
  EXPECT_EQ(devices[1].name(), "mlx5_1");
  EXPECT_EQ(devices[0].pci_address(), "0000:41:00.0");
  EXPECT_EQ(devices[1].pci_address(), "0000:41:00.1");
  EXPECT_EQ(devices[0].fw_ver(), "22.36.1010");
  EXPECT_EQ(devices[0].hca_type(), "MT4125");
  EXPECT_EQ(devices[1].node_guid(), "0c42:a103:00a1:b2c1");
  for (const auto& device : devices) {
    EXPECT_EQ(device.unknowns_size(), 0) << device.DebugString();
    ASSERT_EQ(device.ports_size(), 1);
    const v1::RdmaPort& port = device.ports(0);
    EXPECT_EQ(port.state(), "ACTIVE");
    EXPECT_EQ(port.phys_state(), "LinkUp");
    EXPECT_DOUBLE_EQ(port.rate_gbps(), 200);
    EXPECT_EQ(port.width(), 4u);
    EXPECT_EQ(port.link_layer(), "Ethernet");
    EXPECT_EQ(port.lid(), 0u);
    EXPECT_EQ(port.sm_lid(), 0u);
    EXPECT_EQ(port.active_mtu(), 4096u);
    EXPECT_EQ(port.active_mtu_source(), "derived from netdev MTU 9000");
    EXPECT_EQ(port.unknowns_size(), 0) << port.DebugString();
  }
  ExpectRoceGids(devices[0].ports(0), "enp65s0f0np0", "10.10.1.1",
                 "fe80:0000:0000:0000:0e42:a1ff:fea1:b2c0");
  ExpectRoceGids(devices[1].ports(0), "enp65s0f1np1", "10.10.2.1",
                 "fe80:0000:0000:0000:0e42:a1ff:fea1:b2c1");
}

TEST(RdmaCollectorTest, RoceBrokenShowsRateAndMtuFaults) {
  auto devices = CollectFixture("roce-broken");
  ASSERT_EQ(devices.size(), 2u);
  const v1::RdmaPort& bad = devices[0].ports(0);
  EXPECT_DOUBLE_EQ(bad.rate_gbps(), 100);
  EXPECT_EQ(bad.width(), 2u);
  EXPECT_EQ(bad.speed_name(), "HDR");
  EXPECT_EQ(bad.active_mtu(), 1024u);
  EXPECT_EQ(bad.active_mtu_source(), "derived from netdev MTU 1500");
  const v1::RdmaPort& good = devices[1].ports(0);
  EXPECT_DOUBLE_EQ(good.rate_gbps(), 200);
  EXPECT_EQ(good.active_mtu(), 4096u);
}

TEST(RdmaCollectorTest, RxeVm) {
  auto devices = CollectFixture("rxe-vm");
  ASSERT_EQ(devices.size(), 1u);
  const v1::RdmaDevice& rxe = devices[0];
  EXPECT_EQ(rxe.name(), "rxe0");
  EXPECT_EQ(rxe.fw_ver(), "");
  EXPECT_EQ(rxe.pci_address(), "");
  EXPECT_EQ(rxe.parent_netdev(), "eth0");
  EXPECT_EQ(rxe.node_guid(), "5054:00ff:fe12:3456");
  EXPECT_EQ(rxe.board_id(), "");
  EXPECT_EQ(rxe.unknowns_size(), 0) << rxe.DebugString();
  ASSERT_EQ(rxe.ports_size(), 1);
  const v1::RdmaPort& port = rxe.ports(0);
  EXPECT_EQ(port.rate_text(), "2.5 Gb/sec (1X SDR)");
  EXPECT_DOUBLE_EQ(port.rate_gbps(), 2.5);
  EXPECT_EQ(port.width(), 1u);
  EXPECT_EQ(port.speed_name(), "SDR");
  ASSERT_EQ(port.gids_size(), 2);  // slots 2 and 3 are zero
  EXPECT_EQ(port.gids(0).gid(), "fe80:0000:0000:0000:5054:00ff:fe12:3456");
  EXPECT_EQ(port.gids(0).type(), "RoCE v2");
  EXPECT_EQ(port.gids(1).index(), 1u);
  EXPECT_EQ(port.gids(1).ipv4(), "10.96.0.1");
  EXPECT_EQ(port.gids(1).type(), "RoCE v2");
  EXPECT_EQ(port.gids(1).netdev(), "eth0");
  EXPECT_EQ(port.netdev(), "eth0");
  EXPECT_EQ(port.active_mtu(), 1024u);
  EXPECT_EQ(port.active_mtu_source(), "derived from netdev MTU 1500");
  EXPECT_EQ(port.unknowns_size(), 0) << port.DebugString();
}

TEST(RdmaCollectorTest, NoRdmaHostHasNoDevicesAndNoError) {
  SysfsView view(FixtureRoot("no-rdma"));
  auto devices = RdmaCollector(view, nullptr).Collect(MtuLookupFrom({}));
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_TRUE(devices->empty());
}

TEST(RdmaCollectorTest, RoceWithoutNetdevMtuExplainsTheGap) {
  SysfsView view(FixtureRoot("roce-healthy"));
  for (const NetdevMtuLookup& lookup :
       {NetdevMtuLookup{}, NetdevMtuLookup([](const std::string&) { return std::nullopt; })}) {
    auto devices = RdmaCollector(view, nullptr).Collect(lookup);
    ASSERT_TRUE(devices.ok());
    const v1::RdmaPort& port = (*devices)[0].ports(0);
    EXPECT_FALSE(port.has_active_mtu());
    const v1::Unknown* unknown = FindUnknown(port.unknowns(), "active_mtu");
    ASSERT_NE(unknown, nullptr);
    EXPECT_EQ(unknown->path(), "/sys/class/net/enp65s0f0np0/mtu");
    EXPECT_EQ(unknown->reason(), "MTU of netdev enp65s0f0np0 is unknown");
  }
}

TEST(RdmaCollectorTest, TinyNetdevMtuCannotCarryRoce) {
  SysfsView view(FixtureRoot("roce-healthy"));
  auto devices = RdmaCollector(view, nullptr).Collect([](const std::string&) {
    return std::optional<uint32_t>(300);
  });
  ASSERT_TRUE(devices.ok());
  const v1::Unknown* unknown = FindUnknown((*devices)[0].ports(0).unknowns(), "active_mtu");
  ASSERT_NE(unknown, nullptr);
  EXPECT_NE(unknown->reason().find("netdev MTU 300 leaves no room"), std::string::npos);
}

TEST(RdmaCollectorTest, LiveViewWithoutDevicesNeverAsksVerbs) {
  SysfsView view("/");
  if (view.Exists("/sys/class/infiniband"))
    SKIP_FOR_ENVIRONMENT("host-has-rdma-device") << "this host has RDMA devices";
  CountingPortAttributeSource source;
  auto devices = RdmaCollector(view, &source).Collect(MtuLookupFrom({}));
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_TRUE(devices->empty());
  EXPECT_EQ(source.calls, 0);
}

}  // namespace
}  // namespace clustercert::agent::inventory
