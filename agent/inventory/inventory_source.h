#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// Where the agent's handlers get a host inventory from. The production
// implementation walks the rooted sysfs view and the live probes
// (inventory::InventoryCollector); tests hand in canned inventories.
class InventorySource {
 public:
  virtual ~InventorySource() = default;
  // `dialed_host` is the address the controller used to reach this agent,
  // so the collector can name the management interface.
  virtual absl::StatusOr<v1::Inventory> Collect(const std::string& dialed_host) = 0;
};

}  // namespace clustercert::agent::inventory
