#include "agent/inventory/pci_topology.h"

#include <map>
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

using testing::FixtureRoot;

constexpr char kNic[] =
    "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/0000:42:00.0/0000:43:00.0";

std::string Relation(const std::string& a, std::optional<int> numa_a, const std::string& b,
                     std::optional<int> numa_b) {
  auto relation = ClassifyPciRelation(a, numa_a, b, numa_b);
  EXPECT_TRUE(relation.ok()) << relation.status();
  return relation.ok() ? *relation : "";
}

TEST(ClassifyPciRelationTest, DifferentNumaIsSys) {
  EXPECT_EQ(Relation("/sys/devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0", 1, kNic, 0), "SYS");
}

TEST(ClassifyPciRelationTest, SameNumaOtherHostBridgeIsNode) {
  EXPECT_EQ(Relation("/sys/devices/pci0000:60/0000:60:01.1/0000:61:00.0", 0, kNic, 0), "NODE");
  // An unknown NUMA node is not taken as a difference.
  EXPECT_EQ(Relation("/sys/devices/pci0000:60/0000:60:01.1/0000:61:00.0", std::nullopt, kNic, 0),
            "NODE");
}

TEST(ClassifyPciRelationTest, MeetingOnlyAtTheHostBridgeIsPhb) {
  EXPECT_EQ(Relation("/sys/devices/pci0000:40/0000:40:03.1/0000:44:00.0", 0,
                     "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0", 0),
            "PHB");
  EXPECT_EQ(Relation("/sys/devices/pci0000:40/0000:40:03.1/0000:44:00.0", 0, kNic, 0), "PHB");
}

TEST(ClassifyPciRelationTest, OneSwitchIsPixSeveralArePxb) {
  // Root port 40:01.1, switch 41:00.0 (up) / 42:0x.0 (down ports).
  EXPECT_EQ(Relation("/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/0000:42:01.0/0000:44:00.0",
                     0, kNic, 0),
            "PIX");
  // A second switch (45:00.0 up, 46:00.0 down) below the first.
  EXPECT_EQ(Relation("/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/0000:42:02.0/0000:45:00.0/"
                     "0000:46:00.0/0000:47:00.0",
                     0, kNic, 0),
            "PXB");
}

TEST(ClassifyPciRelationTest, PathsOutsidePciAreErrors) {
  EXPECT_FALSE(ClassifyPciRelation("", 0, kNic, 0).ok());
  EXPECT_FALSE(ClassifyPciRelation("/sys/devices/virtual/net/lo", 0, kNic, 0).ok());
  EXPECT_FALSE(ClassifyPciRelation(kNic, 0, "/sys/devices/pci0000:40", 0).ok());
}

std::map<std::string, std::string> PathsOf(const std::string& fixture,
                                           std::vector<v1::Unknown>* unknowns) {
  SysfsView view(FixtureRoot(fixture));
  auto rdma = RdmaCollector(view, nullptr).Collect(MtuLookupFrom({}));
  EXPECT_TRUE(rdma.ok());
  auto functions = PciCollector(view).Collect(*rdma);
  EXPECT_TRUE(functions.ok());
  std::map<std::string, std::string> relations;
  for (const auto& path : BuildGpuNicPaths(*functions, unknowns)) {
    relations[path.gpu() + "@" + path.gpu_pci() + "-" + path.nic() + "@" + path.nic_pci()] =
        path.relation();
  }
  return relations;
}

TEST(BuildGpuNicPathsTest, IbHdrHealthyCoversPixPxbPhb) {
  std::vector<v1::Unknown> unknowns;
  auto relations = PathsOf("ib-hdr-healthy", &unknowns);
  EXPECT_TRUE(unknowns.empty());
  EXPECT_EQ(relations,
            (std::map<std::string, std::string>{{"gpu0@0000:42:00.0-mlx5_0@0000:41:00.0", "PIX"},
                                                {"gpu1@0000:45:00.0-mlx5_0@0000:41:00.0", "PXB"},
                                                {"gpu2@0000:46:00.0-mlx5_0@0000:41:00.0", "PHB"},
                                                {"gpu3@0000:47:00.0-mlx5_0@0000:41:00.0", "PHB"}}));
}

TEST(BuildGpuNicPathsTest, RoceHealthyIsPhbForEveryPair) {
  std::vector<v1::Unknown> unknowns;
  auto relations = PathsOf("roce-healthy", &unknowns);
  EXPECT_TRUE(unknowns.empty());
  ASSERT_EQ(relations.size(), 8u);
  for (const auto& [pair, relation] : relations) EXPECT_EQ(relation, "PHB") << pair;
}

TEST(BuildGpuNicPathsTest, NoGpusNoPaths) {
  EXPECT_TRUE(PathsOf("no-rdma", nullptr).empty());
  EXPECT_TRUE(PathsOf("rxe-vm", nullptr).empty());
}

TEST(BuildGpuNicPathsTest, UnresolvedFunctionIsLeftOutWithAnUnknown) {
  std::vector<v1::PciFunction> functions(2);
  functions[0].set_role("gpu");
  functions[0].set_name("gpu0");
  functions[0].set_sysfs_path("/sys/devices/pci0000:40/0000:40:03.1/0000:44:00.0");
  functions[1].set_role("nic");
  functions[1].set_name("mlx5_0");  // sysfs_path unknown
  std::vector<v1::Unknown> unknowns;
  EXPECT_TRUE(BuildGpuNicPaths(functions, &unknowns).empty());
  ASSERT_EQ(unknowns.size(), 1u);
  EXPECT_EQ(unknowns[0].field(), "gpu_nic_paths[gpu0,mlx5_0]");
  EXPECT_FALSE(BuildGpuNicPaths(functions, nullptr).size());
}

}  // namespace
}  // namespace clustercert::agent::inventory
