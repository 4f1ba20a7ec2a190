#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/inventory/reach_prober.h"
#include "agent/inventory/route_source.h"
#include "clustercert/v1/inventory.pb.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::agent::inventory {

// The bounds an IsolationQuery must keep: it comes off the network and
// makes this root daemon open connections, so its size, its addresses and
// its time are all limited before anything is sent.
struct IsolationLimits {
  static constexpr int kMaxFabrics = 8;
  static constexpr int kMaxSubnetsPerFabric = 16;
  static constexpr int kMaxProbesPerFabric = 16;
  static constexpr int kMaxRails = 64;
  static constexpr int kMaxAttempts = 256;  // data netdevs x probe targets
  static constexpr int kMaxRoutesKept = 256;
  static constexpr uint32_t kMaxProbeTimeoutMs = 2000;
};

// InvalidArgument naming the field and the value when the query breaks a
// bound or holds anything but names, CIDRs and literal IP:port targets.
absl::Status ValidateIsolationQuery(const v1::IsolationQuery& query);

// Answers the controller's IsolationQuery on this host: which netdevs carry
// the training data (the rails' netdevs and the one holding data_ip, read
// from the inventory just collected), every route whose destination overlaps
// another fabric's subnet (a default route overlaps them all), and one
// bounded connect from each data netdev to each probe target. Nothing the
// sources fail to read stops the rest: it becomes an Unknown entry.
class FabricIsolationCollector {
 public:
  FabricIsolationCollector(RouteSource& routes, ReachProber& prober);

  // The query must have passed ValidateIsolationQuery.
  v1::FabricIsolation Collect(const v1::IsolationQuery& query, const v1::Inventory& inventory);

 private:
  void AddRoutes(const v1::IsolationQuery& query, v1::FabricIsolation& isolation);
  void AddProbes(const v1::IsolationQuery& query, v1::FabricIsolation& isolation);

  RouteSource& routes_;
  ReachProber& prober_;
};

}  // namespace clustercert::agent::inventory
