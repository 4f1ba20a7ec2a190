// Module EEPROM decoding: images built byte for byte from the SFF-8636 and
// CMIS layouts (offsets here are the specs' decimal byte numbers, written
// independently of the decoder's constants), then every way an image can be
// short, blank or garbled.
#include "agent/inventory/module_eeprom.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/non_finite.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using ::testing::HasSubstr;

// Writes fields where the spec puts them; unwritten bytes are 0.
class EepromBuilder {
 public:
  explicit EepromBuilder(size_t size) : bytes_(size, 0) {}

  EepromBuilder& Byte(size_t offset, uint8_t value) {
    bytes_.at(offset) = value;
    return *this;
  }
  // Big-endian, MSB at the lower address (SFF-8636 and CMIS alike).
  EepromBuilder& U16(size_t offset, uint16_t value) {
    bytes_.at(offset) = static_cast<uint8_t>(value >> 8);
    bytes_.at(offset + 1) = static_cast<uint8_t>(value & 0xff);
    return *this;
  }
  EepromBuilder& S16(size_t offset, int16_t value) {
    return U16(offset, static_cast<uint16_t>(value));
  }
  // ASCII padded with spaces to `length`.
  EepromBuilder& Text(size_t offset, size_t length, const std::string& text) {
    for (size_t i = 0; i < length; ++i) {
      bytes_.at(offset + i) = i < text.size() ? static_cast<uint8_t>(text[i]) : ' ';
    }
    return *this;
  }
  // Four thresholds from `base`: high alarm, low alarm, high warning, low warning.
  EepromBuilder& Thresholds(size_t base, uint16_t high_alarm, uint16_t low_alarm,
                            uint16_t high_warning, uint16_t low_warning) {
    return U16(base, high_alarm)
        .U16(base + 2, low_alarm)
        .U16(base + 4, high_warning)
        .U16(base + 6, low_warning);
  }
  std::vector<uint8_t> bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// Page 03h byte b (128..255) of a 640-byte SFF-8636 image sits at 384 + b.
constexpr size_t Sff03(size_t byte) { return 384 + byte; }
// CMIS page 01h, 02h and 11h in the image: 128 * slot + byte.
constexpr size_t Cmis01(size_t byte) { return 128 + byte; }
constexpr size_t Cmis02(size_t byte) { return 256 + byte; }
constexpr size_t Cmis11(size_t byte) { return 512 + byte; }

// A QSFP28 100G AOC, 3 m, as a 640-byte ETHTOOL_GMODULEEEPROM read.
EepromBuilder Qsfp28Aoc() {
  EepromBuilder image(640);
  image
      .Byte(0, 0x11)                   // SFF-8024 identifier: QSFP28
      .Byte(2, 0x00)                   // paged memory, data ready
      .S16(22, 9088)                   // temperature: 35.5 C in 1/256 C
      .U16(26, 32950)                  // Vcc: 3.295 V in 100 uV
      .U16(34, 9000)                   // Rx power lane 1: 0.9 mW in 0.1 uW
      .U16(36, 200)                    // lane 2: 0.02 mW
      .U16(38, 11000)                  // lane 3: 1.1 mW
      .U16(40, 5000)                   // lane 4: 0.5 mW
      .U16(42, 3250)                   // Tx bias lane 1: 6.5 mA in 2 uA
      .U16(44, 3300)                   // 6.6 mA
      .U16(46, 3350)                   // 6.7 mA
      .U16(48, 3400)                   // 6.8 mA
      .U16(50, 8000)                   // Tx power lane 1: 0.8 mW
      .U16(52, 8100)                   // 0.81
      .U16(54, 8200)                   // 0.82
      .U16(56, 8300)                   // 0.83
      .Byte(128, 0x11)                 // page 00h identifier
      .Byte(130, 0x23)                 // connector: no separable connector
      .Byte(146, 3)                    // cable assembly length: 3 m
      .Byte(147, 0x00)                 // transmitter technology: 850 nm VCSEL
      .Text(148, 16, "Mellanox")       // vendor name
      .Text(168, 16, "MFA1A00-C003")   // part number
      .Text(184, 2, "B2")              // revision
      .Byte(192, 0x01)                 // extended compliance: 100G AOC
      .Text(196, 16, "MT2012FT01234")  // serial
      .Byte(220, 0x0c)                 // diagnostics: Rx average power, Tx power
      .Thresholds(Sff03(128), 75 * 256, static_cast<uint16_t>(-5 * 256), 70 * 256, 0)
      .Thresholds(Sff03(144), 36300, 29700, 34650, 31350)  // 3.63, 2.97, 3.465, 3.135 V
      .Thresholds(Sff03(176), 34000, 500, 22000, 1000)     // Rx: 3.4, 0.05, 2.2, 0.1 mW
      .Thresholds(Sff03(184), 6000, 1000, 5000, 1500)      // bias: 12, 2, 10, 3 mA
      .Thresholds(Sff03(192), 35000, 1000, 25000, 2000);   // Tx: 3.5, 0.1, 2.5, 0.2 mW
  return image;
}

void ExpectThresholds(const v1::ModuleThresholds& limits, double high_alarm, double low_alarm,
                      double high_warning, double low_warning) {
  EXPECT_DOUBLE_EQ(limits.high_alarm(), high_alarm);
  EXPECT_DOUBLE_EQ(limits.low_alarm(), low_alarm);
  EXPECT_DOUBLE_EQ(limits.high_warning(), high_warning);
  EXPECT_DOUBLE_EQ(limits.low_warning(), low_warning);
}

TEST(ModuleEeprom, Qsfp28AocDecodesIdentityMonitorsAndThresholds) {
  const v1::CableModule module = DecodeModuleEeprom(Qsfp28Aoc().bytes());
  EXPECT_EQ(module.identifier_code(), 0x11u);
  EXPECT_EQ(module.identifier(), "QSFP28");
  EXPECT_EQ(module.management(), "SFF-8636");
  EXPECT_EQ(module.media(), "AOC");
  EXPECT_EQ(module.vendor(), "Mellanox");
  EXPECT_EQ(module.part_number(), "MFA1A00-C003");
  EXPECT_EQ(module.serial(), "MT2012FT01234");
  EXPECT_EQ(module.revision(), "B2");
  EXPECT_DOUBLE_EQ(module.length_m(), 3);
  EXPECT_DOUBLE_EQ(module.temperature_c(), 35.5);
  EXPECT_DOUBLE_EQ(module.voltage_v(), 3.295);
  ASSERT_EQ(module.lanes_size(), 4);
  const double rx[] = {0.9, 0.02, 1.1, 0.5};
  for (int i = 0; i < 4; ++i) {
    const v1::ModuleLane& lane = module.lanes(i);
    EXPECT_EQ(lane.lane(), static_cast<uint32_t>(i + 1));
    EXPECT_DOUBLE_EQ(lane.rx_power_mw(), rx[i]);
    EXPECT_DOUBLE_EQ(lane.tx_bias_ma(), 6.5 + 0.1 * i);
    EXPECT_DOUBLE_EQ(lane.tx_power_mw(), 0.8 + 0.01 * i);
  }
  ExpectThresholds(module.temperature_limits(), 75, -5, 70, 0);
  ExpectThresholds(module.voltage_limits(), 3.63, 2.97, 3.465, 3.135);
  ExpectThresholds(module.rx_power_limits(), 3.4, 0.05, 2.2, 0.1);
  ExpectThresholds(module.tx_bias_limits(), 12, 2, 10, 3);
  ExpectThresholds(module.tx_power_limits(), 3.5, 0.1, 2.5, 0.2);
  EXPECT_EQ(module.unknowns_size(), 0) << module.DebugString();
}

TEST(ModuleEeprom, NegativeTemperatureIsSigned) {
  auto image = Qsfp28Aoc().S16(22, -2560).bytes();  // -10 C
  EXPECT_DOUBLE_EQ(DecodeModuleEeprom(image).temperature_c(), -10);
}

TEST(ModuleEeprom, TransceiverWithoutTxPowerAndSeparableConnector) {
  auto image = Qsfp28Aoc().Byte(130, 0x0c).Byte(146, 0).Byte(220, 0x08).bytes();  // MPO
  const v1::CableModule module = DecodeModuleEeprom(image);
  EXPECT_EQ(module.media(), "optical");
  EXPECT_FALSE(module.has_length_m());
  ASSERT_NE(FindUnknown(module.unknowns(), "length_m"), nullptr);
  ASSERT_NE(FindUnknown(module.unknowns(), "tx_power_mw"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "tx_power_mw")->reason(), HasSubstr("byte 220"));
  ASSERT_EQ(module.lanes_size(), 4);
  EXPECT_FALSE(module.lanes(0).has_tx_power_mw());
  EXPECT_TRUE(module.lanes(0).has_rx_power_mw());
}

TEST(ModuleEeprom, Sff8636CopperTechnologiesAreDacOrAcc) {
  auto dac = DecodeModuleEeprom(Qsfp28Aoc().Byte(147, 0xa0).bytes());
  EXPECT_EQ(dac.media(), "DAC");
  EXPECT_FALSE(dac.has_temperature_c());
  EXPECT_EQ(dac.lanes_size(), 0);
  EXPECT_FALSE(dac.has_temperature_limits());
  ASSERT_NE(FindUnknown(dac.unknowns(), "monitors"), nullptr);
  EXPECT_EQ(DecodeModuleEeprom(Qsfp28Aoc().Byte(147, 0xb0).bytes()).media(), "DAC");
  EXPECT_EQ(DecodeModuleEeprom(Qsfp28Aoc().Byte(147, 0xc0).bytes()).media(), "ACC");
  EXPECT_EQ(DecodeModuleEeprom(Qsfp28Aoc().Byte(147, 0xf0).bytes()).media(), "ACC");
}

TEST(ModuleEeprom, QsfpAndQsfpPlusIdentifiers) {
  EXPECT_EQ(DecodeModuleEeprom(Qsfp28Aoc().Byte(0, 0x0c).bytes()).identifier(), "QSFP");
  EXPECT_EQ(DecodeModuleEeprom(Qsfp28Aoc().Byte(0, 0x0d).bytes()).identifier(), "QSFP+");
}

TEST(ModuleEeprom, Sff8636WithoutPage03HasNoThresholds) {
  auto image = Qsfp28Aoc().bytes();
  image.resize(256);  // ETH_MODULE_SFF_8636_LEN: lower page and page 00h only
  const v1::CableModule module = DecodeModuleEeprom(image);
  EXPECT_EQ(module.serial(), "MT2012FT01234");
  EXPECT_EQ(module.lanes_size(), 4);
  EXPECT_FALSE(module.has_rx_power_limits());
  ASSERT_NE(FindUnknown(module.unknowns(), "thresholds"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "thresholds")->reason(), HasSubstr("256 bytes"));
}

TEST(ModuleEeprom, Sff8636FlatMemoryHasNoPage03) {
  const v1::CableModule module = DecodeModuleEeprom(Qsfp28Aoc().Byte(2, 0x04).bytes());
  EXPECT_FALSE(module.has_temperature_limits());
  ASSERT_NE(FindUnknown(module.unknowns(), "thresholds"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "thresholds")->reason(), HasSubstr("flat memory"));
}

TEST(ModuleEeprom, DataNotReadyLeavesMonitorsUnknown) {
  const v1::CableModule module = DecodeModuleEeprom(Qsfp28Aoc().Byte(2, 0x01).bytes());
  EXPECT_FALSE(module.has_temperature_c());
  EXPECT_EQ(module.lanes_size(), 0);
  ASSERT_NE(FindUnknown(module.unknowns(), "monitors"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "monitors")->reason(), HasSubstr("Data_Not_Ready"));
  EXPECT_EQ(module.vendor(), "Mellanox");
}

// A QSFP-DD passive copper cable, 2.5 m: flat memory, 256 bytes.
TEST(ModuleEeprom, QsfpDdDac) {
  EepromBuilder image(256);
  image.Byte(0, 0x18)
      .Byte(2, 0x80)  // flat memory
      .Byte(128, 0x18)
      .Text(129, 16, "NVIDIA")
      .Text(148, 16, "MCP1660-W02AE26")
      .Text(164, 2, "A3")
      .Text(166, 16, "MT2230VS00123")
      .Byte(202, 0x19)   // length: multiplier 00 (0.1 m) x 25
      .Byte(203, 0x23)   // no separable connector
      .Byte(212, 0x0a);  // copper cable, unequalized
  const v1::CableModule module = DecodeModuleEeprom(image.bytes());
  EXPECT_EQ(module.identifier(), "QSFP-DD");
  EXPECT_EQ(module.management(), "CMIS");
  EXPECT_EQ(module.media(), "DAC");
  EXPECT_EQ(module.vendor(), "NVIDIA");
  EXPECT_EQ(module.part_number(), "MCP1660-W02AE26");
  EXPECT_EQ(module.revision(), "A3");
  EXPECT_EQ(module.serial(), "MT2230VS00123");
  EXPECT_DOUBLE_EQ(module.length_m(), 2.5);
  EXPECT_FALSE(module.has_temperature_c());
  EXPECT_EQ(module.lanes_size(), 0);
  ASSERT_NE(FindUnknown(module.unknowns(), "monitors"), nullptr);
}

TEST(ModuleEeprom, CmisLengthMultipliers) {
  auto length = [](uint8_t raw, uint8_t technology = 0x0b) {
    EepromBuilder image(256);
    image.Byte(0, 0x18).Byte(2, 0x80).Byte(202, raw).Byte(212, technology);
    return DecodeModuleEeprom(image.bytes());
  };
  EXPECT_DOUBLE_EQ(length(0x41).length_m(), 1);    // 01: 1 m units
  EXPECT_DOUBLE_EQ(length(0x83).length_m(), 30);   // 10: 10 m units
  EXPECT_DOUBLE_EQ(length(0xc2).length_m(), 200);  // 11: 100 m units
  EXPECT_FALSE(length(0xff).has_length_m());       // beyond 6.3 km
  EXPECT_EQ(length(0x41).media(), "DAC");          // 0x0b: passive equalized copper
  EXPECT_EQ(length(0x41, 0x0e).media(), "ACC");    // near-end active equalizers
}

// An OSFP 400G optical transceiver with the pages the netlink read gives.
EepromBuilder OsfpOptical() {
  EepromBuilder image(768);
  image.Byte(0, 0x19)
      .Byte(2, 0x00)   // paged memory
      .S16(14, 12352)  // 48.25 C
      .U16(16, 33000)  // 3.3 V
      .Byte(128, 0x19)
      .Text(129, 16, "NVIDIA")
      .Text(148, 16, "MMA4Z00-NS")
      .Text(164, 2, "B1")
      .Text(166, 16, "MT2304FT05678")
      .Byte(202, 0x00)                 // separable: no assembly length
      .Byte(203, 0x0c)                 // MPO
      .Byte(212, 0x00)                 // 850 nm VCSEL
      .Byte(Cmis01(160), 0x07 | 0x08)  // bias, Tx and Rx power monitors; bias scale code 01
      .Thresholds(Cmis02(128), 80 * 256, static_cast<uint16_t>(-5 * 256), 75 * 256, 0)
      .Thresholds(Cmis02(136), 36300, 29700, 34650, 31350)
      .Thresholds(Cmis02(176), 40000, 500, 32000, 1000)   // Tx power
      .Thresholds(Cmis02(184), 30000, 2000, 25000, 4000)  // bias, raw before the scale
      .Thresholds(Cmis02(192), 40000, 400, 32000, 800);   // Rx power
  for (int lane = 0; lane < 8; ++lane) {
    image
        .U16(Cmis11(154 + 2 * lane), static_cast<uint16_t>(10000 + 100 * lane))  // Tx power
        .U16(Cmis11(170 + 2 * lane), 6000)                                       // bias raw
        .U16(Cmis11(186 + 2 * lane), static_cast<uint16_t>(7000 + 100 * lane));  // Rx power
  }
  return image;
}

TEST(ModuleEeprom, OsfpOpticalWithPages01h02h11h) {
  const v1::CableModule module = DecodeModuleEeprom(OsfpOptical().bytes());
  EXPECT_EQ(module.identifier(), "OSFP");
  EXPECT_EQ(module.management(), "CMIS");
  EXPECT_EQ(module.media(), "optical");
  EXPECT_EQ(module.part_number(), "MMA4Z00-NS");
  EXPECT_EQ(module.serial(), "MT2304FT05678");
  EXPECT_DOUBLE_EQ(module.temperature_c(), 48.25);
  EXPECT_DOUBLE_EQ(module.voltage_v(), 3.3);
  ASSERT_EQ(module.lanes_size(), 8);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(module.lanes(i).lane(), static_cast<uint32_t>(i + 1));
    EXPECT_DOUBLE_EQ(module.lanes(i).tx_power_mw(), 1.0 + 0.01 * i);
    EXPECT_DOUBLE_EQ(module.lanes(i).rx_power_mw(), 0.7 + 0.01 * i);
    // ethtool's cmis_tx_bias_mul: scale code 01 shifts the raw 6000 right by one.
    EXPECT_DOUBLE_EQ(module.lanes(i).tx_bias_ma(), 6.0);
  }
  ExpectThresholds(module.temperature_limits(), 80, -5, 75, 0);
  ExpectThresholds(module.voltage_limits(), 3.63, 2.97, 3.465, 3.135);
  ExpectThresholds(module.tx_power_limits(), 4, 0.05, 3.2, 0.1);
  ExpectThresholds(module.tx_bias_limits(), 30, 2, 25, 4);
  ExpectThresholds(module.rx_power_limits(), 4, 0.04, 3.2, 0.08);
  ASSERT_NE(FindUnknown(module.unknowns(), "length_m"), nullptr);
}

TEST(ModuleEeprom, CmisMonitorsOnlyWhereAdvertised) {
  auto image = OsfpOptical().Byte(Cmis01(160), 0x04).bytes();  // Rx power only
  const v1::CableModule module = DecodeModuleEeprom(image);
  ASSERT_EQ(module.lanes_size(), 8);
  EXPECT_TRUE(module.lanes(0).has_rx_power_mw());
  EXPECT_FALSE(module.lanes(0).has_tx_power_mw());
  EXPECT_FALSE(module.lanes(0).has_tx_bias_ma());
}

TEST(ModuleEeprom, QsfpCmisHasFourLanes) {
  const v1::CableModule module = DecodeModuleEeprom(OsfpOptical().Byte(0, 0x1e).bytes());
  EXPECT_EQ(module.lanes_size(), 4);
}

TEST(ModuleEeprom, CmisFromTheLegacyIoctlSaysWhatNeedsNetlink) {
  auto image = OsfpOptical().bytes();
  image.resize(256);
  const v1::CableModule module = DecodeModuleEeprom(image);
  EXPECT_EQ(module.serial(), "MT2304FT05678");
  EXPECT_DOUBLE_EQ(module.temperature_c(), 48.25);
  EXPECT_EQ(module.lanes_size(), 0);
  ASSERT_NE(FindUnknown(module.unknowns(), "lanes"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "lanes")->reason(), HasSubstr("netlink"));
  ASSERT_NE(FindUnknown(module.unknowns(), "thresholds"), nullptr);
}

TEST(ModuleEeprom, TruncatedImageKeepsWhatItCovers) {
  auto image = Qsfp28Aoc().bytes();
  image.resize(100);
  const v1::CableModule module = DecodeModuleEeprom(image);
  EXPECT_EQ(module.identifier(), "QSFP28");
  EXPECT_DOUBLE_EQ(module.temperature_c(), 35.5);
  EXPECT_TRUE(module.vendor().empty());
  ASSERT_NE(FindUnknown(module.unknowns(), "vendor"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "vendor")->reason(), HasSubstr("100 bytes"));
  ASSERT_NE(FindUnknown(module.unknowns(), "media"), nullptr);

  image.resize(30);
  const v1::CableModule shorter = DecodeModuleEeprom(image);
  EXPECT_FALSE(shorter.has_temperature_c());
  ASSERT_NE(FindUnknown(shorter.unknowns(), "monitors"), nullptr);
}

TEST(ModuleEeprom, EmptyImage) {
  const v1::CableModule module = DecodeModuleEeprom({});
  ASSERT_NE(FindUnknown(module.unknowns(), "identifier"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "identifier")->reason(), HasSubstr("no bytes"));
}

TEST(ModuleEeprom, AllOnesIsAnUnansweredRead) {
  const v1::CableModule module = DecodeModuleEeprom(std::vector<uint8_t>(640, 0xff));
  EXPECT_EQ(module.identifier_code(), 0xffu);
  EXPECT_TRUE(module.management().empty());
  ASSERT_NE(FindUnknown(module.unknowns(), "identifier"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "identifier")->reason(),
              HasSubstr("every byte reads 0xff"));
}

TEST(ModuleEeprom, UnknownIdentifierIsNamed) {
  auto image = Qsfp28Aoc().Byte(0, 0x03).bytes();  // SFP: SFF-8472, not decoded here
  const v1::CableModule module = DecodeModuleEeprom(image);
  EXPECT_EQ(module.identifier(), "unknown (0x03)");
  EXPECT_TRUE(module.vendor().empty());
  ASSERT_NE(FindUnknown(module.unknowns(), "identifier"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "identifier")->reason(),
              HasSubstr("identifier 0x03 is neither SFF-8636"));
}

TEST(ModuleEeprom, NonPrintableStringsAreEscapedAndSaid) {
  auto image = Qsfp28Aoc().Text(148, 16, std::string("Evil\x01\n", 6)).bytes();
  const v1::CableModule module = DecodeModuleEeprom(image);
  EXPECT_EQ(module.vendor(), "Evil\\x01\\x0a");
  ASSERT_NE(FindUnknown(module.unknowns(), "vendor"), nullptr);
  EXPECT_THAT(FindUnknown(module.unknowns(), "vendor")->reason(), HasSubstr("non-printable"));
}

TEST(ModuleEeprom, BlankSerialIsUnknown) {
  const v1::CableModule module = DecodeModuleEeprom(Qsfp28Aoc().Text(196, 16, "").bytes());
  EXPECT_TRUE(module.serial().empty());
  ASSERT_NE(FindUnknown(module.unknowns(), "serial"), nullptr);
}

// Random bytes of every length under each decoded identifier: no crash, no
// NaN or infinity anywhere in the result.
TEST(ModuleEeprom, RandomImagesDecodeToFiniteValues) {
  std::mt19937 random(36);
  const uint8_t identifiers[] = {0x0c, 0x0d, 0x11, 0x18, 0x19, 0x1e, 0x03, 0xff};
  for (int round = 0; round < 400; ++round) {
    std::vector<uint8_t> image(random() % 1000);
    for (auto& byte : image) byte = static_cast<uint8_t>(random());
    if (!image.empty()) image[0] = identifiers[round % 8];
    const v1::CableModule module = DecodeModuleEeprom(image);
    EXPECT_FALSE(FindNonFinite(module).has_value()) << module.DebugString();
    EXPECT_LE(module.lanes_size(), 8);
  }
}

}  // namespace
}  // namespace clustercert::agent::inventory
