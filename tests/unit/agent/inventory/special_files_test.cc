// Issue 34, item 6: a FIFO in a --sysfs-root tree (or a capture sent by a
// customer) hung GetInventory: the collector's pool thread blocked in
// open(2) for good. It is now an Unknown entry naming the file, at once, and
// the rest of the inventory is read.
#include "tests/support/special_files.h"

#include <filesystem>
#include <string>

#include "agent/inventory/inventory_collector.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/finishes_within.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

namespace fs = std::filesystem;
using testing::FindUnknown;
using ::testing::HasSubstr;
using testing::TempSysfsTree;

constexpr char kRate[] = "/sys/class/infiniband/mlx5_0/ports/1/rate";

TEST(SpecialFilesTest, AFifoInTheTreeIsAnUnknownWithinSecondsNotAHang) {
  TempSysfsTree tree("roce-healthy");
  // The attribute's real place in the copy (class entries are links).
  const fs::path real = fs::weakly_canonical(tree.root() / (kRate + 1));
  ASSERT_TRUE(fs::remove(real)) << real;
  ASSERT_TRUE(clustercert::testing::MakeFifo(real.string()));

  SysfsView view(tree.root());
  InventoryCollector collector(view, InventoryProbes{}, "127.0.0.1");
  absl::StatusOr<v1::Inventory> inventory = absl::UnknownError("did not finish");
  ASSERT_TRUE(clustercert::testing::FinishesWithin(
      clustercert::testing::kSpecialFileDeadline, [&] { inventory = collector.Collect(""); },
      [real] { clustercert::testing::ReleaseFifoReader(real.string()); }))
      << "collecting the inventory of a tree with a FIFO blocked";
  ASSERT_TRUE(inventory.ok()) << inventory.status();
  const v1::RdmaDevice* mlx5_0 = nullptr;
  for (const v1::RdmaDevice& device : inventory->rdma_devices()) {
    if (device.name() == "mlx5_0") mlx5_0 = &device;
  }
  ASSERT_NE(mlx5_0, nullptr) << inventory->DebugString();
  const v1::RdmaDevice& device = *mlx5_0;
  ASSERT_EQ(device.ports_size(), 1);
  const v1::RdmaPort& port = device.ports(0);
  EXPECT_FALSE(port.has_rate_gbps());
  const v1::Unknown* rate = FindUnknown(port.unknowns(), "rate");
  ASSERT_NE(rate, nullptr) << port.DebugString();
  EXPECT_EQ(rate->path(), kRate);
  EXPECT_THAT(rate->reason(), HasSubstr("a FIFO where a sysfs or proc file should be"));
  // The rest of the port is read as usual.
  EXPECT_EQ(port.state(), "ACTIVE");
}

}  // namespace
}  // namespace clustercert::agent::inventory
