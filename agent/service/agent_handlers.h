#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/inventory/inventory_source.h"
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
  AgentHandlers(AgentIdentity identity, inventory::InventorySource& inventory,
                std::function<absl::Time()> now);

  v1::GetVersionResponse GetVersion(const v1::GetVersionRequest& request) const;
  absl::StatusOr<v1::GetInventoryResponse> GetInventory(const v1::GetInventoryRequest& request);

 private:
  AgentIdentity identity_;
  inventory::InventorySource& inventory_;
  std::function<absl::Time()> now_;
  absl::Time started_;
  // One collection at a time: concurrent controllers get consistent reads and
  // the host is not walked twice in parallel.
  std::mutex collect_mutex_;
};

}  // namespace clustercert::agent
