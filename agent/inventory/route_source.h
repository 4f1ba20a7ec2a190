#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clustercert::agent::inventory {

// One unicast route of the kernel's tables, one entry per next hop (an ECMP
// route over two fabric links, as BGP unnumbered installs, is two entries).
struct KernelRoute {
  std::string destination;  // "10.20.0.0/16", "0.0.0.0/0"
  std::string netdev;       // the next hop's interface; empty when the kernel names none
  std::string gateway;      // empty when on-link; an IPv6 link-local for RFC 5549 next hops
  uint32_t table = 0;       // 254 = main
};

// Where the isolation check reads the routing tables from: rtnetlink on a
// live host, canned routes in tests.
class RouteSource {
 public:
  virtual ~RouteSource() = default;
  // Every unicast route of every table but `local`, IPv4 and IPv6.
  virtual absl::StatusOr<std::vector<KernelRoute>> Routes() = 0;
};

}  // namespace clustercert::agent::inventory
