#include "agent/inventory/captured_port_attribute_source.h"

#include "gtest/gtest.h"

namespace clustercert::agent::inventory {
namespace {

// The rxe port section as captured in the soft-RoCE lab (shared/samples).
TEST(ParseIbvDevinfoTest, RealRxePortSection) {
  const std::string text =
      "hca_id:\trxe0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t0.0.0\n"
      "\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
      "\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t1024 (3)\n";
  auto ports = ParseIbvDevinfo(text);
  ASSERT_TRUE(ports.ok()) << ports.status();
  const auto& port = ports->at({"rxe0", 1});
  EXPECT_EQ(port.state, 4u);
  EXPECT_EQ(port.max_mtu_bytes, 4096u);
  EXPECT_EQ(port.active_mtu_bytes, 1024u);
}

TEST(ParseIbvDevinfoTest, PortBeforeHcaIsAnError) {
  EXPECT_FALSE(ParseIbvDevinfo("\t\tport:\t1\n").ok());
  EXPECT_FALSE(ParseIbvDevinfo("hca_id:\tmlx5_0\n\t\tport:\tone\n").ok());
}

TEST(CapturedPortAttributeSourceTest, IbFixtureCarriesTheActiveMtu) {
  SysfsView view(std::string(CLUSTERCERT_FIXTURES) + "/sysfs/ib-hdr-healthy");
  CapturedPortAttributeSource source(view);
  auto port = source.Query("mlx5_0", 1);
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_EQ(port->active_mtu_bytes, 4096u);
  EXPECT_EQ(port->source, "captured ibv_devinfo -v");
  EXPECT_TRUE(absl::IsNotFound(source.Query("mlx5_1", 1).status()));
}

TEST(CapturedPortAttributeSourceTest, TreeWithoutCaptureIsNotFound) {
  SysfsView view(std::string(CLUSTERCERT_FIXTURES) + "/sysfs/roce-healthy");
  CapturedPortAttributeSource source(view);
  EXPECT_TRUE(absl::IsNotFound(source.Query("mlx5_0", 1).status()));
}

}  // namespace
}  // namespace clustercert::agent::inventory
