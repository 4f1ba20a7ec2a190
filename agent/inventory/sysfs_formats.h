#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert::agent::inventory {

// Pure parsers for the text formats the kernel prints in /sys (see
// shared/FACTS.md). They touch no files so every format, and every way a file
// can be truncated or garbled, is tested on plain strings. Each failure is
// InvalidArgument whose message starts with "unparsable: '<text>'", ready to
// be the reason of an Unknown entry.

// "4: ACTIVE", "5: LinkUp", "7: Phy Test" (ports/N/state, phys_state, node_type).
struct CodeAndName {
  uint32_t code = 0;
  std::string name;
};
absl::StatusOr<CodeAndName> ParseCodeAndName(absl::string_view text);

// ports/N/rate: "200 Gb/sec (4X HDR)", "2.5 Gb/sec (1X SDR)", and old kernels'
// "10 Gb/sec (4X)" with no speed name (speed_name stays empty).
struct LinkRate {
  double gbps = 0;
  uint32_t width = 0;
  std::string speed_name;
};
absl::StatusOr<LinkRate> ParseRate(absl::string_view text);

// "0x1a", "0x10de", "1a" (lid, sm_lid, vendor, class).
absl::StatusOr<uint32_t> ParseHexU32(absl::string_view text);

// A signed decimal with optional surrounding whitespace ("9000", " -1\n").
absl::StatusOr<int64_t> ParseInt(absl::string_view text);

// ports/N/gids/I: eight groups of four hex digits. `ipv4` is the dotted quad
// when the GID is IPv4-mapped (::ffff:a.b.c.d), empty otherwise.
struct GidInfo {
  std::string gid;  // lowercased
  bool is_zero = false;
  std::string ipv4;
};
absl::StatusOr<GidInfo> ParseGid(absl::string_view text);

// node_guid, sys_image_guid: four groups of four hex digits, returned lowercased.
absl::StatusOr<std::string> ParseGuid(absl::string_view text);

// current_link_speed / max_link_speed: "16.0 GT/s PCIe", "8 GT/s" (kernels
// <= 5.6), "2.5 GT/s PCIe". "Unknown" (link down) is an error.
struct PciLinkSpeed {
  double gts = 0;
  uint32_t gen = 0;  // 1 .. 6
};
absl::StatusOr<PciLinkSpeed> ParsePciLinkSpeed(absl::string_view text);

// True for a PCI function address "dddd:bb:dd.f" ("0000:41:00.0").
bool IsPciAddress(absl::string_view text);

// The last component of `path` that is a PCI function address, or "" when
// none is (virtual devices): "/sys/devices/pci0000:00/0000:00:04.0/virtio1/net/eth0"
// -> "0000:00:04.0".
std::string LastPciAddressInPath(absl::string_view path);

}  // namespace clustercert::agent::inventory
