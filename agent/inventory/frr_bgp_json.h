#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// Parsers for what FRR's vtysh prints (FRR 8.4, captures in
// tests/fixtures/frr/). vtysh output is someone else's bytes from a daemon
// that may be misconfigured or compromised: every parser bounds the text,
// the nesting (protobuf's JSON parser), the number of entries, and checks
// each field's shape before it enters the inventory; a field of the wrong
// shape is dropped and named, never copied through.

inline constexpr size_t kMaxVtyshOutputBytes = size_t{512} * 1024;
inline constexpr size_t kMaxBgpNeighbors = 1024;
inline constexpr size_t kMaxOriginatedPrefixes = 4096;

// `show bgp vrf default summary json`: one object per address family
// ("ipv4Unicast": {"routerId", "as", "peers": {"swp1": {...}}}), or "{}"
// when bgpd has no instance or no neighbour.
struct BgpSummary {
  std::string router_id;
  std::optional<uint32_t> local_as;
  std::vector<v1::BgpNeighbor> neighbors;
  // Fields dropped for their shape: "peer 'x y' of ipv4Unicast: not an interface name or address".
  std::vector<std::string> rejected;
};
absl::StatusOr<BgpSummary> ParseBgpSummary(absl::string_view text);

// `show bgp vrf default <afi> unicast regexp ^$ json`: the paths with an
// empty AS path; those with no peer ("peerId": "(unspec)") are the ones this
// node originates. bgpd without a `router bgp` prints the sentence "Default
// BGP instance not found" instead of JSON: instance_present false then.
struct BgpOriginated {
  bool instance_present = false;
  std::string router_id;
  std::optional<uint32_t> local_as;
  std::vector<std::string> prefixes;  // "10.0.0.1/32", sorted
  std::vector<std::string> rejected;
};
absl::StatusOr<BgpOriginated> ParseBgpOriginated(absl::string_view text);

// Shapes the parsers accept, exposed for the tests.
bool IsBgpPeerName(absl::string_view text);  // "swp1", "10.0.0.2", "fe80::1%swp1"
bool IsBgpState(absl::string_view text);     // "Established", "Idle (Admin)"
bool IsIpv4Address(absl::string_view text);  // a router-id

}  // namespace clustercert::agent::inventory
