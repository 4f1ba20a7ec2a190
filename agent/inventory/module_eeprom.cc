#include "agent/inventory/module_eeprom.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "agent/inventory/unknowns.h"
#include "common/printable.h"

// Offsets and scalings below are SFF-8636 Rev 2.10a and CMIS Rev 5 as
// ethtool's decoder spells them (qsfp.h, cmis.h, sff-common.h of ethtool
// 6.x): each constant names its table or its ethtool define. Byte offsets of
// upper pages are given as the spec does, 128..255 within the page.
namespace clustercert::agent::inventory {
namespace {

constexpr size_t kPage = 128;

// SFF-8024 identifiers (byte 0; sff-common.h SFF8024_ID_*).
constexpr uint8_t kIdQsfp = 0x0c;
constexpr uint8_t kIdQsfpPlus = 0x0d;
constexpr uint8_t kIdQsfp28 = 0x11;
constexpr uint8_t kIdQsfpDd = 0x18;
constexpr uint8_t kIdOsfp = 0x19;
constexpr uint8_t kIdQsfpCmis = 0x1e;

// SFF-8024 connector "no separable connector" (SFF8024_CTOR_NO_SEPARABLE):
// the fibre or copper is part of the module, a cable assembly.
constexpr uint8_t kConnectorNoSeparable = 0x23;

// SFF-8636 Table 6-2/6-3 (lower page) and 6-15 (upper page 00h): qsfp.h.
namespace sff {
constexpr size_t kStatus2 = 0x02;          // SFF8636_STATUS_2_OFFSET
constexpr uint8_t kDataNotReady = 1 << 0;  // SFF8636_STATUS_DATA_NOT_READY
constexpr uint8_t kFlatMemory = 1 << 2;    // SFF8636_STATUS_PAGE_3_PRESENT: set = flat, no page 03h
constexpr size_t kTemperature = 0x16;      // SFF8636_TEMP_CURR, signed 1/256 C
constexpr size_t kVcc = 0x1a;              // SFF8636_VCC_CURR, 100 uV
constexpr size_t kRxPower1 = 0x22;         // SFF8636_RX_PWR_1_OFFSET, 0.1 uW, lanes 2 bytes apart
constexpr size_t kTxBias1 = 0x2a;          // SFF8636_TX_BIAS_1_OFFSET, 2 uA
constexpr size_t kTxPower1 = 0x32;         // SFF8636_TX_PWR_1_OFFSET, 0.1 uW
constexpr size_t kLastMonitorByte = 0x39;  // end of TX_PWR_4
constexpr size_t kConnector = 0x82;        // SFF8636_CTOR_OFFSET
constexpr size_t kCableLength = 0x92;      // SFF8636_CBL_LEN_OFFSET, 1 m units
constexpr size_t kDeviceTech = 0x93;       // SFF8636_DEVICE_TECH_OFFSET, bits 7-4
constexpr size_t kVendorName = 0x94;       // 148-163
constexpr size_t kPartNumber = 0xa8;       // 168-183
constexpr size_t kRevision = 0xb8;         // 184-185
constexpr size_t kSerial = 0xc4;           // 196-211
constexpr size_t kDiagType = 0xdc;         // SFF8636_DIAG_TYPE_OFFSET
constexpr uint8_t kTxPowerReported = 1 << 2;  // SFF8636_TX_PWR_TYPE_AVG_PWR
// Page 03h module and channel thresholds (Table 6-26/6-27): high alarm, low
// alarm, high warning, low warning, 2 bytes each from the base.
constexpr size_t kTempThresholds = 0x80;     // SFF8636_TEMP_HALRM
constexpr size_t kVccThresholds = 0x90;      // SFF8636_VCC_HALRM
constexpr size_t kRxPowerThresholds = 0xb0;  // SFF8636_RX_PWR_HALRM
constexpr size_t kTxBiasThresholds = 0xb8;   // SFF8636_TX_BIAS_HALRM
constexpr size_t kTxPowerThresholds = 0xc0;  // SFF8636_TX_PWR_HALRM
constexpr int kLanes = 4;
}  // namespace sff

// CMIS Rev 5 Table 8-4/8-9 (lower page), 8-23 (page 00h), 8-40ff (page 01h),
// 8-62 (page 02h), 8-79 (page 11h): cmis.h.
namespace cmis {
constexpr size_t kMemoryModel = 0x02;        // CMIS_MEMORY_MODEL_OFFSET
constexpr uint8_t kFlatMemory = 0x80;        // CMIS_MEMORY_MODEL_MASK: set = flat, page 00h only
constexpr size_t kTemperature = 0x0e;        // CMIS_CURR_TEMP_OFFSET, signed 1/256 C
constexpr size_t kVcc = 0x10;                // CMIS_CURR_VCC_OFFSET, 100 uV
constexpr size_t kVendorName = 0x81;         // 129-144
constexpr size_t kPartNumber = 0x94;         // 148-163
constexpr size_t kRevision = 0xa4;           // 164-165
constexpr size_t kSerial = 0xa6;             // 166-181
constexpr size_t kCableLength = 0xca;        // CMIS_CBL_ASM_LEN_OFFSET
constexpr uint8_t kLengthOver6300m = 0xff;   // CMIS_6300M_MAX_LEN
constexpr size_t kConnector = 0xcb;          // CMIS_CTOR_OFFSET
constexpr size_t kMediaTech = 0xd4;          // CMIS_MEDIA_INTF_TECH_OFFSET
constexpr size_t kMonitorAdvert = 0xa0;      // page 01h CMIS_DIAG_CHAN_ADVER_OFFSET
constexpr uint8_t kTxBiasMonitor = 0x01;     // CMIS_TX_BIAS_MON_MASK
constexpr uint8_t kTxPowerMonitor = 0x02;    // CMIS_TX_PWR_MON_MASK
constexpr uint8_t kRxPowerMonitor = 0x04;    // CMIS_RX_PWR_MON_MASK
constexpr uint8_t kTxBiasScaleMask = 0x18;   // CMIS_TX_BIAS_MUL_MASK: 00 x1, 01 x2, 10 x4
constexpr size_t kTempThresholds = 0x80;     // page 02h CMIS_TEMP_HALRM_OFFSET
constexpr size_t kVccThresholds = 0x88;      // CMIS_VCC_HALRM_OFFSET
constexpr size_t kTxPowerThresholds = 0xb0;  // CMIS_TX_PWR_HALRM_OFFSET
constexpr size_t kTxBiasThresholds = 0xb8;   // CMIS_TX_BIAS_HALRM_OFFSET
constexpr size_t kRxPowerThresholds = 0xc0;  // CMIS_RX_PWR_HALRM_OFFSET
constexpr size_t kTxPower1 = 0x9a;           // page 11h CMIS_TX_PWR_OFFSET
constexpr size_t kTxBias1 = 0xaa;            // CMIS_TX_BIAS_OFFSET
constexpr size_t kRxPower1 = 0xba;           // CMIS_RX_PWR_OFFSET
}  // namespace cmis

// The image, bounded: every read checks that the bytes are there.
class Image {
 public:
  explicit Image(absl::Span<const uint8_t> bytes)
      : bytes_(bytes.subspan(0, std::min(bytes.size(), kModuleEepromMaxBytes))) {}

  size_t size() const { return bytes_.size(); }
  bool Covers(size_t offset, size_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }
  // Whether upper page `slot` (0 for 00h) is in the image in full.
  bool HasPage(size_t slot) const { return Covers(kPage * (slot + 1), kPage); }
  uint8_t Byte(size_t offset) const { return bytes_[offset]; }
  // Monitors and thresholds are big-endian, MSB at the lower address.
  uint16_t U16(size_t offset) const {
    return static_cast<uint16_t>((bytes_[offset] << 8) | bytes_[offset + 1]);
  }
  int16_t S16(size_t offset) const { return static_cast<int16_t>(U16(offset)); }
  absl::string_view Text(size_t offset, size_t length) const {
    return absl::string_view(reinterpret_cast<const char*>(bytes_.data()) + offset, length);
  }

 private:
  absl::Span<const uint8_t> bytes_;
};

// Byte `offset` (128..255) of the upper page in `slot`, as an image offset.
constexpr size_t Upper(size_t slot, size_t offset) { return kPage * slot + offset; }

// sff-common.h: temperature in 1/256 C (signed), Vcc in 100 uV, bias in
// 2 uA, optical power in 0.1 uW.
double Celsius(const Image& image, size_t offset) { return image.S16(offset) / 256.0; }
double Volts(const Image& image, size_t offset) { return image.U16(offset) / 10000.0; }
double Milliwatts(const Image& image, size_t offset) { return image.U16(offset) / 10000.0; }
double Milliamps(const Image& image, size_t offset) { return image.U16(offset) / 500.0; }

using Scale = double (*)(const Image&, size_t);

std::string ByteRange(size_t first, size_t length) {
  return absl::StrCat("EEPROM bytes ", first, "-", first + length - 1);
}

std::string ShortImage(const Image& image, absl::string_view what, size_t first, size_t length) {
  return absl::StrCat("the EEPROM read returned ", image.size(), " bytes, which stop before ", what,
                      " (bytes ", first, "-", first + length - 1, ")");
}

// A vendor string: ASCII padded with spaces (SFF-8636 6.3.x, CMIS 8.3.x).
// Non-printable bytes are escaped and said, so a corrupt EEPROM is visible.
void DecodeText(const Image& image, size_t offset, size_t length, absl::string_view field,
                std::string* out, v1::CableModule& module) {
  if (!image.Covers(offset, length)) {
    AddUnknown(module, field, ByteRange(offset, length),
               ShortImage(image, "upper page 00h", kPage, kPage));
    return;
  }
  absl::string_view raw = image.Text(offset, length);
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\0')) raw.remove_suffix(1);
  while (!raw.empty() && raw.front() == ' ') raw.remove_prefix(1);
  if (raw.empty()) {
    AddUnknown(module, field, ByteRange(offset, length), "blank in the module's EEPROM");
    return;
  }
  *out = PrintableText(raw, length);
  if (*out != raw) {
    AddUnknown(module, field, ByteRange(offset, length),
               absl::StrCat("non-printable bytes, shown escaped (\"", *out,
                            "\"): a corrupt or counterfeit EEPROM"));
  }
}

// High alarm, low alarm, high warning, low warning: 2 bytes each from `base`.
void DecodeThresholds(const Image& image, size_t base, Scale scale,
                      v1::ModuleThresholds* thresholds) {
  thresholds->set_high_alarm(scale(image, base));
  thresholds->set_low_alarm(scale(image, base + 2));
  thresholds->set_high_warning(scale(image, base + 4));
  thresholds->set_low_warning(scale(image, base + 6));
}

// Shared SFF-8636 / CMIS reading of the media from the transmitter
// technology code (SFF-8636 Table 6-19 bits 7-4; CMIS Table 8-36, SFF-8024
// media interface technology): 0xA passive unequalized and 0xB passive
// equalized copper are DACs, 0xC..0xF copper with active equalizers ACCs;
// optics with no separable connector are AOCs.
std::string MediaOf(uint8_t technology, uint8_t connector) {
  if (technology == 0x0a || technology == 0x0b) return "DAC";
  if (technology >= 0x0c && technology <= 0x0f) return "ACC";
  if (technology > 0x0f) return "";
  return connector == kConnectorNoSeparable ? "AOC" : "optical";
}

// True when the module has no monitors to read (a passive copper cable).
bool IsPassiveCopper(const v1::CableModule& module) { return module.media() == "DAC"; }

void DecodeSffIdentity(const Image& image, v1::CableModule& module) {
  DecodeText(image, sff::kVendorName, 16, "vendor", module.mutable_vendor(), module);
  DecodeText(image, sff::kPartNumber, 16, "part_number", module.mutable_part_number(), module);
  DecodeText(image, sff::kSerial, 16, "serial", module.mutable_serial(), module);
  DecodeText(image, sff::kRevision, 2, "revision", module.mutable_revision(), module);
  if (!image.HasPage(0)) {
    AddUnknown(module, "media", ByteRange(sff::kDeviceTech, 1),
               ShortImage(image, "upper page 00h", kPage, kPage));
    return;
  }
  module.set_media(MediaOf(image.Byte(sff::kDeviceTech) >> 4, image.Byte(sff::kConnector)));
  const uint8_t length = image.Byte(sff::kCableLength);
  if (length != 0) {
    module.set_length_m(length);
  } else {
    AddUnknown(module, "length_m", ByteRange(sff::kCableLength, 1),
               "0: a separable transceiver (the fibre's length is not in the module) or a length "
               "its vendor did not set");
  }
}

void DecodeSffMonitors(const Image& image, v1::CableModule& module) {
  const std::string path = ByteRange(0, sff::kLastMonitorByte + 1);
  if (!image.Covers(0, sff::kLastMonitorByte + 1)) {
    AddUnknown(module, "monitors", path,
               ShortImage(image, "the monitors", 0, sff::kLastMonitorByte + 1));
    return;
  }
  if ((image.Byte(sff::kStatus2) & sff::kDataNotReady) != 0) {
    AddUnknown(module, "monitors", ByteRange(sff::kStatus2, 1),
               "the module reports Data_Not_Ready (byte 2 bit 0): its monitors are not valid "
               "yet; read it again");
    return;
  }
  module.set_temperature_c(Celsius(image, sff::kTemperature));
  module.set_voltage_v(Volts(image, sff::kVcc));
  const bool tx_power =
      image.HasPage(0) && (image.Byte(sff::kDiagType) & sff::kTxPowerReported) != 0;
  if (!tx_power) {
    AddUnknown(module, "tx_power_mw", ByteRange(sff::kDiagType, 1),
               image.HasPage(0) ? "the module does not report Tx power (byte 220 bit 2 clear)"
                                : ShortImage(image, "upper page 00h", kPage, kPage));
  }
  for (size_t lane = 0; lane < size_t{sff::kLanes}; ++lane) {
    v1::ModuleLane* out = module.add_lanes();
    out->set_lane(static_cast<uint32_t>(lane + 1));
    out->set_rx_power_mw(Milliwatts(image, sff::kRxPower1 + 2 * lane));
    out->set_tx_bias_ma(Milliamps(image, sff::kTxBias1 + 2 * lane));
    if (tx_power) out->set_tx_power_mw(Milliwatts(image, sff::kTxPower1 + 2 * lane));
  }
}

void DecodeSffThresholds(const Image& image, v1::CableModule& module) {
  const size_t page03 = Upper(kSff8636Page03Slot, kPage);
  if (image.Covers(sff::kStatus2, 1) && (image.Byte(sff::kStatus2) & sff::kFlatMemory) != 0) {
    AddUnknown(module, "thresholds", ByteRange(sff::kStatus2, 1),
               "the module has flat memory (byte 2 bit 2): it has no page 03h thresholds");
    return;
  }
  if (!image.HasPage(kSff8636Page03Slot)) {
    AddUnknown(module, "thresholds", ByteRange(page03, kPage),
               ShortImage(image, "page 03h", page03, kPage));
    return;
  }
  auto at = [](size_t offset) { return Upper(kSff8636Page03Slot, offset); };
  DecodeThresholds(image, at(sff::kTempThresholds), Celsius, module.mutable_temperature_limits());
  DecodeThresholds(image, at(sff::kVccThresholds), Volts, module.mutable_voltage_limits());
  DecodeThresholds(image, at(sff::kRxPowerThresholds), Milliwatts,
                   module.mutable_rx_power_limits());
  DecodeThresholds(image, at(sff::kTxBiasThresholds), Milliamps, module.mutable_tx_bias_limits());
  DecodeThresholds(image, at(sff::kTxPowerThresholds), Milliwatts,
                   module.mutable_tx_power_limits());
}

void DecodeSff8636(const Image& image, v1::CableModule& module) {
  module.set_management("SFF-8636");
  DecodeSffIdentity(image, module);
  if (IsPassiveCopper(module)) {
    AddUnknown(module, "monitors", ByteRange(sff::kDeviceTech, 1),
               "a passive copper cable has no monitors or thresholds");
    return;
  }
  DecodeSffMonitors(image, module);
  DecodeSffThresholds(image, module);
}

// CMIS Table 8-31: bits 7-6 multiply bits 5-0 by 0.1, 1, 10 or 100 m.
void DecodeCmisLength(const Image& image, v1::CableModule& module) {
  const uint8_t raw = image.Byte(cmis::kCableLength);
  const std::string path = ByteRange(cmis::kCableLength, 1);
  if (raw == cmis::kLengthOver6300m) {
    AddUnknown(module, "length_m", path, "longer than 6.3 km (0xff)");
    return;
  }
  static constexpr double kMultiplier[4] = {0.1, 1, 10, 100};
  const double length = (raw & 0x3f) * kMultiplier[raw >> 6];
  if (length == 0) {
    AddUnknown(module, "length_m", path,
               "0: a separable transceiver (the fibre's length is not in the module) or a length "
               "its vendor did not set");
    return;
  }
  module.set_length_m(length);
}

void DecodeCmisIdentity(const Image& image, v1::CableModule& module) {
  DecodeText(image, cmis::kVendorName, 16, "vendor", module.mutable_vendor(), module);
  DecodeText(image, cmis::kPartNumber, 16, "part_number", module.mutable_part_number(), module);
  DecodeText(image, cmis::kSerial, 16, "serial", module.mutable_serial(), module);
  DecodeText(image, cmis::kRevision, 2, "revision", module.mutable_revision(), module);
  if (!image.HasPage(0)) {
    AddUnknown(module, "media", ByteRange(cmis::kMediaTech, 1),
               ShortImage(image, "page 00h", kPage, kPage));
    return;
  }
  const uint8_t technology = image.Byte(cmis::kMediaTech);
  module.set_media(MediaOf(technology, image.Byte(cmis::kConnector)));
  if (module.media().empty()) {
    AddUnknown(module, "media", ByteRange(cmis::kMediaTech, 1),
               absl::StrFormat("media interface technology 0x%02x is reserved", technology));
  }
  DecodeCmisLength(image, module);
}

// ethtool's cmis_tx_bias_mul: the advertised scale (page 01h byte 160 bits
// 4-3) shifts the raw bias right by 0, 1 or 2, so values match `ethtool -m`.
int CmisBiasShift(const Image& image) {
  const int code =
      (image.Byte(Upper(kCmisPage01Slot, cmis::kMonitorAdvert)) & cmis::kTxBiasScaleMask) >> 3;
  return code <= 2 ? code : 0;
}

double CmisBias(const Image& image, size_t offset) {
  return (image.U16(offset) >> CmisBiasShift(image)) / 500.0;
}

int CmisLanes(uint8_t identifier) { return identifier == kIdQsfpCmis ? 4 : 8; }

std::string CmisPageMissing(const Image& image, absl::string_view page, size_t slot) {
  if (image.Covers(cmis::kMemoryModel, 1) &&
      (image.Byte(cmis::kMemoryModel) & cmis::kFlatMemory) != 0) {
    return absl::StrCat("the module has flat memory (byte 2 bit 7): it has no page ", page);
  }
  return absl::StrCat(ShortImage(image, absl::StrCat("page ", page), Upper(slot, kPage), kPage),
                      "; the legacy ioctl reads only the first 256 bytes of a CMIS module, "
                      "reading page ",
                      page, " needs the kernel's netlink module-EEPROM page read");
}

void DecodeCmisLanes(const Image& image, v1::CableModule& module) {
  const size_t page11 = Upper(kCmisPage11Slot, kPage);
  if (!image.HasPage(kCmisPage01Slot) || !image.HasPage(kCmisPage11Slot)) {
    const bool no01 = !image.HasPage(kCmisPage01Slot);
    AddUnknown(module, "lanes", ByteRange(no01 ? Upper(kCmisPage01Slot, kPage) : page11, kPage),
               no01 ? CmisPageMissing(image, "01h", kCmisPage01Slot)
                    : CmisPageMissing(image, "11h", kCmisPage11Slot));
    return;
  }
  const uint8_t advert = image.Byte(Upper(kCmisPage01Slot, cmis::kMonitorAdvert));
  auto at = [](size_t offset) { return Upper(kCmisPage11Slot, offset); };
  const auto lanes = static_cast<size_t>(CmisLanes(static_cast<uint8_t>(module.identifier_code())));
  for (size_t lane = 0; lane < lanes; ++lane) {
    v1::ModuleLane* out = module.add_lanes();
    out->set_lane(static_cast<uint32_t>(lane + 1));
    if (advert & cmis::kTxBiasMonitor) {
      out->set_tx_bias_ma(CmisBias(image, at(cmis::kTxBias1 + 2 * lane)));
    }
    if (advert & cmis::kTxPowerMonitor) {
      out->set_tx_power_mw(Milliwatts(image, at(cmis::kTxPower1 + 2 * lane)));
    }
    if (advert & cmis::kRxPowerMonitor) {
      out->set_rx_power_mw(Milliwatts(image, at(cmis::kRxPower1 + 2 * lane)));
    }
  }
}

void DecodeCmisThresholds(const Image& image, v1::CableModule& module) {
  if (!image.HasPage(kCmisPage02Slot) || !image.HasPage(kCmisPage01Slot)) {
    AddUnknown(module, "thresholds", ByteRange(Upper(kCmisPage02Slot, kPage), kPage),
               CmisPageMissing(image, "02h", kCmisPage02Slot));
    return;
  }
  auto at = [](size_t offset) { return Upper(kCmisPage02Slot, offset); };
  DecodeThresholds(image, at(cmis::kTempThresholds), Celsius, module.mutable_temperature_limits());
  DecodeThresholds(image, at(cmis::kVccThresholds), Volts, module.mutable_voltage_limits());
  DecodeThresholds(image, at(cmis::kTxPowerThresholds), Milliwatts,
                   module.mutable_tx_power_limits());
  DecodeThresholds(image, at(cmis::kTxBiasThresholds), CmisBias, module.mutable_tx_bias_limits());
  DecodeThresholds(image, at(cmis::kRxPowerThresholds), Milliwatts,
                   module.mutable_rx_power_limits());
}

void DecodeCmis(const Image& image, v1::CableModule& module) {
  module.set_management("CMIS");
  DecodeCmisIdentity(image, module);
  if (IsPassiveCopper(module)) {
    AddUnknown(module, "monitors", ByteRange(cmis::kMediaTech, 1),
               "a passive copper cable has no monitors or thresholds");
    return;
  }
  if (image.Covers(0, cmis::kVcc + 2)) {
    module.set_temperature_c(Celsius(image, cmis::kTemperature));
    module.set_voltage_v(Volts(image, cmis::kVcc));
  } else {
    AddUnknown(module, "monitors", ByteRange(cmis::kTemperature, 4),
               ShortImage(image, "the module monitors", cmis::kTemperature, 4));
  }
  DecodeCmisLanes(image, module);
  DecodeCmisThresholds(image, module);
}

std::string IdentifierName(uint8_t identifier) {
  switch (identifier) {
    case kIdQsfp:
      return "QSFP";
    case kIdQsfpPlus:
      return "QSFP+";
    case kIdQsfp28:
      return "QSFP28";
    case kIdQsfpDd:
      return "QSFP-DD";
    case kIdOsfp:
      return "OSFP";
    case kIdQsfpCmis:
      return "QSFP+ (CMIS)";
    default:
      return absl::StrFormat("unknown (0x%02x)", identifier);
  }
}

// Why an identifier is not decoded; an EEPROM reading all 0xff or all 0 is
// an unanswered or unprogrammed read rather than a module of another kind.
std::string UndecodedReason(const Image& image, uint8_t identifier) {
  const size_t checked = std::min(image.size(), kPage);
  bool all_ff = true;
  bool all_zero = true;
  for (size_t i = 0; i < checked; ++i) {
    all_ff = all_ff && image.Byte(i) == 0xff;
    all_zero = all_zero && image.Byte(i) == 0x00;
  }
  if (all_ff) {
    return "every byte reads 0xff: the EEPROM did not answer (reseat the module and read again)";
  }
  if (all_zero) return "every byte reads 0: an unprogrammed or unreadable EEPROM";
  return absl::StrFormat(
      "identifier 0x%02x is neither SFF-8636 (0x0c, 0x0d, 0x11) nor CMIS (0x18, 0x19, 0x1e): "
      "its other fields cannot be located",
      identifier);
}

}  // namespace

bool IsSff8636Identifier(uint8_t identifier) {
  return identifier == kIdQsfp || identifier == kIdQsfpPlus || identifier == kIdQsfp28;
}

bool IsCmisIdentifier(uint8_t identifier) {
  return identifier == kIdQsfpDd || identifier == kIdOsfp || identifier == kIdQsfpCmis;
}

v1::CableModule DecodeModuleEeprom(absl::Span<const uint8_t> bytes) {
  const Image image(bytes);
  v1::CableModule module;
  if (image.size() == 0) {
    AddUnknown(module, "identifier", ByteRange(0, 1), "the EEPROM read returned no bytes");
    return module;
  }
  const uint8_t identifier = image.Byte(0);
  module.set_identifier_code(identifier);
  module.set_identifier(IdentifierName(identifier));
  if (IsSff8636Identifier(identifier)) {
    DecodeSff8636(image, module);
  } else if (IsCmisIdentifier(identifier)) {
    DecodeCmis(image, module);
  } else {
    AddUnknown(module, "identifier", ByteRange(0, 1), UndecodedReason(image, identifier));
  }
  return module;
}

}  // namespace clustercert::agent::inventory
