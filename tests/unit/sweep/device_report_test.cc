// The gloo worker's device note: what gloo's Device::str() says, parsed back.
#include "sweep/device_report.h"

#include <gtest/gtest.h>

#include <string>

namespace clustercert::sweep {
namespace {

TEST(DeviceReport, ReadsGloosTcpDeviceAndTheBoundSocket) {
  // Debian's libgloo0 (0.0~git20220518) for attr.hostname = "127.0.0.1".
  const std::string note =
      DeviceNote("tcp, pci=, iface=lo, speed=-1, addr=[127.0.0.1]", "[127.0.0.1]:35726");
  EXPECT_EQ(note,
            "device tcp, pci=, iface=lo, speed=-1, addr=[127.0.0.1]; bound [127.0.0.1]:35726");
  auto report = ParseDeviceNote(note);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->transport, "tcp");
  EXPECT_EQ(report->interface, "lo");
  EXPECT_EQ(report->address, "127.0.0.1");
  EXPECT_EQ(report->bound, "[127.0.0.1]:35726");
  EXPECT_EQ(report->description, "tcp, pci=, iface=lo, speed=-1, addr=[127.0.0.1]");
  EXPECT_EQ(report->ib_port, -1);
}

TEST(DeviceReport, ReadsGloosIbverbsDevice) {
  auto report = ParseDeviceNote(
      DeviceNote("ibverbs, pci=0000:17:00.0, dev=mlx5_0, port=1, index=3, gpudirect=ok", ""));
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->transport, "ibverbs");
  EXPECT_EQ(report->ib_device, "mlx5_0");
  EXPECT_EQ(report->ib_port, 1);
  EXPECT_EQ(report->gid_index, 3);
  EXPECT_TRUE(report->bound.empty());
  EXPECT_TRUE(report->interface.empty());
}

TEST(DeviceReport, ReadsAnIpv6Address) {
  auto report = ParseDeviceNote("device tcp, pci=, iface=eth0, speed=25000, addr=[fd00::2]");
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->address, "fd00::2");
  EXPECT_EQ(report->interface, "eth0");
}

TEST(DeviceReport, RefusesWhatIsNoDeviceNote) {
  EXPECT_FALSE(ParseDeviceNote("transport tcp 10.0.0.1").has_value());  // the arguments' note
  EXPECT_FALSE(ParseDeviceNote("device ").has_value());
  EXPECT_FALSE(ParseDeviceNote("device two words, addr=[1.2.3.4]").has_value());
  EXPECT_FALSE(ParseDeviceNote("device tcp, addr=" + std::string(600, 'x')).has_value());
  // A hostile number is no port.
  auto report = ParseDeviceNote("device ibverbs, dev=mlx5_0, port=99999999999, index=-2");
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->ib_port, -1);
  EXPECT_EQ(report->gid_index, -1);
}

}  // namespace
}  // namespace clustercert::sweep
