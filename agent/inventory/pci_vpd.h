#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// A PCI function's Vital Product Data as the card's EEPROM holds it (PCI Local
// Bus spec 3.0 appendix I / PCIe base spec "Vital Product Data"): what names
// the physical part (serial number, part number, product name), so a swapped
// NIC or GPU is named by its identity and not only by a changed GUID.
struct PciVpd {
  std::string identifier;                        // large tag 0x82: the product name
  std::map<std::string, std::string> read_only;  // VPD-R (0x90) keyword -> value: PN, SN, EC, V0..
  std::optional<bool> checksum_ok;               // the RV keyword's checksum, when present
  std::vector<std::string> read_write_keywords;  // VPD-W (0x91) keywords, values not kept

  // The VPD-R value of `keyword`, or "" when absent.
  std::string Field(absl::string_view keyword) const;
};

// The most a VPD can hold: its address register has 15 bits.
inline constexpr size_t kMaxPciVpdBytes = 32768;

// Parses the bytes of sysfs `vpd`. Resources are walked by their tags: large
// ones (bit 7 set, a little-endian 16-bit length) 0x82 identifier, 0x90 VPD-R,
// 0x91 VPD-W, others skipped; small ones (length in bits 0..2) skipped until
// the end tag 0x78. VPD-R holds keywords of two ASCII characters and a length
// byte; RV's first data byte makes every byte from the start through it sum
// to zero. Values lose the trailing spaces and NULs vendors pad them with;
// bytes outside printable ASCII become '?'.
//
// NotFound when there is nothing to parse (empty, or an unprogrammed EEPROM
// reading 0x00/0xff); InvalidArgument, naming the offset, for anything else
// malformed: a first tag that is not the identifier, a length running past
// the data, a keyword that is not two ASCII letters or digits, no end tag.
absl::StatusOr<PciVpd> ParsePciVpd(absl::string_view bytes);

// Reads `sysfs_dir`/vpd (sysfs_dir is a host path such as
// /sys/bus/pci/devices/0000:41:00.0) and fills the function's
// serial_number (SN), part_number (PN), product_name (the identifier) and
// identity_source ("vpd", or why there is none). A missing file or an empty
// VPD is not an error (many functions have none); a file that cannot be read
// or parsed is an Unknown on `function` (field "serial_number").
void FillVpdIdentity(const SysfsView& view, absl::string_view sysfs_dir, v1::PciFunction& function);

// Sets each RDMA device's model from the VPD product name of its NIC function
// (matched by PCI address) when there is one; other devices keep theirs.
void SetRdmaModelsFromVpd(const std::vector<v1::PciFunction>& functions,
                          std::vector<v1::RdmaDevice>& devices);

}  // namespace clustercert::agent::inventory
