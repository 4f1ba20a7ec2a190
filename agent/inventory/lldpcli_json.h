#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// What `lldpcli show neighbors details` prints with -f json or -f json0
// (lldpd 1.0.16 captures in tests/fixtures/lldp/), read as hostile text:
// lldpd copies what every switch announced into it. The text is bounded
// (4 MiB), checked strictly (common/json_strict.h: UTF-8, no duplicate key,
// nesting at most 32) before protobuf's JSON parser reads it, at most 1024
// interfaces are read, and each field's shape is checked: a string is cut at
// 255 bytes and its hidden bytes escaped, a TTL or frame size must be a
// number below 65536, an interface must be a netdev name.
//
// The two forms differ in shape, and -f json's shape also depends on the
// count:
//   -f json:  {"lldp": {"interface": {"eth0": {...}}}} for one neighbour, a
//             list [{"eth0": {...}}, {"eth1": {...}}] for several, {"lldp": {}}
//             for none; "chassis" is keyed by the system name,
//             {"leaf1": {"id": {"type": "mac", "value": ...}}}, or is the
//             bare object when the switch sent no name.
//   -f json0: every value a list, every string an object {"value": ...};
//             interfaces are [{"name": "swp3", "chassis": [...], ...}].
inline constexpr size_t kMaxLldpcliOutputBytes = size_t{4} << 20;
inline constexpr size_t kMaxLldpcliInterfaces = 1024;

struct LldpcliNeighbors {
  // By the host's netdev, with `source` "lldpcli". Where lldpd lists two
  // neighbours on one netdev (something between the host and its switch
  // forwards LLDP) the first is kept and `rejected` says so.
  std::map<std::string, v1::LinkNeighbor> by_netdev;
  // Entries or fields dropped for their shape, keyed by the netdev where it
  // could be read ("" otherwise): "chassis of eth0: no chassis ID".
  std::map<std::string, std::vector<std::string>> rejected;
};

// InvalidArgument when the text is over the bound, not JSON, or not
// lldpcli's {"lldp": ...} object.
absl::StatusOr<LldpcliNeighbors> ParseLldpcliJson(absl::string_view text);

}  // namespace clustercert::agent::inventory
