#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/inventory/module_source.h"
#include "agent/inventory/neighbor_source.h"
#include "clustercert/v1/inventory.pb.h"
#include "clustercert/v1/node_agent.pb.h"
#include "common/clock.h"
#include "common/process/command_runner.h"

namespace clustercert::agent::inventory {

// The bounds a CablingQuery must keep: it comes off the network and makes
// this root daemon open raw sockets and wait, so its size and its time are
// limited before anything is opened.
struct CablingLimits {
  static constexpr int kMaxRails = 64;
  static constexpr uint32_t kMinWaitMs = 1000;
  static constexpr uint32_t kMaxWaitMs = 120000;
};

// InvalidArgument naming the field and the value when the query breaks a
// bound or holds anything but device names and a literal IP address.
absl::Status ValidateCablingQuery(const v1::CablingQuery& query);

// What reads each rail port's far end and module. Each may be null: its
// facts are then unknown with the reason.
struct RailPortSources {
  NeighborSource* neighbors = nullptr;   // LLDP: lldpcli, then the agent's own receive
  ModuleSource* modules = nullptr;       // the module EEPROM
  process::CommandRunner* ib = nullptr;  // smpquery, for InfiniBand ports
  // Set when the inventory is a captured tree (--sysfs-root): this
  // machine's neighbours and modules would not be the tree's, so every one is
  // unknown with this reason.
  std::string offline_reason;
};

// Answers the controller's CablingQuery: one RailPort per port of each
// rail (the RDMA device; on fabric.type ethernet, the netdev holding data_ip
// is the one rail), each with its neighbour and module or an Unknown saying
// why not. The rails' netdevs and link layers come from the inventory just
// collected. Every Ethernet rail waits for LLDP at once, in one wait of
// lldp_wait_ms; the module and InfiniBand reads run meanwhile, so the whole
// answer takes the wait plus about a second.
class RailPortCollector {
 public:
  // The sources and the clock must outlive the collector.
  RailPortCollector(RailPortSources sources, Clock& clock);

  // The query must have passed ValidateCablingQuery.
  std::vector<v1::RailPort> Collect(const v1::CablingQuery& query,
                                    const v1::Inventory& inventory) const;

 private:
  RailPortSources sources_;
  Clock& clock_;
};

}  // namespace clustercert::agent::inventory
