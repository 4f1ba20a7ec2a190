// The collectors on the machine running the tests (root "/"): whatever it
// has, they must finish without crashing and explain what they cannot read.
#include <string>

#include "agent/inventory/netdev_collector.h"
#include "agent/inventory/pci_collector.h"
#include "agent/inventory/pci_topology.h"
#include "agent/inventory/rdma_collector.h"
#include "agent/inventory/verbs_port_attribute_source.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::inventory {
namespace {

TEST(LiveHostTest, CollectorsRunOnTheRealSysfs) {
  SysfsView view("/");
  if (!view.Exists("/sys/class/net")) SKIP_FOR_ENVIRONMENT("sysfs") << "no /sys/class/net here";
  auto netdevs = NetdevCollector(view).Collect();
  ASSERT_TRUE(netdevs.ok()) << netdevs.status();
  for (const auto& netdev : *netdevs) {
    // Every netdev either has a speed or says why not (EINVAL, -1).
    if (!netdev.has_speed_mbps()) {
      bool explained = false;
      for (const auto& unknown : netdev.unknowns()) explained |= unknown.field() == "speed_mbps";
      EXPECT_TRUE(explained) << netdev.DebugString();
    }
  }
  VerbsPortAttributeSource verbs;
  auto rdma = RdmaCollector(view, &verbs).Collect(MtuLookupFrom(*netdevs));
  ASSERT_TRUE(rdma.ok()) << rdma.status();
  LinkRdmaDevices(*rdma, &*netdevs);
  auto pci = PciCollector(view).Collect(*rdma);
  ASSERT_TRUE(pci.ok()) << pci.status();
  std::vector<v1::Unknown> unknowns;
  auto paths = BuildGpuNicPaths(*pci, &unknowns);
  size_t gpus = 0;
  size_t nics = 0;
  for (const auto& function : *pci) (function.role() == "gpu" ? gpus : nics)++;
  EXPECT_EQ(paths.size() + unknowns.size(), gpus * nics);
}

}  // namespace
}  // namespace clustercert::agent::inventory
