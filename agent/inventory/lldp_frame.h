#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// One received LLDP frame, as the switch sent it to the rail netdev: the
// Ethernet header (one of the three LLDP group addresses, an optional 802.1Q
// or 802.1ad tag, ethertype 0x88cc) and the LLDPDU, a run of TLVs with a
// 7-bit type and a 9-bit length.
//
// The frame came off a cable the agent does not control, so every TLV's
// length is checked against the bytes left, the mandatory TLVs (chassis ID,
// port ID, TTL) must come first, in that order, each once; the string TLVs
// are cut at 255 bytes as 802.1AB allows, trailing NULs some switches send
// are dropped and every other byte outside printable ASCII is shown as \xNN
// (common/printable.h). A frame that breaks any of that is refused whole
// (InvalidArgument with a sentence naming the TLV and the byte offset):
// half a neighbour is no neighbour.
inline constexpr size_t kMaxLldpFrameBytes = 9216;  // a jumbo frame; LLDPDUs are far shorter
inline constexpr size_t kMaxLldpStringBytes = 255;  // 802.1AB's bound on every string TLV

// The neighbour the frame announces, without `source` (the caller knows the
// netdev). `port` is the port ID when its subtype is an interface name or
// locally assigned, else the port description (the port ID when the switch
// sent no description). A shutdown LLDPDU (TTL 0) parses, with ttl_s 0.
absl::StatusOr<v1::LinkNeighbor> ParseLldpFrame(absl::string_view frame);

}  // namespace clustercert::agent::inventory
