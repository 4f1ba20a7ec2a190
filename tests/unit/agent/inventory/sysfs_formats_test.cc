#include "agent/inventory/sysfs_formats.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace clustercert::agent::inventory {
namespace {

TEST(ParseCodeAndNameTest, ReadsStatesAndPhysStates) {
  auto state = ParseCodeAndName("4: ACTIVE");
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->code, 4u);
  EXPECT_EQ(state->name, "ACTIVE");

  auto phys = ParseCodeAndName("5: LinkUp\n");
  ASSERT_TRUE(phys.ok());
  EXPECT_EQ(phys->code, 5u);
  EXPECT_EQ(phys->name, "LinkUp");

  auto training = ParseCodeAndName("4: PortConfigurationTraining");
  ASSERT_TRUE(training.ok());
  EXPECT_EQ(training->name, "PortConfigurationTraining");

  auto phy_test = ParseCodeAndName("7: Phy Test");
  ASSERT_TRUE(phy_test.ok());
  EXPECT_EQ(phy_test->code, 7u);
  EXPECT_EQ(phy_test->name, "Phy Test");

  auto node_type = ParseCodeAndName("1: CA");
  ASSERT_TRUE(node_type.ok());
  EXPECT_EQ(node_type->name, "CA");
}

TEST(ParseCodeAndNameTest, RejectsGarbageNamingTheText) {
  for (const char* bad : {"", "ACTIVE", "4:", "4: ", "x: ACTIVE", "-1: DOWN", ": ACTIVE"}) {
    auto parsed = ParseCodeAndName(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "'";
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
    EXPECT_NE(parsed.status().message().find(std::string("unparsable: '") + bad + "'"),
              absl::string_view::npos)
        << parsed.status();
  }
}

TEST(ParseRateTest, ReadsEveryKernelForm) {
  struct Case {
    const char* text;
    double gbps;
    uint32_t width;
    const char* speed;
  };
  for (const Case& c :
       {Case{"200 Gb/sec (4X HDR)", 200, 4, "HDR"}, Case{"2.5 Gb/sec (1X SDR)", 2.5, 1, "SDR"},
        Case{"100 Gb/sec (2X HDR)", 100, 2, "HDR"}, Case{"56 Gb/sec (4X FDR)", 56, 4, "FDR"},
        Case{"40 Gb/sec (4X FDR10)", 40, 4, "FDR10"}, Case{"400 Gb/sec (4X NDR)", 400, 4, "NDR"},
        Case{"100 Gb/sec (4X EDR)\n", 100, 4, "EDR"},
        Case{"14.0625 Gb/sec (1X FDR)", 14.0625, 1, "FDR"}, Case{"10 Gb/sec (4X)", 10, 4, ""},
        Case{"300 Gb/sec (12X EDR)", 300, 12, "EDR"}}) {
    auto rate = ParseRate(c.text);
    ASSERT_TRUE(rate.ok()) << c.text << ": " << rate.status();
    EXPECT_DOUBLE_EQ(rate->gbps, c.gbps) << c.text;
    EXPECT_EQ(rate->width, c.width) << c.text;
    EXPECT_EQ(rate->speed_name, c.speed) << c.text;
  }
}

TEST(ParseRateTest, RejectsGarbageNamingTheText) {
  auto fast = ParseRate("fast Gb/sec");
  ASSERT_FALSE(fast.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(fast.status()));
  EXPECT_NE(fast.status().message().find("unparsable: 'fast Gb/sec'"), absl::string_view::npos)
      << fast.status();
  for (const char* bad :
       {"", "200", "200 Gb/sec", "200 Gb/sec (4X HDR", "200 Gb/sec (X HDR)", "200 Gb/sec (0X HDR)",
        "-200 Gb/sec (4X HDR)", "1e3 Gb/sec (4X HDR)", "inf Gb/sec (4X HDR)", "200 Gb/sec (4XHDR)",
        "200 Gb/sec (4X H-DR)", "200 Mb/sec (4X HDR)", "0 Gb/sec (4X HDR)"}) {
    EXPECT_FALSE(ParseRate(bad).ok()) << "'" << bad << "'";
  }
}

TEST(ParseHexU32Test, ReadsLidsAndIds) {
  EXPECT_EQ(*ParseHexU32("0x1a"), 0x1au);
  EXPECT_EQ(*ParseHexU32("0x0"), 0u);
  EXPECT_EQ(*ParseHexU32("0x10de\n"), 0x10deu);
  EXPECT_EQ(*ParseHexU32("0x030200"), 0x030200u);
  EXPECT_EQ(*ParseHexU32("ffff"), 0xffffu);
  for (const char* bad : {"", "0x", "0xzz", "lid", "0x1 2", "0x100000000"}) {
    auto parsed = ParseHexU32(bad);
    EXPECT_FALSE(parsed.ok()) << "'" << bad << "'";
  }
}

TEST(ParseIntTest, ReadsDecimalsWithWhitespace) {
  EXPECT_EQ(*ParseInt("9000"), 9000);
  EXPECT_EQ(*ParseInt(" -1\n"), -1);
  EXPECT_EQ(*ParseInt("200000\n"), 200000);
  EXPECT_EQ(*ParseInt("0"), 0);
  for (const char* bad : {"", " ", "abc", "12abc", "1.5", "0x10", "--1", "99999999999999999999"}) {
    auto parsed = ParseInt(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "'";
    EXPECT_NE(parsed.status().message().find("unparsable"), absl::string_view::npos);
  }
}

TEST(ParseGidTest, ReadsLinkLocalMappedAndZero) {
  auto link_local = ParseGid("fe80:0000:0000:0000:0c42:a103:0065:f2c0");
  ASSERT_TRUE(link_local.ok());
  EXPECT_FALSE(link_local->is_zero);
  EXPECT_EQ(link_local->ipv4, "");
  EXPECT_EQ(link_local->gid, "fe80:0000:0000:0000:0c42:a103:0065:f2c0");

  auto mapped = ParseGid("0000:0000:0000:0000:0000:ffff:0a0a:0101\n");
  ASSERT_TRUE(mapped.ok());
  EXPECT_FALSE(mapped->is_zero);
  EXPECT_EQ(mapped->ipv4, "10.10.1.1");

  auto rxe = ParseGid("0000:0000:0000:0000:0000:FFFF:0A60:0001");
  ASSERT_TRUE(rxe.ok());
  EXPECT_EQ(rxe->ipv4, "10.96.0.1");
  EXPECT_EQ(rxe->gid, "0000:0000:0000:0000:0000:ffff:0a60:0001");

  auto zero = ParseGid("0000:0000:0000:0000:0000:0000:0000:0000");
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->is_zero);
  EXPECT_EQ(zero->ipv4, "");

  // ::ffff:0:0/96 needs groups 0..4 zero; this is a global IPv6 GID.
  auto global = ParseGid("2001:0db8:0000:0000:0000:ffff:0a0a:0101");
  ASSERT_TRUE(global.ok());
  EXPECT_EQ(global->ipv4, "");
}

TEST(ParseGidTest, RejectsTruncatedAndGarbage) {
  for (const char* bad : {"", "fe80::1", "fe80:0000:0000:0000:0c42:a103:0065",
                          "fe80:0000:0000:0000:0c42:a103:0065:f2c0:0000",
                          "fe80:0000:0000:0000:0c42:a103:0065:f2cg", "garbage"}) {
    EXPECT_FALSE(ParseGid(bad).ok()) << "'" << bad << "'";
  }
}

TEST(ParseGuidTest, ReadsFourGroups) {
  EXPECT_EQ(*ParseGuid("0c42:a103:0065:f2c0\n"), "0c42:a103:0065:f2c0");
  EXPECT_EQ(*ParseGuid("5054:00FF:FE12:3456"), "5054:00ff:fe12:3456");
  EXPECT_FALSE(ParseGuid("").ok());
  EXPECT_FALSE(ParseGuid("505400fffe123456").ok());
}

TEST(ParsePciLinkSpeedTest, ReadsEveryGeneration) {
  struct Case {
    const char* text;
    double gts;
    uint32_t gen;
  };
  for (const Case& c :
       {Case{"2.5 GT/s PCIe", 2.5, 1}, Case{"5.0 GT/s PCIe", 5.0, 2}, Case{"8.0 GT/s PCIe", 8.0, 3},
        Case{"16.0 GT/s PCIe", 16.0, 4}, Case{"32.0 GT/s PCIe", 32.0, 5},
        Case{"64.0 GT/s PCIe", 64.0, 6}, Case{"8 GT/s", 8.0, 3}, Case{"2.5 GT/s", 2.5, 1},
        Case{"16.0 GT/s PCIe\n", 16.0, 4}}) {
    auto speed = ParsePciLinkSpeed(c.text);
    ASSERT_TRUE(speed.ok()) << c.text << ": " << speed.status();
    EXPECT_DOUBLE_EQ(speed->gts, c.gts) << c.text;
    EXPECT_EQ(speed->gen, c.gen) << c.text;
  }
}

TEST(ParsePciLinkSpeedTest, UnknownAndGarbageAreErrors) {
  auto unknown = ParsePciLinkSpeed("Unknown");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(unknown.status()));
  EXPECT_NE(unknown.status().message().find("'Unknown'"), absl::string_view::npos);
  EXPECT_FALSE(ParsePciLinkSpeed("Unknown speed").ok());
  for (const char* bad : {"", "16.0", "16.0 GB/s", "fast GT/s PCIe", "12.0 GT/s PCIe", "GT/s"}) {
    EXPECT_FALSE(ParsePciLinkSpeed(bad).ok()) << "'" << bad << "'";
  }
}

TEST(PciAddressTest, RecognisesFunctionsAndFindsTheLastInAPath) {
  EXPECT_TRUE(IsPciAddress("0000:41:00.0"));
  EXPECT_TRUE(IsPciAddress("0000:c1:1f.7"));
  EXPECT_FALSE(IsPciAddress("pci0000:40"));
  EXPECT_FALSE(IsPciAddress("0000:41:00"));
  EXPECT_FALSE(IsPciAddress("virtio1"));
  EXPECT_EQ(LastPciAddressInPath("/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/net/eth2"),
            "0000:41:00.0");
  EXPECT_EQ(LastPciAddressInPath("/sys/devices/pci0000:00/0000:00:04.0/virtio1/net/eth0"),
            "0000:00:04.0");
  EXPECT_EQ(LastPciAddressInPath("/sys/devices/virtual/net/lo"), "");
}

}  // namespace
}  // namespace clustercert::agent::inventory
