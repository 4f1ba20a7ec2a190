#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/checks/finding_builder.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// One port of a rail that the inventory reports.
struct RailPort {
  const v1::RdmaDevice* device;
  const v1::RdmaPort* port;
};

// What every check reads: the plan, the plan's node, the node's inventory and
// lookups into the inventory by the names the plan uses (rail, netdev, PCI
// function). Holds references only; the caller keeps all three alive.
class CheckContext {
 public:
  CheckContext(const plan::Plan& plan, const plan::Node& node, const v1::Inventory& inventory);

  const plan::Plan& plan() const { return plan_; }
  const plan::Node& node() const { return node_; }
  const v1::Inventory& inventory() const { return inventory_; }
  const plan::Fabric& fabric() const { return plan_.fabric; }
  const plan::RoceSettings& roce() const { return plan_.fabric.roce; }

  bool is_roce() const { return fabric().type == plan::FabricType::kRoce; }
  bool is_infiniband() const { return fabric().type == plan::FabricType::kInfiniband; }
  // RoCE and InfiniBand data planes; an ethernet fabric is a TCP-only lab.
  bool is_rdma() const { return is_roce() || is_infiniband(); }

  // The builder for check `id` on this node, optionally scoped to a device/port.
  FindingBuilder Builder(absl::string_view id, Severity severity, absl::string_view device = {},
                         uint32_t port = 0) const;
  // The finding for an RDMA check on an ethernet (TCP-only) fabric.
  v1::Finding SkippedOnEthernet(absl::string_view id, Severity severity) const;
  // For a node-wide GPU<->rail check: its skipped finding on an ethernet
  // fabric, or when the plan lists no GPUs or no rails for the node;
  // nullopt when the check applies.
  std::optional<v1::Finding> SkipUnlessGpusAndRails(absl::string_view id, Severity severity) const;

  const v1::RdmaDevice* FindDevice(absl::string_view name) const;
  const v1::Netdev* FindNetdev(absl::string_view name) const;
  const v1::NetdevQos* FindQos(absl::string_view netdev) const;
  // The PCI function with `role` ("nic" | "gpu") and `name` (mlx5_0 | gpu2).
  const v1::PciFunction* FindPci(absl::string_view role, absl::string_view name) const;
  // The GPU functions in PCI order.
  std::vector<const v1::PciFunction*> GpuFunctions() const;
  // The netdev that carries `ip` (the plan's data_ip), or nullptr.
  const v1::Netdev* FindNetdevWithAddress(absl::string_view ip) const;

  // The plan's rails that the inventory reports, in plan order; absent rails
  // get rail.present failures and no further per-rail checks.
  std::vector<const v1::RdmaDevice*> PresentRails() const;
  // Every port of every present rail, in plan then port order.
  std::vector<RailPort> RailPorts() const;
  // The netdev behind a port: its GIDs' netdev, else the device's parent (rxe).
  static std::string PortNetdev(const RailPort& rail_port);

 private:
  const plan::Plan& plan_;
  const plan::Node& node_;
  const v1::Inventory& inventory_;
};

}  // namespace clustercert::controller::checks
