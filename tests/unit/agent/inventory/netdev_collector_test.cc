#include "agent/inventory/netdev_collector.h"

#include <string>
#include <vector>

#include "agent/inventory/rdma_collector.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using testing::FixtureRoot;

std::vector<v1::Netdev> CollectFixture(const std::string& name) {
  SysfsView view(FixtureRoot(name));
  auto netdevs = NetdevCollector(view).Collect();
  EXPECT_TRUE(netdevs.ok()) << netdevs.status();
  return netdevs.ok() ? *netdevs : std::vector<v1::Netdev>{};
}

const v1::Netdev& Named(const std::vector<v1::Netdev>& netdevs, const std::string& name) {
  for (const auto& netdev : netdevs) {
    if (netdev.name() == name) return netdev;
  }
  static const v1::Netdev kMissing;
  ADD_FAILURE() << "no netdev " << name;
  return kMissing;
}

std::vector<std::string> Names(const std::vector<v1::Netdev>& netdevs) {
  std::vector<std::string> names;
  for (const auto& netdev : netdevs) names.push_back(netdev.name());
  return names;
}

std::vector<std::string> RdmaOf(const v1::Netdev& netdev) {
  return {netdev.rdma_devices().begin(), netdev.rdma_devices().end()};
}

TEST(NetdevCollectorTest, RoceHealthy) {
  auto netdevs = CollectFixture("roce-healthy");
  EXPECT_EQ(Names(netdevs),
            (std::vector<std::string>{"eno1", "enp65s0f0np0", "enp65s0f1np1", "lo"}));
  const v1::Netdev& roce = Named(netdevs, "enp65s0f0np0");
  EXPECT_EQ(roce.mtu(), 9000u);
  EXPECT_EQ(roce.operstate(), "up");
  EXPECT_EQ(roce.speed_mbps(), 200000);
  EXPECT_EQ(roce.pci_address(), "0000:41:00.0");
  EXPECT_EQ(RdmaOf(roce), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(roce.unknowns_size(), 0) << roce.DebugString();
  EXPECT_EQ(RdmaOf(Named(netdevs, "enp65s0f1np1")), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(Named(netdevs, "enp65s0f1np1").pci_address(), "0000:41:00.1");

  const v1::Netdev& management = Named(netdevs, "eno1");
  EXPECT_EQ(management.mtu(), 1500u);
  EXPECT_EQ(management.speed_mbps(), 1000);
  EXPECT_EQ(management.pci_address(), "0000:01:00.0");
  EXPECT_TRUE(management.rdma_devices().empty());

  const v1::Netdev& lo = Named(netdevs, "lo");
  EXPECT_EQ(lo.mtu(), 65536u);
  EXPECT_EQ(lo.operstate(), "unknown");
  EXPECT_EQ(lo.pci_address(), "");
  EXPECT_FALSE(lo.has_speed_mbps());
  const v1::Unknown* speed = FindUnknown(lo.unknowns(), "speed_mbps");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->path(), "/sys/class/net/lo/speed");
}

TEST(NetdevCollectorTest, RoceBrokenHasMtu1500) {
  auto netdevs = CollectFixture("roce-broken");
  EXPECT_EQ(Named(netdevs, "enp65s0f0np0").mtu(), 1500u);
  EXPECT_EQ(Named(netdevs, "enp65s0f1np1").mtu(), 9000u);
}

TEST(NetdevCollectorTest, IbHostHasIpoibOnTheNicFunction) {
  auto netdevs = CollectFixture("ib-hdr-healthy");
  EXPECT_EQ(Names(netdevs), (std::vector<std::string>{"eno1", "ib0", "lo"}));
  const v1::Netdev& ib0 = Named(netdevs, "ib0");
  EXPECT_EQ(ib0.mtu(), 2044u);
  EXPECT_EQ(ib0.operstate(), "up");
  EXPECT_EQ(ib0.pci_address(), "0000:41:00.0");
  EXPECT_EQ(RdmaOf(ib0), std::vector<std::string>{"mlx5_0"});
}

TEST(NetdevCollectorTest, NoRdmaHost) {
  auto netdevs = CollectFixture("no-rdma");
  EXPECT_EQ(Names(netdevs), (std::vector<std::string>{"eno1", "lo"}));
  for (const auto& netdev : netdevs) EXPECT_TRUE(netdev.rdma_devices().empty());
}

TEST(NetdevCollectorTest, RxeVmVirtioSpeedMinusOneAndLinkFromRdmaSide) {
  SysfsView view(FixtureRoot("rxe-vm"));
  auto netdevs = NetdevCollector(view).Collect();
  ASSERT_TRUE(netdevs.ok());
  EXPECT_EQ(Names(*netdevs), (std::vector<std::string>{"eth0", "lo"}));
  const v1::Netdev& eth0 = Named(*netdevs, "eth0");
  EXPECT_EQ(eth0.mtu(), 1500u);
  EXPECT_EQ(eth0.operstate(), "up");
  EXPECT_EQ(eth0.pci_address(), "0000:00:04.0");
  EXPECT_FALSE(eth0.has_speed_mbps());
  const v1::Unknown* speed = FindUnknown(eth0.unknowns(), "speed_mbps");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->path(), "/sys/class/net/eth0/speed");
  EXPECT_EQ(speed->reason(), "driver reports -1 (no link speed)");
  // rxe has no PCI function, so only the RDMA side can name it.
  EXPECT_TRUE(eth0.rdma_devices().empty());

  auto rdma = RdmaCollector(view, nullptr).Collect(MtuLookupFrom(*netdevs));
  ASSERT_TRUE(rdma.ok());
  LinkRdmaDevices(*rdma, &*netdevs);
  EXPECT_EQ(RdmaOf(Named(*netdevs, "eth0")), std::vector<std::string>{"rxe0"});
  EXPECT_TRUE(Named(*netdevs, "lo").rdma_devices().empty());
}

TEST(NetdevCollectorTest, LinkRdmaDevicesKeepsListSortedAndUnique) {
  std::vector<v1::Netdev> netdevs(1);
  netdevs[0].set_name("eth2");
  netdevs[0].add_rdma_devices("mlx5_1");
  std::vector<v1::RdmaDevice> rdma(3);
  rdma[0].set_name("mlx5_1");
  rdma[0].add_ports()->add_gids()->set_netdev("eth2");
  rdma[1].set_name("mlx5_0");
  rdma[1].add_ports()->set_netdev("eth2");
  rdma[2].set_name("rxe0");
  rdma[2].set_parent_netdev("eth2");
  LinkRdmaDevices(rdma, &netdevs);
  EXPECT_EQ(RdmaOf(netdevs[0]), (std::vector<std::string>{"mlx5_0", "mlx5_1", "rxe0"}));
}

TEST(NetdevCollectorTest, MtuLookupOutlivesTheNetdevs) {
  NetdevMtuLookup lookup;
  {
    auto netdevs = CollectFixture("roce-broken");
    lookup = MtuLookupFrom(netdevs);
  }
  EXPECT_EQ(lookup("enp65s0f0np0"), std::optional<uint32_t>(1500));
  EXPECT_EQ(lookup("enp65s0f1np1"), std::optional<uint32_t>(9000));
  EXPECT_EQ(lookup("nosuch0"), std::nullopt);
}

}  // namespace
}  // namespace clustercert::agent::inventory
