#include "agent/service/agent_handlers.h"

#include "absl/strings/str_join.h"
#include "common/version.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent {

AgentHandlers::AgentHandlers(AgentIdentity identity, inventory::InventorySource& inventory,
                             std::function<absl::Time()> now,
                             inventory::FabricIsolationCollector* isolation,
                             inventory::RailPortCollector* cabling)
    : identity_(std::move(identity)),
      inventory_(inventory),
      isolation_(isolation),
      cabling_(cabling),
      now_(std::move(now)),
      started_(now_()) {}

v1::GetVersionResponse AgentHandlers::GetVersion(const v1::GetVersionRequest&) const {
  v1::GetVersionResponse response;
  response.set_agent_version(kToolVersion);
  response.set_api_version(kApiVersion);
  response.set_node_name(identity_.node_name);
  response.set_hostname(identity_.hostname);
  const absl::Time now = now_();
  response.set_uptime_ms(absl::ToInt64Milliseconds(now - started_));
  response.set_unix_time_us(absl::ToUnixMicros(now));
  return response;
}

v1::ExchangeTimeResponse AgentHandlers::ExchangeTime(const v1::ExchangeTimeRequest& request,
                                                     absl::Time received) const {
  v1::ExchangeTimeResponse response;
  response.set_controller_send_unix_us(request.controller_send_unix_us());
  response.set_receive_unix_us(absl::ToUnixMicros(received));
  response.set_transmit_unix_us(absl::ToUnixMicros(now_()));
  return response;
}

void AgentHandlers::AnswerIsolation(const v1::IsolationQuery& query, v1::Inventory& inventory) {
  if (isolation_ != nullptr) {
    *inventory.mutable_isolation() = isolation_->Collect(query, inventory);
    const v1::FabricIsolation& answer = inventory.isolation();
    int reached = 0;
    for (const v1::ReachProbe& probe : answer.probes()) reached += probe.reached() ? 1 : 0;
    // Outbound connects from a root daemon: say where they went.
    spdlog::info(
        "isolation query: {} other fabric(s), data netdevs [{}], {} route(s) into them of {} "
        "read, {} probe(s) sent, {} answered",
        query.fabrics_size(), absl::StrJoin(answer.data_netdevs(), ", "), answer.routes_size(),
        answer.routes_seen(), answer.probes_size(), reached);
    return;
  }
  v1::Unknown* unknown = inventory.mutable_isolation()->add_unknowns();
  unknown->set_field("isolation");
  unknown->set_path(inventory.sysfs_root());
  unknown->set_reason(
      "this agent reads a captured tree (--sysfs-root): the routes and probes would be this "
      "machine's, not the tree's host's");
}

void AgentHandlers::AnswerCabling(const v1::CablingQuery& query, v1::Inventory& inventory) {
  if (cabling_ == nullptr) {
    v1::Unknown* unknown = inventory.add_unknowns();
    unknown->set_field("rail_ports");
    unknown->set_path("GetInventoryRequest.cabling");
    unknown->set_reason("this agent has no cabling reader");
    return;
  }
  int heard = 0;
  for (v1::RailPort& port : cabling_->Collect(query, inventory)) {
    heard += port.has_neighbor() ? 1 : 0;
    *inventory.add_rail_ports() = std::move(port);
  }
  // Raw sockets opened by a root daemon: say what for.
  spdlog::info(
      "cabling query: {} rail(s), data_ip '{}', LLDP wait {} ms: {} of {} rail port(s) "
      "with a neighbour",
      query.rails_size(), query.data_ip(), query.lldp_wait_ms(), heard,
      inventory.rail_ports_size());
}

absl::StatusOr<v1::GetInventoryResponse> AgentHandlers::GetInventory(
    const v1::GetInventoryRequest& request) {
  if (request.has_isolation()) {
    if (absl::Status valid = inventory::ValidateIsolationQuery(request.isolation()); !valid.ok()) {
      return valid;
    }
  }
  if (request.has_cabling()) {
    if (absl::Status valid = inventory::ValidateCablingQuery(request.cabling()); !valid.ok()) {
      return valid;
    }
  }
  std::lock_guard<std::mutex> lock(collect_mutex_);
  const absl::Time start = now_();
  auto inventory = inventory_.Collect(request.dialed_host());
  if (!inventory.ok()) return inventory.status();
  v1::GetInventoryResponse response;
  *response.mutable_inventory() = std::move(*inventory);
  auto& out = *response.mutable_inventory();
  if (request.has_isolation()) AnswerIsolation(request.isolation(), out);
  if (request.has_cabling()) AnswerCabling(request.cabling(), out);
  out.set_node_name(identity_.node_name);
  if (out.hostname().empty()) out.set_hostname(identity_.hostname);
  out.set_agent_version(kToolVersion);
  out.set_collected_unix_ms(absl::ToUnixMillis(start));
  out.set_collect_micros(static_cast<uint32_t>(absl::ToInt64Microseconds(now_() - start)));
  return response;
}

}  // namespace clustercert::agent
