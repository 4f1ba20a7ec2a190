#include "agent/inventory/lldp_frame.h"

#include <arpa/inet.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/printable.h"

namespace clustercert::agent::inventory {
namespace {

constexpr uint16_t kEthertypeLldp = 0x88cc;
constexpr uint16_t kEthertypeVlan = 0x8100;
constexpr uint16_t kEthertypeQinQ = 0x88a8;
constexpr size_t kEthernetHeaderBytes = 14;

enum TlvType : int {
  kEnd = 0,
  kChassisId = 1,
  kPortId = 2,
  kTtl = 3,
  kPortDescription = 4,
  kSystemName = 5,
  kOrganisation = 127,
};

// Chassis ID subtypes (802.1AB 8.5.2.2) and port ID subtypes (8.5.3.2),
// named as lldpcli names them so both sources read alike.
constexpr const char* kChassisSubtypes[] = {nullptr, "chassis", "ifalias", "port",
                                            "mac",   "ip",      "ifname",  "local"};
constexpr const char* kPortSubtypes[] = {nullptr,  "ifalias",          "port", "mac", "ip",
                                         "ifname", "agent-circuit-id", "local"};

// The subtype's name, or nullptr for the reserved ones (0, 8..255).
template <size_t N>
const char* SubtypeName(const char* const (&names)[N], int subtype) {
  return subtype >= 0 && static_cast<size_t>(subtype) < N ? names[subtype] : nullptr;
}

constexpr int kChassisSubtypeMac = 4;
constexpr int kChassisSubtypeAddress = 5;
constexpr int kPortSubtypeMac = 3;
constexpr int kPortSubtypeAddress = 4;
constexpr int kPortSubtypeIfname = 5;
constexpr int kPortSubtypeLocal = 7;

uint16_t Be16(absl::string_view bytes, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(bytes[at]) << 8) |
                               static_cast<uint8_t>(bytes[at + 1]));
}

absl::Status Malformed(size_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed LLDP frame at byte ", offset, ": ", what));
}

std::string ColonHex(absl::string_view bytes) {
  std::string text;
  for (size_t i = 0; i < bytes.size(); ++i) {
    absl::StrAppendFormat(&text, "%s%02x", i == 0 ? "" : ":", static_cast<uint8_t>(bytes[i]));
  }
  return text;
}

// A string TLV's value as the inventory keeps it: trailing NULs (C
// strings sent with their terminator) dropped, other hidden bytes escaped.
std::string TlvText(absl::string_view value) {
  while (!value.empty() && value.back() == '\0') value.remove_suffix(1);
  return PrintableText(value, kMaxLldpStringBytes);
}

// A network-address ID: IANA address family 1 (IPv4) or 2 (IPv6), then
// the address; any other shape is shown as hex.
std::string AddressText(absl::string_view value) {
  char text[INET6_ADDRSTRLEN] = {};
  if (value.size() == 5 && value[0] == 1 &&
      ::inet_ntop(AF_INET, value.data() + 1, text, sizeof(text))) {
    return text;
  }
  if (value.size() == 17 && value[0] == 2 &&
      ::inet_ntop(AF_INET6, value.data() + 1, text, sizeof(text))) {
    return text;
  }
  return ColonHex(value);
}

struct Tlv {
  int type = 0;
  size_t offset = 0;  // of the TLV header in the frame
  absl::string_view value;
};

// The ID TLVs (chassis, port) share a shape: a subtype byte, then 1..255
// bytes of ID.
absl::Status CheckIdLength(const Tlv& tlv, absl::string_view name) {
  if (tlv.value.size() < 2 || tlv.value.size() > 256) {
    return Malformed(tlv.offset, absl::StrCat(name, " TLV is ", tlv.value.size(),
                                              " bytes; 802.1AB allows 2 to 256"));
  }
  return absl::OkStatus();
}

absl::Status ReadChassisId(const Tlv& tlv, v1::LinkNeighbor& neighbor) {
  if (absl::Status status = CheckIdLength(tlv, "the chassis ID"); !status.ok()) return status;
  const int subtype = static_cast<uint8_t>(tlv.value[0]);
  const absl::string_view id = tlv.value.substr(1);
  const char* name = SubtypeName(kChassisSubtypes, subtype);
  neighbor.set_chassis_id_subtype(name != nullptr ? name : absl::StrCat("subtype ", subtype));
  if (subtype == kChassisSubtypeMac) {
    if (id.size() != 6) {
      return Malformed(tlv.offset, absl::StrCat("the chassis ID is a MAC address of ", id.size(),
                                                " bytes, not 6"));
    }
    neighbor.set_chassis_id(ColonHex(id));
  } else if (subtype == kChassisSubtypeAddress) {
    neighbor.set_chassis_id(AddressText(id));
  } else if (name == nullptr) {
    neighbor.set_chassis_id(ColonHex(id));
  } else {
    neighbor.set_chassis_id(TlvText(id));
  }
  return absl::OkStatus();
}

absl::Status ReadPortId(const Tlv& tlv, v1::LinkNeighbor& neighbor) {
  if (absl::Status status = CheckIdLength(tlv, "the port ID"); !status.ok()) return status;
  const int subtype = static_cast<uint8_t>(tlv.value[0]);
  const absl::string_view id = tlv.value.substr(1);
  const char* name = SubtypeName(kPortSubtypes, subtype);
  neighbor.set_port_id_subtype(name != nullptr ? name : absl::StrCat("subtype ", subtype));
  if (subtype == kPortSubtypeMac) {
    if (id.size() != 6) {
      return Malformed(
          tlv.offset, absl::StrCat("the port ID is a MAC address of ", id.size(), " bytes, not 6"));
    }
    neighbor.set_port_id(ColonHex(id));
  } else if (subtype == kPortSubtypeAddress) {
    neighbor.set_port_id(AddressText(id));
  } else if (name == nullptr) {
    neighbor.set_port_id(ColonHex(id));
  } else {
    neighbor.set_port_id(TlvText(id));
  }
  return absl::OkStatus();
}

absl::Status ReadString(const Tlv& tlv, absl::string_view name, std::string* out) {
  if (tlv.value.size() > kMaxLldpStringBytes) {
    return Malformed(tlv.offset, absl::StrCat("the ", name, " TLV is ", tlv.value.size(),
                                              " bytes; 802.1AB allows at most 255"));
  }
  *out = TlvText(tlv.value);
  return absl::OkStatus();
}

// Organisation-specific TLVs: only IEEE 802.3's maximum frame size
// (OUI 00-12-0f, subtype 4) is read; the rest are skipped.
absl::Status ReadOrganisation(const Tlv& tlv, v1::LinkNeighbor& neighbor) {
  if (tlv.value.size() < 4) {
    return Malformed(tlv.offset, absl::StrCat("an organisation-specific TLV is ", tlv.value.size(),
                                              " bytes, shorter than its OUI "
                                              "and subtype"));
  }
  constexpr absl::string_view kIeee8023Oui("\x00\x12\x0f", 3);
  if (tlv.value.substr(0, 3) != kIeee8023Oui || tlv.value[3] != 4) return absl::OkStatus();
  if (tlv.value.size() != 6) {
    return Malformed(tlv.offset, absl::StrCat("the 802.3 maximum frame size TLV is ",
                                              tlv.value.size(), " bytes, not 6"));
  }
  neighbor.set_max_frame_size(Be16(tlv.value, 4));
  return absl::OkStatus();
}

// Where the LLDPDU starts, after the addresses, any VLAN tags and the
// ethertype.
absl::StatusOr<size_t> LldpduOffset(absl::string_view frame) {
  if (frame.size() > kMaxLldpFrameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("an LLDP frame of ", frame.size(),
                                                   " bytes, more than the ", kMaxLldpFrameBytes,
                                                   " this agent reads"));
  }
  if (frame.size() < kEthernetHeaderBytes) {
    return Malformed(
        0, absl::StrCat("the frame is ", frame.size(), " bytes, shorter than an Ethernet header"));
  }
  const absl::string_view dst = frame.substr(0, 6);
  constexpr absl::string_view kGroupPrefix("\x01\x80\xc2\x00\x00", 5);
  if (dst.substr(0, 5) != kGroupPrefix || (dst[5] != 0x0e && dst[5] != 0x03 && dst[5] != 0x00)) {
    return Malformed(0, absl::StrCat("sent to ", ColonHex(dst),
                                     ", not to an LLDP group address (01:80:c2:00:00:0e)"));
  }
  size_t at = 12;
  for (int tags = 0; tags < 2 && at + 2 <= frame.size(); ++tags) {
    const uint16_t type = Be16(frame, at);
    if (type != kEthertypeVlan && type != kEthertypeQinQ) break;
    at += 4;
  }
  if (at + 2 > frame.size()) return Malformed(at, "the frame ends inside its VLAN tag");
  if (Be16(frame, at) != kEthertypeLldp) {
    return Malformed(at, absl::StrFormat("ethertype 0x%04x, not LLDP's 0x88cc", Be16(frame, at)));
  }
  return at + 2;
}

// Reads the TLV at `at`; false at the end of the frame or at an End TLV.
absl::StatusOr<bool> NextTlv(absl::string_view frame, size_t& at, Tlv& tlv) {
  if (at == frame.size()) return false;
  if (at + 2 > frame.size()) return Malformed(at, "one byte left where a TLV header needs two");
  const uint16_t header = Be16(frame, at);
  tlv.type = header >> 9;
  tlv.offset = at;
  const size_t length = header & 0x1ff;
  if (length > frame.size() - at - 2) {
    return Malformed(
        at, absl::StrCat("a type ", tlv.type, " TLV says ", length, " bytes, but the frame has ",
                         frame.size() - at - 2, " left"));
  }
  tlv.value = frame.substr(at + 2, length);
  at += 2 + length;
  if (tlv.type == kEnd) {
    if (length != 0) return Malformed(tlv.offset, "the End TLV has a length");
    return false;
  }
  return true;
}

// The mandatory TLVs in 802.1AB's order: chassis ID, port ID, TTL.
absl::Status ReadMandatory(absl::string_view frame, size_t& at, v1::LinkNeighbor& neighbor) {
  static constexpr struct {
    int type;
    const char* name;
  } kOrder[] = {{kChassisId, "chassis ID"}, {kPortId, "port ID"}, {kTtl, "TTL"}};
  for (const auto& expected : kOrder) {
    Tlv tlv;
    absl::StatusOr<bool> more = NextTlv(frame, at, tlv);
    if (!more.ok()) return more.status();
    if (!*more || tlv.type != expected.type) {
      return Malformed(tlv.offset, absl::StrCat("the ", expected.name,
                                                " TLV is missing or out "
                                                "of 802.1AB's order (chassis ID, port ID, TTL)"));
    }
    absl::Status status;
    if (tlv.type == kChassisId) status = ReadChassisId(tlv, neighbor);
    if (tlv.type == kPortId) status = ReadPortId(tlv, neighbor);
    if (tlv.type == kTtl) {
      if (tlv.value.size() != 2) {
        return Malformed(tlv.offset,
                         absl::StrCat("the TTL TLV is ", tlv.value.size(), " bytes, not 2"));
      }
      neighbor.set_ttl_s(Be16(tlv.value, 0));
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// Which optional TLVs 802.1AB allows once have been read.
struct SeenOnce {
  bool description = false;
  bool name = false;
};

absl::Status ReadOptionalTlv(const Tlv& tlv, SeenOnce& seen, v1::LinkNeighbor& neighbor) {
  switch (tlv.type) {
    case kChassisId:
    case kPortId:
    case kTtl:
      return Malformed(tlv.offset, absl::StrCat("a second type ", tlv.type, " TLV"));
    case kPortDescription:
      if (seen.description) return Malformed(tlv.offset, "a second port description TLV");
      seen.description = true;
      return ReadString(tlv, "port description", neighbor.mutable_port_description());
    case kSystemName:
      if (seen.name) return Malformed(tlv.offset, "a second system name TLV");
      seen.name = true;
      return ReadString(tlv, "system name", neighbor.mutable_switch_name());
    case kOrganisation:
      return ReadOrganisation(tlv, neighbor);
    default:
      return absl::OkStatus();  // system description, capabilities, management address, reserved
  }
}

// Every TLV after the mandatory ones, up to the End TLV or the frame's end
// (bytes after an End TLV are padding). Each TLV takes at least two bytes,
// so the loop ends within the frame.
absl::Status ReadOptional(absl::string_view frame, size_t& at, v1::LinkNeighbor& neighbor) {
  SeenOnce seen;
  while (true) {
    Tlv tlv;
    absl::StatusOr<bool> more = NextTlv(frame, at, tlv);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    if (absl::Status status = ReadOptionalTlv(tlv, seen, neighbor); !status.ok()) return status;
  }
}

}  // namespace

absl::StatusOr<v1::LinkNeighbor> ParseLldpFrame(absl::string_view frame) {
  absl::StatusOr<size_t> start = LldpduOffset(frame);
  if (!start.ok()) return start.status();
  size_t at = *start;
  v1::LinkNeighbor neighbor;
  if (absl::Status status = ReadMandatory(frame, at, neighbor); !status.ok()) return status;
  if (absl::Status status = ReadOptional(frame, at, neighbor); !status.ok()) return status;
  const bool port_id_names_port = neighbor.port_id_subtype() == kPortSubtypes[kPortSubtypeIfname] ||
                                  neighbor.port_id_subtype() == kPortSubtypes[kPortSubtypeLocal];
  neighbor.set_port(port_id_names_port || neighbor.port_description().empty()
                        ? neighbor.port_id()
                        : neighbor.port_description());
  return neighbor;
}

}  // namespace clustercert::agent::inventory
