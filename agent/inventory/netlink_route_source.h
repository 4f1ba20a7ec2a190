#pragma once

#include "absl/time/time.h"
#include "agent/inventory/route_source.h"

namespace clustercert::agent::inventory {

// Dumps the kernel's routes over rtnetlink (RTM_GETROUTE, every table, IPv4
// then IPv6), as `ip route show table all` does, and keeps the unicast ones
// outside the `local` table. At most kMaxRoutes are read: a host that learns
// more from its fabric gets a ResourceExhausted error, not an unbounded reply.
class NetlinkRouteSource final : public RouteSource {
 public:
  static constexpr size_t kMaxRoutes = 200000;

  explicit NetlinkRouteSource(absl::Duration timeout = absl::Seconds(2));
  absl::StatusOr<std::vector<KernelRoute>> Routes() override;

 private:
  absl::Duration timeout_;
};

}  // namespace clustercert::agent::inventory
