#pragma once

// A ring certificate (ring_certificate.h) with what a real run adds per node:
// an inventory the shape of a two-rail GPU host (lab fixtures, HGX twin),
// about 50 checks of which a few fail or warn and some are skipped with the
// node's name in their reason, the skipped list the certificate builder
// writes from them, and the findings. For the tests of the condensed
// listings above kMaxNodesForPerNodeDetail nodes.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/result_keys.h"
#include "tests/unit/controller/report/ring_certificate.h"

namespace clustercert::controller::report::testing {

// Node i's address on network `net`: 10.net.(i / 250).(i % 250 + 1).
inline std::string RingAddress(int net, int i) {
  return absl::StrFormat("10.%d.%d.%d", net, i / 250, i % 250 + 1);
}

inline void AddRail(v1::Inventory& inv, int i, int rail) {
  const std::string name = absl::StrCat("mlx5_", rail);
  const std::string netdev = absl::StrCat("ens", 10 + rail, "np0");
  const std::string pci = absl::StrFormat("0000:%02x:00.0", 0x41 + rail * 0x40);
  v1::RdmaDevice* device = inv.add_rdma_devices();
  device->set_name(name);
  device->set_fw_ver("28.39.1002");
  device->set_pci_address(pci);
  v1::RdmaPort* port = device->add_ports();
  port->set_port(1);
  port->set_state("ACTIVE");
  port->set_phys_state("LinkUp");
  port->set_rate_gbps(400);
  port->set_width(4);
  port->set_speed_name("NDR");
  port->set_link_layer("Ethernet");
  port->set_active_mtu(4096);
  port->set_netdev(netdev);
  for (int g = 0; g < 4; ++g) {
    v1::Gid* gid = port->add_gids();
    gid->set_index(g);
    gid->set_type(g % 2 == 0 ? "IB/RoCE v1" : "RoCE v2");
    if (g >= 2) gid->set_ipv4(RingAddress(100 + rail, i));
  }
  v1::Netdev* nd = inv.add_netdevs();
  nd->set_name(netdev);
  nd->set_operstate("up");
  nd->set_mtu(9000);
  nd->set_speed_mbps(400000);
  nd->set_pci_address(pci);
  nd->add_rdma_devices(name);
  nd->add_ipv4(RingAddress(100 + rail, i));
  v1::PciFunction* fn = inv.add_pci();
  fn->set_address(pci);
  fn->set_role("nic");
  fn->set_name(name);
  fn->set_vendor_id("0x15b3");
  fn->set_device_id("0x1021");
  fn->set_current_gen(5);
  fn->set_max_gen(5);
  fn->set_current_width(16);
  fn->set_max_width(16);
  v1::NetdevQos* qos = inv.add_qos();
  qos->set_netdev(netdev);
  qos->set_rdma_device(name);
  qos->set_pfc_enabled_mask(0x08);
  qos->set_trust("dscp");
  v1::DscpPriority* dscp = qos->add_dscp_priorities();
  dscp->set_dscp(26);
  dscp->set_priority(3);
}

// What node i's agent reports: the same build on every node, its own names,
// addresses, collection time and GPU UUIDs.
inline v1::Inventory RingInventory(int i) {
  v1::Inventory inv;
  inv.set_node_name(RingNodeName(i));
  inv.set_hostname(absl::StrCat(RingNodeName(i), ".cluster.example"));
  inv.set_agent_version("0.1.0");
  inv.set_management_address(RingAddress(1, i));
  inv.set_management_netdev("eno1");
  inv.set_collected_unix_ms(1796131114260 + i * 37);
  inv.set_collect_micros(4000000 + i * 13);
  for (int rail = 0; rail < 2; ++rail) AddRail(inv, i, rail);
  v1::Stack* stack = inv.mutable_stack();
  for (const char* module : {"mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "nvidia_peermem"}) {
    v1::KernelModule* m = stack->add_modules();
    m->set_name(module);
    m->set_loaded(true);
  }
  stack->set_ofed_version("MLNX_OFED_LINUX-23.10-1.1.9.0");
  stack->set_rdma_core_version("2307mlnx47");
  stack->set_peermem_loaded(true);
  v1::GpuRuntime* gpu = inv.mutable_gpu_runtime();
  gpu->set_driver_present(true);
  gpu->set_driver_version("12.4");
  gpu->set_runtime_version("12.4");
  for (int g = 0; g < 8; ++g) {
    v1::Gpu* one = gpu->add_gpus();
    one->set_index(g);
    one->set_name("NVIDIA H100 80GB HBM3");
    one->set_pci_bus_id(absl::StrFormat("0000:%02x:00.0", 0x18 + g * 0x10));
    one->set_memory_bytes(85520809984);
    one->set_uuid(absl::StrFormat("GPU-%08x-0000-0000-0000-%012d", i, g));
  }
  v1::Clock* clock = inv.mutable_clock();
  clock->set_synchronized(true);
  clock->set_est_error_us(10 + i % 50);
  clock->set_max_error_us(100 + i % 300);
  clock->set_source(absl::StrCat("adjtimex: synchronized, maxerror ", 100 + i % 300, " us"));
  return inv;
}

// One check of node `node` with the key the certificate builder gives it.
inline v1::Finding RingCheck(const std::string& id, const std::string& node,
                             const std::string& device, v1::Finding::Status status,
                             const std::string& message) {
  v1::Finding f;
  f.set_id(id);
  f.set_node(node);
  f.set_device(device);
  f.set_port(device.empty() ? 0 : 1);
  f.set_status(status);
  f.set_severity(v1::Finding::error);
  f.set_observed(status == v1::Finding::pass ? "as expected" : "");
  f.set_expected("what the plan says");
  f.set_message(message);
  f.set_key(FindingKey(f));
  return f;
}

// 48 checks per node: 20 node-wide, 12 per rail, 4 skipped per node.
inline void AddRingChecks(v1::Certificate& c, const std::string& node) {
  auto add = [&](v1::Finding f) { *c.add_checks() = std::move(f); };
  for (int k = 0; k < 20; ++k) {
    add(RingCheck(absl::StrFormat("node.check%02d", k), node, "", v1::Finding::pass,
                  absl::StrCat(node, " passes node check ", k, ".")));
  }
  for (const char* rail : {"mlx5_0", "mlx5_1"}) {
    for (int k = 0; k < 12; ++k) {
      add(RingCheck(absl::StrFormat("port.check%02d", k), node, rail, v1::Finding::pass,
                    absl::StrCat(node, " ", rail, " port 1 passes port check ", k, ".")));
    }
  }
  for (const char* id : {"qos.ecn", "qos.traffic_class"}) {
    add(RingCheck(id, node, "mlx5_0", v1::Finding::skipped,
                  absl::StrCat(node, " mlx5_0 port 1: plan sets fabric.roce.lossless: false.")));
  }
  add(RingCheck("clock.ntp", node, "", v1::Finding::skipped,
                absl::StrCat(node, ": plan sets expect.ntp_synced: false.")));
  add(RingCheck("gpu.count", node, "", v1::Finding::skipped,
                absl::StrCat(node, ": plan lists no GPUs for this node.")));
}

// Turns the check `index` into a failure (or a failing warning) with a
// message and remedy naming its node.
inline void FailCheck(v1::Certificate& c, int index, bool warning) {
  v1::Finding* f = c.mutable_checks(index);
  f->set_status(v1::Finding::fail);
  f->set_severity(warning ? v1::Finding::warning : v1::Finding::error);
  f->set_observed("<off> & broken");
  f->set_message(absl::StrCat(f->node(), " ", f->id(), " is off: seen <off>."));
  f->set_remedy(absl::StrCat("fix ", f->id(), " on ", f->node(), " & re-run."));
  c.set_verdict("not-certified");
}

// `nodes` ring nodes with inventories and checks. Every 100th node (n0007,
// n0107, ...) fails port.check03 on mlx5_1 and every 50th (n0013, ...) warns
// on node.check05; n0042 runs its mlx5_1 port at 200 Gb/s (a distinct
// inventory), and n0099 did not answer (no inventory, its checks unknown).
inline v1::Certificate LargeCertificate(int nodes) {
  v1::Certificate c = RingCertificate(nodes);
  for (int i = 0; i < nodes; ++i) {
    v1::NodeResult* node = c.mutable_nodes(i);
    node->set_agent(absl::StrCat(RingAddress(1, i), ":7070"));
    node->set_agent_version("0.1.0");
    node->set_clock_measured(true);
    node->set_clock_offset_ms(0.1 * (i % 7));
    node->set_clock_uncertainty_ms(0.05);
    *node->mutable_inventory() = RingInventory(i);
    const int first = c.checks_size();
    AddRingChecks(c, node->name());
    if (i % 100 == 7) FailCheck(c, first + 20 + 12 + 3, /*warning=*/false);
    if (i % 50 == 13) FailCheck(c, first + 5, /*warning=*/true);
  }
  if (nodes > 42) {
    c.mutable_nodes(42)
        ->mutable_inventory()
        ->mutable_rdma_devices(1)
        ->mutable_ports(0)
        ->set_rate_gbps(200);
  }
  if (nodes > 99) {
    v1::NodeResult* node = c.mutable_nodes(99);
    node->set_reachable(false);
    node->set_error("connect: connection refused");
    node->clear_inventory();
    node->set_clock_measured(false);
    c.set_verdict("not-certified");
    for (auto& f : *c.mutable_checks()) {
      if (f.node() == node->name() && f.status() == v1::Finding::pass) {
        f.set_status(v1::Finding::unknown);
        f.set_message(absl::StrCat(node->name(), " did not answer."));
      }
    }
  }
  for (const auto& f : c.checks()) {
    if (f.status() == v1::Finding::fail || f.status() == v1::Finding::unknown) {
      *c.add_findings() = f;
    }
    if (f.status() == v1::Finding::skipped) {
      v1::SkippedTest* s = c.add_skipped();
      s->set_kind("check");
      s->set_key(f.key());
      s->set_reason(f.message());
    }
  }
  return c;
}

}  // namespace clustercert::controller::report::testing
