#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// The most of a module's memory DecodeModuleEeprom reads: the lower page and
// five upper pages (CMIS 00h, 01h, 02h, 10h, 11h). Bytes past it are ignored.
inline constexpr size_t kModuleEepromMaxBytes = 768;

// Where each 128-byte upper page sits in an image: byte 128 + 128 * slot.
// SFF-8636 lays pages 00h..03h out in page order (what ETHTOOL_GMODULEEEPROM
// returns for a 640-byte read and `ethtool -m hex on` prints); CMIS adds
// banked page 11h (bank 0) after 10h, which the netlink page read supplies.
inline constexpr size_t kSff8636Page03Slot = 3;
inline constexpr size_t kCmisPage01Slot = 1;
inline constexpr size_t kCmisPage02Slot = 2;
inline constexpr size_t kCmisPage11Slot = 4;

// Decodes a transceiver's or cable's EEPROM image into its identity (the
// SFF-8024 identifier, media, vendor, part number, serial, revision, length),
// its digital monitors (temperature, supply voltage, per-lane Tx bias, Tx
// power and Rx power) and the module's own alarm and warning thresholds, for
// SFF-8636 (identifier 0x0c QSFP, 0x0d QSFP+, 0x11 QSFP28) and CMIS (0x18
// QSFP-DD, 0x19 OSFP, 0x1e QSFP+ with CMIS). Units: degrees C, V, mA, mW.
//
// The image is hostile: any length (only the pages it covers are read), any
// bytes. It never fails: whatever cannot be decoded (an unknown identifier,
// an image that stops before a page, a module whose data is not ready, a
// page the read did not cover, blank or non-printable strings) is an Unknown
// on the result with the reason, and non-printable bytes in strings are
// escaped (\xNN). Every value is an integer scaled by a constant, so none is
// NaN or infinite.
v1::CableModule DecodeModuleEeprom(absl::Span<const uint8_t> image);

// True for the identifiers DecodeModuleEeprom decodes as SFF-8636 / as CMIS.
bool IsSff8636Identifier(uint8_t identifier);
bool IsCmisIdentifier(uint8_t identifier);

}  // namespace clustercert::agent::inventory
