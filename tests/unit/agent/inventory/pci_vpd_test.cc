// PCI VPD: a ConnectX-7's VPD built byte for byte, parsed, and every way it
// can be cut or garbled; then the same bytes as a fixture host's `vpd` file
// through PciCollector and the inventory.
#include "agent/inventory/pci_vpd.h"

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "agent/inventory/inventory_collector.h"
#include "agent/inventory/netdev_collector.h"
#include "agent/inventory/pci_collector.h"
#include "agent/inventory/rdma_collector.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using testing::FixtureRoot;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempSysfsTree;

constexpr char kIdentifier[] =
    "NVIDIA ConnectX-7 HHHL adapter card, 400GbE / NDR IB (default mode), Single-port OSFP, PCIe "
    "5.0 x16, Crypto Disabled, Secure Boot Enabled";

std::string LargeTag(uint8_t tag, const std::string& data) {
  std::string out;
  out.push_back(static_cast<char>(tag));
  out.push_back(static_cast<char>(data.size() & 0xff));
  out.push_back(static_cast<char>(data.size() >> 8));
  return out + data;
}

std::string Keyword(const std::string& keyword, const std::string& value) {
  return keyword + static_cast<char>(value.size()) + value;
}

// The layout `lspci -vvv` shows for ConnectX-7 cards ("Capabilities: [48]
// Vital Product Data": PN, EC, V2, SN, V3, VA, V0, VU, then RV "checksum
// good, 1 byte(s) reserved"), with the space padding Mellanox firmware uses.
// `checksum_delta` spoils the RV checksum when non-zero.
std::string ConnectX7Vpd(uint8_t checksum_delta = 0) {
  std::string read_only = Keyword("PN", "MCX75310AAS-NEAT    ") + Keyword("EC", "AC") +
                          Keyword("V2", "MCX75310AAS-NEAT    ") +
                          Keyword("SN", "MT2235X01234            ") +
                          Keyword("V3", "5a2f3c9e6b1ded1180001070fd8b9a10") +
                          Keyword("VA", "MLX:MN=MLNX:CSKU=V2:UUID=V3:PCI=V0:MODL=CX75310A") +
                          Keyword("V0", "PCIeGen5 x16") + Keyword("VU", "MT2235X01234MLNXS0D0F0");
  // RV: the checksum byte, then one reserved byte.
  std::string head = LargeTag(0x82, kIdentifier);
  std::string area = read_only + "RV" + static_cast<char>(2);
  std::string before = head + LargeTag(0x90, area + std::string(2, '\0')).substr(0, 3) + area;
  uint8_t sum = 0;
  for (char c : before) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
  const char checksum = static_cast<char>(static_cast<uint8_t>(-sum) + checksum_delta);
  std::string vpd = head + LargeTag(0x90, area + checksum + '\0');
  vpd += LargeTag(0x91, Keyword("V1", "") + Keyword("RW", std::string(5, '\0')));
  vpd.push_back(0x78);
  return vpd;
}

TEST(PciVpdTest, ParsesAConnectX7) {
  auto vpd = ParsePciVpd(ConnectX7Vpd());
  ASSERT_TRUE(vpd.ok()) << vpd.status();
  EXPECT_EQ(vpd->identifier, kIdentifier);
  EXPECT_EQ(vpd->Field("PN"), "MCX75310AAS-NEAT");
  EXPECT_EQ(vpd->Field("SN"), "MT2235X01234");
  EXPECT_EQ(vpd->Field("EC"), "AC");
  EXPECT_EQ(vpd->Field("V0"), "PCIeGen5 x16");
  EXPECT_EQ(vpd->Field("VA"), "MLX:MN=MLNX:CSKU=V2:UUID=V3:PCI=V0:MODL=CX75310A");
  EXPECT_EQ(vpd->Field("XX"), "");
  EXPECT_EQ(vpd->checksum_ok, true);
  EXPECT_EQ(vpd->read_write_keywords, std::vector<std::string>{"V1"});
}

TEST(PciVpdTest, ReportsABadChecksumWithoutDroppingTheFields) {
  auto vpd = ParsePciVpd(ConnectX7Vpd(/*checksum_delta=*/1));
  ASSERT_TRUE(vpd.ok()) << vpd.status();
  EXPECT_EQ(vpd->checksum_ok, false);
  EXPECT_EQ(vpd->Field("SN"), "MT2235X01234");
}

TEST(PciVpdTest, TheKernelsTrailingBytesAfterTheEndTagAreIgnored) {
  // Older kernels expose the whole 32 KiB window: the end tag, then 0xff.
  auto vpd = ParsePciVpd(ConnectX7Vpd() + std::string(512, '\xff'));
  ASSERT_TRUE(vpd.ok()) << vpd.status();
  EXPECT_EQ(vpd->Field("PN"), "MCX75310AAS-NEAT");
}

TEST(PciVpdTest, EveryTruncationIsAnErrorNamingTheOffset) {
  const std::string full = ConnectX7Vpd();
  for (size_t size = 1; size < full.size(); ++size) {
    auto vpd = ParsePciVpd(full.substr(0, size));
    ASSERT_FALSE(vpd.ok()) << "prefix of " << size << " bytes parsed";
    EXPECT_TRUE(absl::IsInvalidArgument(vpd.status())) << size << ": " << vpd.status();
    EXPECT_NE(vpd.status().message().find("offset"), std::string::npos) << vpd.status();
  }
}

TEST(PciVpdTest, NothingProgrammedIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ParsePciVpd("").status()));
  EXPECT_TRUE(absl::IsNotFound(ParsePciVpd(std::string(64, '\xff')).status()));
  EXPECT_TRUE(absl::IsNotFound(ParsePciVpd(std::string(64, '\0')).status()));
}

TEST(PciVpdTest, GarbageIsInvalidArgument) {
  auto text = ParsePciVpd("hello, world\n");
  EXPECT_TRUE(absl::IsInvalidArgument(text.status())) << text.status();
  EXPECT_NE(text.status().message().find("not the identifier string 0x82"), std::string::npos)
      << text.status();

  // VPD-R claims more bytes than the file has.
  auto overlong = ParsePciVpd(LargeTag(0x82, "X") + "\x90\xf4\x01" +
                              "PN\x02"
                              "AB");
  EXPECT_TRUE(absl::IsInvalidArgument(overlong.status()));
  EXPECT_NE(overlong.status().message().find("declares 500 bytes"), std::string::npos)
      << overlong.status();

  // A keyword that runs past its own area, and one that is not ASCII.
  auto field = ParsePciVpd(LargeTag(0x82, "X") +
                           LargeTag(0x90,
                                    "SN\x09"
                                    "MT22") +
                           "\x78");
  EXPECT_NE(field.status().message().find("keyword SN declares 9 bytes"), std::string::npos)
      << field.status();
  auto binary =
      ParsePciVpd(LargeTag(0x82, "X") + LargeTag(0x90, std::string("\x01\x02\x00", 3)) + "\x78");
  EXPECT_NE(binary.status().message().find("not two ASCII"), std::string::npos) << binary.status();
}

TEST(PciVpdTest, RandomBytesNeverCrash) {
  std::mt19937 random(14);
  const std::string real = ConnectX7Vpd();
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = real;
    // Flip a few bytes of a real VPD, or start from pure noise.
    if (round % 2 == 0) {
      for (int flips = 0; flips < 4; ++flips) {
        bytes[random() % bytes.size()] = static_cast<char>(random());
      }
    } else {
      bytes.resize(random() % 300);
      for (char& c : bytes) c = static_cast<char>(random());
      if (!bytes.empty()) bytes[0] = '\x82';
    }
    auto vpd = ParsePciVpd(bytes);
    if (vpd.ok()) {
      EXPECT_LE(vpd->identifier.size(), bytes.size());
      for (const auto& [keyword, value] : vpd->read_only) EXPECT_LE(value.size(), 255u);
    }
  }
}

TEST(PciVpdTest, ValuesKeepOnlyPrintableAscii) {
  auto vpd = ParsePciVpd(LargeTag(0x82, std::string("Card\x01\xfe  \0\0", 10)) +
                         LargeTag(0x90, Keyword("SN", "MT\x07X  ")) + "\x78");
  ASSERT_TRUE(vpd.ok()) << vpd.status();
  EXPECT_EQ(vpd->identifier, "Card??");
  EXPECT_EQ(vpd->Field("SN"), "MT?X");
  EXPECT_FALSE(vpd->checksum_ok.has_value());
}

constexpr char kNic[] = "/sys/bus/pci/devices/0000:41:00.0";

TEST(PciVpdTest, FillsTheNicFunctionAndTheRdmaModel) {
  TempSysfsTree tree("roce-healthy");
  tree.Write(std::string(kNic) + "/vpd", ConnectX7Vpd());
  SysfsView view(tree.root());
  auto rdma = RdmaCollector(view, nullptr).Collect(MtuLookupFrom({}));
  ASSERT_TRUE(rdma.ok()) << rdma.status();
  auto functions = PciCollector(view).Collect(*rdma);
  ASSERT_TRUE(functions.ok()) << functions.status();
  const v1::PciFunction& nic = functions->at(0);
  ASSERT_EQ(nic.address(), "0000:41:00.0");
  EXPECT_EQ(nic.serial_number(), "MT2235X01234");
  EXPECT_EQ(nic.part_number(), "MCX75310AAS-NEAT");
  EXPECT_EQ(nic.product_name(), kIdentifier);
  EXPECT_EQ(nic.identity_source(), "vpd");
  EXPECT_EQ(nic.unknowns_size(), 0) << nic.DebugString();
  // The second function has no vpd file in the fixture: said, not an Unknown.
  const v1::PciFunction& other = functions->at(1);
  EXPECT_EQ(other.serial_number(), "");
  EXPECT_EQ(other.identity_source(), "no VPD (the function has no vpd file)");
  EXPECT_EQ(other.unknowns_size(), 0) << other.DebugString();

  InventoryCollector collector(view, InventoryProbes{}, "127.0.0.1");
  auto inventory = collector.Collect("");
  ASSERT_TRUE(inventory.ok()) << inventory.status();
  ASSERT_EQ(inventory->rdma_devices_size(), 2);
  EXPECT_EQ(inventory->rdma_devices(0).model(), kIdentifier);
  EXPECT_EQ(inventory->rdma_devices(1).model(), "MT4125") << "no VPD: the HCA type";
}

TEST(PciVpdTest, AGarbledOrUnreadableVpdIsAnUnknown) {
  TempSysfsTree tree("roce-healthy");
  const std::string cut = ConnectX7Vpd().substr(0, 40);
  tree.Write(std::string(kNic) + "/vpd", cut);
  SysfsView view(tree.root());
  v1::PciFunction nic = PciCollector(view).Describe(kNic, PciCollector::kRoleNic, "mlx5_0");
  EXPECT_EQ(nic.serial_number(), "");
  const v1::Unknown* unknown = FindUnknown(nic.unknowns(), "serial_number");
  ASSERT_NE(unknown, nullptr) << nic.DebugString();
  EXPECT_EQ(unknown->path(), std::string(kNic) + "/vpd");
  EXPECT_NE(unknown->reason().find("tag 0x82 declares"), std::string::npos) << unknown->reason();
  EXPECT_NE(nic.identity_source().find("no VPD identity"), std::string::npos);

  // An unprogrammed EEPROM: explained, but no Unknown.
  tree.Write(std::string(kNic) + "/vpd", std::string(32, '\xff'));
  nic = PciCollector(view).Describe(kNic, PciCollector::kRoleNic, "mlx5_0");
  EXPECT_EQ(nic.unknowns_size(), 0) << nic.DebugString();
  EXPECT_NE(nic.identity_source().find("0xff"), std::string::npos) << nic.identity_source();

  // Larger than any VPD can be.
  tree.Write(std::string(kNic) + "/vpd", std::string(kMaxPciVpdBytes + 1, 'x'));
  nic = PciCollector(view).Describe(kNic, PciCollector::kRoleNic, "mlx5_0");
  ASSERT_NE(FindUnknown(nic.unknowns(), "serial_number"), nullptr);
  EXPECT_NE(FindUnknown(nic.unknowns(), "serial_number")->reason().find("larger than 32768"),
            std::string::npos);
}

// Lowers this thread's effective capabilities to none while it lives, so a
// file's mode binds a test run as root the way it binds the hardened unit's
// user (capabilities are per thread; the permitted set brings them back).
class WithoutEffectiveCapabilities {
 public:
  WithoutEffectiveCapabilities() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    ok_ = ::syscall(SYS_capget, &header_, saved_) == 0;
    if (!ok_) return;
    __user_cap_data_struct lowered[2] = {saved_[0], saved_[1]};
    lowered[0].effective = 0;
    lowered[1].effective = 0;
    ok_ = ::syscall(SYS_capset, &header_, lowered) == 0;
  }
  ~WithoutEffectiveCapabilities() {
    if (ok_) ::syscall(SYS_capset, &header_, saved_);
  }
  WithoutEffectiveCapabilities(const WithoutEffectiveCapabilities&) = delete;
  WithoutEffectiveCapabilities& operator=(const WithoutEffectiveCapabilities&) = delete;

  bool ok() const { return ok_; }

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2] = {};
  bool ok_ = false;
};

// A VPD the agent may not open is an Unknown that says why and what to do,
// not "no VPD" (which would pass a function off as having none).
TEST(PciVpdTest, AnUnreadableVpdNamesThePermissionAndTheFix) {
  TempSysfsTree tree("roce-healthy");
  const std::string vpd = std::string(kNic) + "/vpd";
  tree.Write(vpd, ConnectX7Vpd());
  const auto real = std::filesystem::canonical(tree.root() / vpd.substr(1));
  ASSERT_EQ(::chmod(real.c_str(), 0), 0);
  SysfsView view(tree.root());
  v1::PciFunction nic;
  {
    WithoutEffectiveCapabilities unprivileged;
    ASSERT_TRUE(unprivileged.ok());
    nic = PciCollector(view).Describe(kNic, PciCollector::kRoleNic, "mlx5_0");
  }
  EXPECT_EQ(nic.serial_number(), "");
  const v1::Unknown* unknown = FindUnknown(nic.unknowns(), "serial_number");
  ASSERT_NE(unknown, nullptr) << nic.DebugString();
  EXPECT_EQ(unknown->path(), vpd);
  // A capture, not the live host: the fix is the capture's modes, not udev.
  EXPECT_THAT(unknown->reason(), HasSubstr("not readable by this agent's user: chmod -R a+rX"));
  EXPECT_THAT(unknown->reason(), Not(HasSubstr("99-clustercert-vpd.rules")));
  EXPECT_THAT(nic.identity_source(), HasSubstr("VPD unreadable"));
}

TEST(PciVpdTest, FixtureFunctionsWithoutVpdHaveNoUnknown) {
  SysfsView view(FixtureRoot("ib-hdr-healthy"));
  auto functions = PciCollector(view).CollectGpus();
  ASSERT_TRUE(functions.ok());
  for (const auto& f : *functions) {
    EXPECT_EQ(f.unknowns_size(), 0) << f.DebugString();
    EXPECT_EQ(f.identity_source(), "no VPD (the function has no vpd file)");
  }
}

}  // namespace
}  // namespace clustercert::agent::inventory
