#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/inventory/fabric_isolation.h"
#include "agent/inventory/inventory_source.h"
#include "agent/inventory/rail_port_collector.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::agent {

struct AgentIdentity {
  std::string node_name;
  std::string hostname;
};

// The node-agent's request handlers as a plain class: the gRPC service only
// converts messages and statuses around these, so tests call them directly
// with a fake InventorySource and a fixed clock.
class AgentHandlers {
 public:
  // `now` is the host's clock as it is: a test that needs a skewed agent
  // runs it under libfaketime (tests/integration/netns_uplink_test.cc).
  // `isolation` answers a GetInventory's IsolationQuery; null on a captured
  // tree (--sysfs-root), whose routes would be this machine's, not the tree's.
  // `cabling` answers a CablingQuery (Inventory.rail_ports); null: the
  // inventory says this agent cannot.
  AgentHandlers(AgentIdentity identity, inventory::InventorySource& inventory,
                std::function<absl::Time()> now,
                inventory::FabricIsolationCollector* isolation = nullptr,
                inventory::RailPortCollector* cabling = nullptr);

  v1::GetVersionResponse GetVersion(const v1::GetVersionRequest& request) const;
  // `received` is when the call arrived (t2), taken by the caller as early
  // as it can; t3 is taken here, last.
  v1::ExchangeTimeResponse ExchangeTime(const v1::ExchangeTimeRequest& request,
                                        absl::Time received) const;
  absl::Time Now() const { return now_(); }
  absl::StatusOr<v1::GetInventoryResponse> GetInventory(const v1::GetInventoryRequest& request);

 private:
  void AnswerIsolation(const v1::IsolationQuery& query, v1::Inventory& inventory);
  void AnswerCabling(const v1::CablingQuery& query, v1::Inventory& inventory);

  AgentIdentity identity_;
  inventory::InventorySource& inventory_;
  inventory::FabricIsolationCollector* isolation_;
  inventory::RailPortCollector* cabling_;
  std::function<absl::Time()> now_;
  absl::Time started_;
  // One collection at a time: concurrent controllers get consistent reads and
  // the host is not walked twice in parallel. A cabling query holds it for
  // its LLDP wait (at most 120 s) plus about a second.
  std::mutex collect_mutex_;
};

}  // namespace clustercert::agent
