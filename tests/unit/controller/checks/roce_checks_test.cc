#include "controller/checks/roce_checks.h"

#include <vector>

#include "controller/checks/check_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using testing::Get;
using ::testing::HasSubstr;

std::vector<v1::Finding> GidFindings(const plan::Plan& plan, const v1::Inventory& inventory) {
  CheckContext context(plan, plan.nodes[0], inventory);
  std::vector<v1::Finding> findings;
  AppendRoceGidChecks(context, findings);
  return findings;
}

TEST(RoceGidTest, IndexThreeIsRoceV2Ipv4) {
  const v1::Finding gid = Get(GidFindings(testing::RocePlan(), testing::HealthyRoceInventory()),
                              "roce.gid", "mlx5_0", 1);
  EXPECT_EQ(gid.status(), v1::Finding::pass);
  EXPECT_EQ(gid.observed(), "index 3: RoCE v2 10.10.1.1");
}

TEST(RoceGidTest, LinkLocalV2IsNotEnough) {
  plan::Plan plan = testing::RocePlan();
  plan.fabric.roce.gid_index = 1;
  const v1::Finding gid =
      Get(GidFindings(plan, testing::HealthyRoceInventory()), "roce.gid", "mlx5_1", 1);
  EXPECT_EQ(gid.status(), v1::Finding::fail);
  EXPECT_THAT(gid.observed(), HasSubstr("index 1: RoCE v2 fe80:"));
  EXPECT_THAT(gid.remedy(), HasSubstr("that is index 3"));
}

TEST(RoceGidTest, NoIpv4AddressMeansNoUsableGid) {
  v1::Inventory inventory = testing::HealthyRoceInventory();
  v1::RdmaPort& port = testing::Port(inventory, "mlx5_0");
  port.mutable_gids()->DeleteSubrange(2, 2);  // the IPv4-mapped entries go with the address
  const v1::Finding gid = Get(GidFindings(testing::RocePlan(), inventory), "roce.gid", "mlx5_0", 1);
  EXPECT_EQ(gid.status(), v1::Finding::fail);
  EXPECT_EQ(gid.observed(), "no GID at index 3");
  EXPECT_THAT(gid.message(), HasSubstr("node1 mlx5_0 port 1"));
  EXPECT_THAT(gid.remedy(), HasSubstr("give enp65s0np0 its IPv4 address"));
  EXPECT_THAT(gid.remedy(), HasSubstr("cma_roce_mode -d mlx5_0 -p 1 -m 2"));
}

TEST(RoceGidTest, SoftRoceUsesIndexOne) {
  plan::Plan plan = testing::RocePlan();
  plan.nodes[0].rails = {"rxe0"};
  v1::Inventory inventory;
  v1::RdmaDevice* rxe = inventory.add_rdma_devices();
  rxe->set_name("rxe0");
  rxe->set_parent_netdev("enp0s3");
  v1::RdmaPort* port = rxe->add_ports();
  port->set_port(1);
  v1::Gid* gid = port->add_gids();
  gid->set_index(1);
  gid->set_type("RoCE v2");
  gid->set_ipv4("10.0.2.15");
  const v1::Finding finding = Get(GidFindings(plan, inventory), "roce.gid", "rxe0", 1);
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.remedy(), HasSubstr("rxe0 port 1 that is index 1"));
}

}  // namespace
}  // namespace clustercert::controller::checks
