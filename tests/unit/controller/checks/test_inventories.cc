#include "tests/unit/controller/checks/test_inventories.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace clustercert::controller::checks::testing {
namespace {

struct Rail {
  std::string name;
  std::string pci;
  std::string netdev;
  std::string ipv4;
  int numa;
};

const std::vector<Rail>& Rails() {
  static const auto* rails = new std::vector<Rail>{
      {"mlx5_0", "0000:41:00.0", "enp65s0np0", "10.10.1.1", 0},
      {"mlx5_1", "0000:c1:00.0", "enp193s0np0", "10.10.2.1", 1},
  };
  return *rails;
}

const std::vector<std::string>& GpuAddresses() {
  static const auto* addresses =
      new std::vector<std::string>{"0000:01:00.0", "0000:21:00.0", "0000:81:00.0", "0000:a1:00.0"};
  return *addresses;
}

plan::Plan BasePlan(plan::FabricType type) {
  plan::Plan plan;
  plan.path = "plans/test.yaml";
  plan.cluster = "test-cluster";
  plan.fabric.type = type;
  plan.fabric.link_rate_gbps = 200;
  plan.fabric.active_mtu = 4096;
  plan.fabric.min_netdev_mtu = 9000;
  plan::Node node;
  node.name = "node1";
  node.agent = "192.168.100.11:7070";
  node.data_ip = "10.10.1.1";
  node.rails = {"mlx5_0", "mlx5_1"};
  node.gpus = 4;
  plan.nodes.push_back(node);
  plan.expect.pcie.gen = 4;
  plan.expect.pcie.width = 16;
  return plan;
}

v1::PciFunction MakePci(const std::string& address, const std::string& role,
                        const std::string& name, int numa) {
  v1::PciFunction function;
  function.set_address(address);
  function.set_role(role);
  function.set_name(name);
  function.set_sysfs_path(absl::StrCat("/sys/devices/pci0000:00/", address));
  function.set_vendor_id(role == "nic" ? "0x15b3" : "0x10de");
  function.set_class_code(role == "nic" ? "0x020000" : "0x030200");
  function.set_current_speed_gts(16.0);
  function.set_current_gen(4);
  function.set_current_width(16);
  function.set_max_speed_gts(16.0);
  function.set_max_gen(4);
  function.set_max_width(16);
  function.set_numa_node(numa);
  return function;
}

// The parts both fabrics share: host stack, PCIe, GPUs, topology, management, clock.
v1::Inventory BaseInventory() {
  v1::Inventory inventory;
  inventory.set_node_name("node1");
  inventory.set_hostname("node1.lab");
  inventory.set_agent_version("0.1.0");
  inventory.set_sysfs_root("/");
  // Loaded in the seed's order (the load rank counts /proc/modules lines,
  // newest first), each the build installed on disk.
  const std::pair<const char*, uint32_t> modules[] = {
      {"ib_core", 3}, {"ib_uverbs", 2}, {"mlx5_core", 4}, {"mlx5_ib", 1}, {"nvidia_peermem", 0}};
  for (const auto& [module, rank] : modules) {
    v1::KernelModule* entry = inventory.mutable_stack()->add_modules();
    entry->set_name(module);
    entry->set_loaded(true);
    entry->set_load_rank(rank);
    entry->set_srcversion("4F2B7A9C1E3D5B8A0C6E2F4");
    entry->set_file_srcversion("4F2B7A9C1E3D5B8A0C6E2F4");
    entry->set_file_read(true);
    entry->set_file_path(
        absl::StrCat("/lib/modules/6.8.0-45-generic/updates/dkms/", module, ".ko"));
  }
  inventory.mutable_stack()->set_ofed_version("MLNX_OFED_LINUX-5.8-1.1.2.1");
  inventory.mutable_stack()->set_ofed_source("ofed_info -s");
  inventory.mutable_stack()->set_rdma_core_version("58mlnx43");
  inventory.mutable_stack()->set_peermem_loaded(true);
  inventory.mutable_stack()->set_peermem_source("/sys/module/nvidia_peermem/version");

  v1::Netdev* management = inventory.add_netdevs();
  management->set_name("eno1");
  management->set_mtu(1500);
  management->set_operstate("up");
  management->set_speed_mbps(1000);
  management->add_ipv4("192.168.100.11/24");
  management->add_cidrs("192.168.100.11/24");
  inventory.set_management_address("192.168.100.11");
  inventory.set_management_netdev("eno1");
  inventory.set_management_subnet("192.168.100.0/24");

  for (const Rail& rail : Rails()) {
    *inventory.add_pci() = MakePci(rail.pci, "nic", rail.name, rail.numa);
  }
  for (int i = 0; i < 4; ++i) {
    const std::string gpu = absl::StrCat("gpu", i);
    *inventory.add_pci() = MakePci(GpuAddresses()[i], "gpu", gpu, i / 2);
    for (const Rail& rail : Rails()) {
      v1::GpuNicPath* path = inventory.add_gpu_nic_paths();
      path->set_gpu(gpu);
      path->set_gpu_pci(GpuAddresses()[i]);
      path->set_nic(rail.name);
      path->set_nic_pci(rail.pci);
      path->set_relation(i / 2 == rail.numa ? (i % 2 == 0 ? "PIX" : "PXB") : "SYS");
    }
    v1::Gpu* runtime_gpu = inventory.mutable_gpu_runtime()->add_gpus();
    runtime_gpu->set_index(i);
    runtime_gpu->set_name("NVIDIA H100 80GB HBM3");
    runtime_gpu->set_pci_bus_id(GpuAddresses()[i]);
  }
  inventory.mutable_gpu_runtime()->set_driver_present(true);
  inventory.mutable_gpu_runtime()->set_driver_version("12.4");

  v1::Clock* clock = inventory.mutable_clock();
  clock->set_synchronized(true);
  clock->set_est_error_us(120);
  clock->set_max_error_us(8000);
  clock->set_source("adjtimex");
  return inventory;
}

v1::RdmaDevice* AddDevice(v1::Inventory& inventory, const Rail& rail) {
  v1::RdmaDevice* device = inventory.add_rdma_devices();
  device->set_name(rail.name);
  device->set_node_type("CA");
  device->set_fw_ver("20.31.1014");
  device->set_hca_type("MT4123");
  device->set_pci_address(rail.pci);
  return device;
}

v1::RdmaPort* AddActivePort(v1::RdmaDevice* device, const std::string& link_layer) {
  v1::RdmaPort* port = device->add_ports();
  port->set_port(1);
  port->set_state_code(4);
  port->set_state("ACTIVE");
  port->set_phys_state_code(5);
  port->set_phys_state("LinkUp");
  port->set_rate_gbps(200);
  port->set_rate_text("200 Gb/sec (4X HDR)");
  port->set_width(4);
  port->set_speed_name("HDR");
  port->set_link_layer(link_layer);
  port->set_active_mtu(4096);
  port->set_active_mtu_source("ibv_query_port");
  return port;
}

void AddGid(v1::RdmaPort* port, uint32_t index, const std::string& gid, const std::string& type,
            const std::string& netdev, const std::string& ipv4) {
  v1::Gid* entry = port->add_gids();
  entry->set_index(index);
  entry->set_gid(gid);
  entry->set_type(type);
  entry->set_netdev(netdev);
  entry->set_ipv4(ipv4);
}

}  // namespace

// A bridge with ACS `control` on the paths `between` (the test node's
// switched pairs, test_inventories.cc: gpu0/gpu1 PIX/PXB to mlx5_0, gpu2/gpu3
// to mlx5_1).
v1::PcieBridge* AddBridge(v1::Inventory& inventory, const std::string& address,
                          std::vector<std::string> between, uint32_t control) {
  v1::PcieBridge* bridge = inventory.add_pcie_bridges();
  bridge->set_address(address);
  bridge->set_sysfs_path("/sys/devices/pci0000:00/" + address);
  bridge->set_acs_capable(true);
  bridge->set_acs_control(control);
  bridge->set_p2p_redirect((control & 0x2c) != 0);
  for (auto& pair : between) bridge->add_between(pair);
  bridge->set_source("config space (4096 bytes)");
  return bridge;
}

v1::NicFirmwareConfig* AddFirmware(v1::Inventory& inventory, const std::string& device,
                                   const std::string& pci, const std::string& link_type,
                                   const std::string& ats) {
  v1::NicFirmwareConfig* config = inventory.add_nic_firmware();
  config->set_device(device);
  config->set_pci_address(pci);
  config->set_tool("mstconfig");
  v1::FirmwareSetting* setting = config->add_settings();
  setting->set_name("LINK_TYPE_P1");
  setting->set_value(link_type);
  setting = config->add_settings();
  setting->set_name("ATS_ENABLED");
  setting->set_value(ats);
  return config;
}

// What a healthy HGX node reports for the host settings: ACS capable and off
// on every switch port between GPUs and rails, IOMMU passthrough, ports ETH.
void AddHealthyHostSettings(v1::Inventory& inventory, const std::string& link_type) {
  AddBridge(inventory, "0000:40:01.0", {"gpu0<->mlx5_0", "gpu1<->mlx5_0"}, 0);
  AddBridge(inventory, "0000:40:02.0", {"gpu1<->mlx5_0"}, 0);
  AddBridge(inventory, "0000:c0:01.0", {"gpu2<->mlx5_1", "gpu3<->mlx5_1"}, 0);
  v1::Iommu* iommu = inventory.mutable_iommu();
  iommu->set_cmdline("intel_iommu=on iommu=pt");
  iommu->add_units("dmar0");
  iommu->set_mode("passthrough");
  iommu->set_source("/proc/cmdline; /sys/class/iommu (1 units)");
  AddFirmware(inventory, "mlx5_0", "0000:41:00.0", link_type, "False(0)");
  AddFirmware(inventory, "mlx5_1", "0000:c1:00.0", link_type, "False(0)");
}

plan::Plan RocePlan() { return BasePlan(plan::FabricType::kRoce); }
plan::Plan InfinibandPlan() { return BasePlan(plan::FabricType::kInfiniband); }

v1::Inventory HealthyRoceInventory() {
  v1::Inventory inventory = BaseInventory();
  int octet = 1;
  for (const Rail& rail : Rails()) {
    v1::RdmaDevice* device = AddDevice(inventory, rail);
    v1::RdmaPort* port = AddActivePort(device, "Ethernet");
    port->set_lid(0);
    port->set_sm_lid(0);
    port->set_netdev(rail.netdev);
    // The typical mlx5 table: 0/1 link-local v1/v2, 2/3 IPv4-mapped v1/v2.
    const std::string link_local = "fe80:0000:0000:0000:0e42:a1ff:fe65:f2c0";
    const std::string mapped = absl::StrCat("0000:0000:0000:0000:0000:ffff:0a0a:0", octet, "01");
    AddGid(port, 0, link_local, "IB/RoCE v1", rail.netdev, "");
    AddGid(port, 1, link_local, "RoCE v2", rail.netdev, "");
    AddGid(port, 2, mapped, "IB/RoCE v1", rail.netdev, rail.ipv4);
    AddGid(port, 3, mapped, "RoCE v2", rail.netdev, rail.ipv4);
    ++octet;

    v1::Netdev* netdev = inventory.add_netdevs();
    netdev->set_name(rail.netdev);
    netdev->set_mtu(9000);
    netdev->set_operstate("up");
    netdev->set_speed_mbps(200000);
    netdev->set_pci_address(rail.pci);
    netdev->add_rdma_devices(rail.name);
    netdev->add_ipv4(absl::StrCat(rail.ipv4, "/24"));
    netdev->add_cidrs(absl::StrCat(rail.ipv4, "/24"));

    v1::NetdevQos* qos = inventory.add_qos();
    qos->set_netdev(rail.netdev);
    qos->set_rdma_device(rail.name);
    qos->set_pfc_enabled_mask(0x08);
    qos->set_pfc_source("dcbnl");
    qos->set_trust("dscp");
    qos->set_trust_source(absl::StrCat("/sys/class/net/", rail.netdev, "/qos/trust"));
    v1::DscpPriority* app = qos->add_dscp_priorities();
    app->set_dscp(26);
    app->set_priority(3);
    qos->set_traffic_class(106);
    qos->set_ecn_np_mask(0x08);
    qos->set_ecn_rp_mask(0x08);
  }
  AddHealthyHostSettings(inventory, "ETH(2)");
  return inventory;
}

v1::Inventory HealthyInfinibandInventory() {
  v1::Inventory inventory = BaseInventory();
  uint32_t lid = 5;
  for (const Rail& rail : Rails()) {
    v1::RdmaDevice* device = AddDevice(inventory, rail);
    v1::RdmaPort* port = AddActivePort(device, "InfiniBand");
    port->set_lid(lid++);
    port->set_sm_lid(1);
    AddGid(port, 0, "fe80:0000:0000:0000:0c42:a103:0065:f2c0", "", "", "");
  }
  AddHealthyHostSettings(inventory, "IB(1)");
  return inventory;
}

v1::RdmaDevice& Device(v1::Inventory& inventory, const std::string& name) {
  for (v1::RdmaDevice& device : *inventory.mutable_rdma_devices()) {
    if (device.name() == name) return device;
  }
  ADD_FAILURE() << "no RDMA device " << name;
  std::abort();
}

v1::RdmaPort& Port(v1::Inventory& inventory, const std::string& device, uint32_t port) {
  for (v1::RdmaPort& entry : *Device(inventory, device).mutable_ports()) {
    if (entry.port() == port) return entry;
  }
  ADD_FAILURE() << "no port " << port << " on " << device;
  std::abort();
}

v1::Netdev& Netdev(v1::Inventory& inventory, const std::string& name) {
  for (v1::Netdev& netdev : *inventory.mutable_netdevs()) {
    if (netdev.name() == name) return netdev;
  }
  ADD_FAILURE() << "no netdev " << name;
  std::abort();
}

v1::NetdevQos& Qos(v1::Inventory& inventory, const std::string& netdev) {
  for (v1::NetdevQos& qos : *inventory.mutable_qos()) {
    if (qos.netdev() == netdev) return qos;
  }
  ADD_FAILURE() << "no QoS entry for " << netdev;
  std::abort();
}

v1::PciFunction& Pci(v1::Inventory& inventory, const std::string& name) {
  for (v1::PciFunction& function : *inventory.mutable_pci()) {
    if (function.name() == name) return function;
  }
  ADD_FAILURE() << "no PCI function " << name;
  std::abort();
}

std::vector<std::string> NonPassing(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> keys;
  for (const v1::Finding& finding : findings) {
    if (finding.status() == v1::Finding::pass) continue;
    std::string key = finding.id();
    if (!finding.device().empty()) absl::StrAppend(&key, " ", finding.device());
    if (finding.port() != 0) absl::StrAppend(&key, " ", finding.port());
    keys.push_back(key);
  }
  return keys;
}

const v1::Finding& Get(const std::vector<v1::Finding>& findings, const std::string& id,
                       const std::string& device, uint32_t port) {
  for (const v1::Finding& finding : findings) {
    if (finding.id() == id && finding.device() == device && finding.port() == port) {
      return finding;
    }
  }
  ADD_FAILURE() << "no finding " << id << " " << device << " " << port;
  static const v1::Finding* empty = new v1::Finding();
  return *empty;
}

}  // namespace clustercert::controller::checks::testing
