#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"
#include "controller/plan/plan.h"

// Plans and inventories for the checks' tests, built in code: a healthy
// two-rail, four-GPU node (two sockets: gpu0/gpu1 and mlx5_0 on NUMA 0,
// gpu2/gpu3 and mlx5_1 on NUMA 1) as RoCE and as InfiniBand, with plans that
// match them exactly, and accessors to break one fact at a time.
namespace clustercert::controller::checks::testing {

plan::Plan RocePlan();        // node1, rails mlx5_0 mlx5_1, 4 GPUs, 200 Gb/s, Gen4 x16
plan::Plan InfinibandPlan();  // the same on an InfiniBand fabric
v1::Inventory HealthyRoceInventory();
v1::Inventory HealthyInfinibandInventory();

// Host settings (inventory.pcie_bridges, iommu, nic_firmware): both healthy
// inventories carry AddHealthyHostSettings' (ETH(2) / IB(1) link type).
v1::PcieBridge* AddBridge(v1::Inventory& inventory, const std::string& address,
                          std::vector<std::string> between, uint32_t control);
v1::NicFirmwareConfig* AddFirmware(v1::Inventory& inventory, const std::string& device,
                                   const std::string& pci, const std::string& link_type,
                                   const std::string& ats);
void AddHealthyHostSettings(v1::Inventory& inventory, const std::string& link_type = "ETH(2)");

// Mutable access to one part of an inventory; the part must exist.
v1::RdmaDevice& Device(v1::Inventory& inventory, const std::string& name);
v1::RdmaPort& Port(v1::Inventory& inventory, const std::string& device, uint32_t port = 1);
v1::Netdev& Netdev(v1::Inventory& inventory, const std::string& name);
v1::NetdevQos& Qos(v1::Inventory& inventory, const std::string& netdev);
v1::PciFunction& Pci(v1::Inventory& inventory, const std::string& name);

// "id device port" for every finding that is not a pass, e.g. "port.rate mlx5_0 1".
std::vector<std::string> NonPassing(const std::vector<v1::Finding>& findings);
// The one finding with this id, device and port; fails the test when absent.
const v1::Finding& Get(const std::vector<v1::Finding>& findings, const std::string& id,
                       const std::string& device = "", uint32_t port = 0);

}  // namespace clustercert::controller::checks::testing
