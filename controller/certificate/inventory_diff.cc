#include "controller/certificate/inventory_diff.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/certificate/diff_support.h"

namespace clustercert::controller {
namespace {

std::string OrUnset(const std::string& value) { return value.empty() ? "unset" : value; }

std::string WithUnit(const std::string& value, const char* unit) {
  if (value.empty() || unit[0] == '\0') return value;
  return absl::StrCat(value, " ", unit);
}

// Appends the entries about one node.
class NodeSink {
 public:
  NodeSink(std::string node, std::vector<DiffEntry>* entries)
      : node_(std::move(node)), entries_(entries) {}

  const std::string& node() const { return node_; }

  DiffEntry& Add(DiffKind kind, std::string subject, std::string field, std::string old_value,
                 std::string new_value, std::string text) {
    DiffEntry entry = MakeDiffEntry(kind, std::move(subject), std::move(field),
                                    std::move(old_value), std::move(new_value), {node_});
    entry.text = std::move(text);
    entries_->push_back(std::move(entry));
    return entries_->back();
  }

  // A text fact, listed when it changed; `note` says what the change means.
  void Text(DiffKind kind, const std::string& subject, const char* label, const char* field,
            const std::string& old_value, const std::string& new_value,
            const std::string& note = "") {
    if (old_value == new_value) return;
    std::string text =
        absl::StrCat(subject, " ", label, " ", OrUnset(old_value), " -> ", OrUnset(new_value));
    if (!note.empty()) absl::StrAppend(&text, ": ", note);
    Add(kind, subject, field, old_value, new_value, std::move(text));
  }

  // A state that should stay `good`: leaving it is a regression (`lost`
  // says what to check), coming back to it an improvement.
  void State(DiffKind kind, const std::string& subject, const char* label, const char* field,
             const std::string& old_value, const std::string& new_value, const std::string& good,
             const std::string& lost) {
    if (old_value == new_value) return;
    std::string text =
        absl::StrCat(subject, " ", label, " ", OrUnset(old_value), " -> ", OrUnset(new_value));
    const bool regression = old_value == good;
    if (regression) absl::StrAppend(&text, ": ", lost);
    DiffEntry& entry = Add(kind, subject, field, old_value, new_value, std::move(text));
    entry.regression = regression;
    entry.improvement = new_value == good;
  }

  // A numeric capability: listed when it changed, a regression when it fell
  // (`fell` says what to check).
  void Capability(DiffKind kind, const std::string& subject, const char* label, const char* field,
                  bool has_old, double old_value, bool has_new, double new_value, const char* unit,
                  const std::string& fell) {
    if (has_old == has_new && (!has_old || old_value == new_value)) return;
    const std::string old_text = has_old ? FormatDiffValue(old_value) : "";
    const std::string new_text = has_new ? FormatDiffValue(new_value) : "";
    // "rate 200 -> 100 Gb/s"; "rate unset -> 100 Gb/s" when a side lacks it.
    std::string text = absl::StrCat(
        subject, " ", label, " ", has_old && has_new ? old_text : OrUnset(WithUnit(old_text, unit)),
        " -> ", OrUnset(WithUnit(new_text, unit)));
    DiffEntry& entry = Add(kind, subject, field, old_text, new_text, "");
    entry.unit = unit;
    if (has_old && has_new) {
      entry.has_numbers = true;
      entry.old_number = old_value;
      entry.new_number = new_value;
      entry.regression = new_value < old_value;
      entry.improvement = new_value > old_value;
      if (entry.regression) absl::StrAppend(&text, ": ", fell);
    } else if (!has_new) {
      absl::StrAppend(&text, ": NEW could not read it (its check says why)");
    }
    entry.text = std::move(text);
  }

  // The part at one place (a NIC's PCI function by its name, a GPU by its
  // index) carries another serial number: it was swapped. Listed once per
  // part, not a regression; nothing is said when a side has no serial (an
  // older agent, an unreadable VPD).
  void Swapped(const std::string& name, const std::string& old_serial,
               const std::string& new_serial, const std::string& old_part,
               const std::string& new_part) {
    if (old_serial.empty() || new_serial.empty() || old_serial == new_serial) return;
    const std::string subject = absl::StrCat(node_, " ", name);
    for (const DiffEntry& entry : *entries_) {
      if (entry.kind == DiffKind::kIdentityChanged && entry.subject == subject &&
          entry.field == "serial_number" && entry.new_value == new_serial) {
        return;  // the GPU's PCI function said it already
      }
    }
    std::string text =
        absl::StrCat(name, " on ", node_, " was swapped: serial ", old_serial, " -> ", new_serial);
    if (!old_part.empty() && !new_part.empty() && old_part != new_part) {
      absl::StrAppend(&text, " (part ", old_part, " -> ", new_part, ")");
    } else if (!new_part.empty() || !old_part.empty()) {
      absl::StrAppend(&text, " (part ", new_part.empty() ? old_part : new_part, ")");
    }
    Add(DiffKind::kIdentityChanged, subject, "serial_number", old_serial, new_serial,
        std::move(text));
  }

  void Added(const std::string& subject, const char* what) {
    Add(DiffKind::kComponentAdded, subject, "", "", "present",
        absl::StrCat(subject, ": ", what, " new in NEW"));
  }
  void Removed(const std::string& subject, const char* what, const std::string& check) {
    DiffEntry& entry = Add(DiffKind::kComponentRemoved, subject, "", "present", "",
                           absl::StrCat(subject, ": ", what, " in OLD is gone in NEW: ", check));
    entry.regression = true;
  }

 private:
  std::string node_;
  std::vector<DiffEntry>* entries_;
};

constexpr char kCable[] = "check the cable/DAC/transceiver and the switch port speed";
constexpr char kPcie[] = "a slower PCIe link: reseat the card or check the slot and its riser";

std::string FirstGid(const v1::RdmaPort& port) {
  for (const auto& gid : port.gids()) {
    if (gid.index() == 0) return gid.gid();
  }
  return "";
}

void DiffPort(NodeSink& sink, const std::string& subject, const v1::RdmaPort& o,
              const v1::RdmaPort& n) {
  sink.State(DiffKind::kLinkChanged, subject, "state", "state", o.state(), n.state(), "ACTIVE",
             "the port is no longer ACTIVE: check the cable and the switch port");
  sink.State(DiffKind::kLinkChanged, subject, "phys_state", "phys_state", o.phys_state(),
             n.phys_state(), "LinkUp", "no physical link: check the cable/transceiver");
  sink.Capability(DiffKind::kLinkChanged, subject, "rate", "rate_gbps", o.has_rate_gbps(),
                  o.rate_gbps(), n.has_rate_gbps(), n.rate_gbps(), "Gb/s",
                  absl::StrCat("a slower link (", OrUnset(n.rate_text()), "): ", kCable));
  sink.Capability(DiffKind::kLinkChanged, subject, "width", "width", o.has_width(), o.width(),
                  n.has_width(), n.width(), "lanes",
                  "fewer lanes: reseat the cable/transceiver or replace it");
  sink.Text(DiffKind::kLinkChanged, subject, "link layer", "link_layer", o.link_layer(),
            n.link_layer(),
            "the port runs another protocol (check the port's mlxconfig LINK_TYPE)");
  sink.Capability(DiffKind::kLinkChanged, subject, "active MTU", "active_mtu", o.has_active_mtu(),
                  o.active_mtu(), n.has_active_mtu(), n.active_mtu(), "bytes",
                  "a smaller MTU: check the netdev MTU and the switch port's MTU");
  sink.Text(DiffKind::kIdentityChanged, subject, "GID[0]", "gid0", FirstGid(o), FirstGid(n),
            "a different port GUID/MAC (swapped NIC or port?)");
  sink.Text(DiffKind::kConfigChanged, subject, "netdev", "netdev", o.netdev(), n.netdev());
  if (o.has_sm_lid() && n.has_sm_lid() && o.sm_lid() != n.sm_lid()) {
    sink.Text(DiffKind::kConfigChanged, subject, "SM LID", "sm_lid", absl::StrCat(o.sm_lid()),
              absl::StrCat(n.sm_lid()), "another subnet manager (a different switch or fabric?)");
  }
}

void DiffRdmaDevice(NodeSink& sink, const v1::RdmaDevice& o, const v1::RdmaDevice& n) {
  const std::string subject = absl::StrCat(sink.node(), " ", o.name());
  sink.Text(DiffKind::kIdentityChanged, subject, "node GUID", "node_guid", o.node_guid(),
            n.node_guid(), "a different NIC (swapped?)");
  if (o.node_guid() == n.node_guid()) {
    sink.Text(DiffKind::kIdentityChanged, subject, "system image GUID", "sys_image_guid",
              o.sys_image_guid(), n.sys_image_guid(), "a different adapter (swapped?)");
  }
  sink.Text(DiffKind::kIdentityChanged, subject, "board id", "board_id", o.board_id(), n.board_id(),
            "a different board model (PSID)");
  sink.Text(DiffKind::kIdentityChanged, subject, "HCA type", "hca_type", o.hca_type(), n.hca_type(),
            "a different HCA model");
  sink.Text(DiffKind::kIdentityChanged, subject, "PCI address", "pci_address", o.pci_address(),
            n.pci_address(), "the NIC sits in another PCIe slot");
  sink.Text(DiffKind::kFirmwareChanged, subject, "firmware", "fw_ver", o.fw_ver(), n.fw_ver(),
            "firmware updated, or a different NIC");
  sink.Text(DiffKind::kConfigChanged, subject, "parent netdev", "parent_netdev", o.parent_netdev(),
            n.parent_netdev());
  MatchByKey(
      o.ports(), n.ports(), [](const v1::RdmaPort& p) { return absl::StrCat(p.port()); },
      [&](const std::string& port, const v1::RdmaPort* op, const v1::RdmaPort* np) {
        const std::string port_subject = absl::StrCat(subject, " port ", port);
        if (op == nullptr) return sink.Added(port_subject, "a port");
        if (np == nullptr) return sink.Removed(port_subject, "a port", "check the NIC's firmware");
        DiffPort(sink, port_subject, *op, *np);
      });
}

// The netdevs that carry data: RDMA-backed or on a PCI function (not lo,
// bridges or veths, which come and go).
bool IsDataNetdev(const v1::Netdev& netdev) {
  return !netdev.rdma_devices().empty() || !netdev.pci_address().empty();
}

void DiffNetdev(NodeSink& sink, const v1::Netdev& o, const v1::Netdev& n) {
  const std::string subject = absl::StrCat(sink.node(), " ", o.name());
  sink.State(DiffKind::kLinkChanged, subject, "operstate", "operstate", o.operstate(),
             n.operstate(), "up", "the link is down: check the cable and the switch port");
  sink.Capability(DiffKind::kLinkChanged, subject, "speed", "speed_mbps", o.has_speed_mbps(),
                  static_cast<double>(o.speed_mbps()), n.has_speed_mbps(),
                  static_cast<double>(n.speed_mbps()), "Mb/s",
                  absl::StrCat("a slower link: ", kCable));
  sink.Capability(DiffKind::kLinkChanged, subject, "MTU", "mtu", o.has_mtu(), o.mtu(), n.has_mtu(),
                  n.mtu(), "bytes", "a smaller MTU: set the netdev MTU back (ip link set mtu)");
  sink.Text(DiffKind::kIdentityChanged, subject, "PCI address", "pci_address", o.pci_address(),
            n.pci_address(), "the NIC sits in another PCIe slot");
}

void DiffPci(NodeSink& sink, const v1::PciFunction& o, const v1::PciFunction& n) {
  const std::string& name = o.name().empty() ? o.address() : o.name();
  sink.Swapped(name, o.serial_number(), n.serial_number(), o.part_number(), n.part_number());
  const std::string subject = absl::StrCat(sink.node(), " ", name, " PCIe");
  sink.Text(DiffKind::kIdentityChanged, subject, "address", "address", o.address(), n.address(),
            "the device sits in another PCIe slot");
  sink.Text(DiffKind::kIdentityChanged, subject, "vendor:device", "device_id",
            absl::StrCat(o.vendor_id(), ":", o.device_id()),
            absl::StrCat(n.vendor_id(), ":", n.device_id()), "a different part");
  sink.Capability(DiffKind::kPcieChanged, subject, "generation", "current_gen", o.has_current_gen(),
                  o.current_gen(), n.has_current_gen(), n.current_gen(), "", kPcie);
  sink.Capability(DiffKind::kPcieChanged, subject, "width", "current_width", o.has_current_width(),
                  o.current_width(), n.has_current_width(), n.current_width(), "lanes", kPcie);
  sink.Capability(DiffKind::kPcieChanged, subject, "speed", "current_speed_gts",
                  o.has_current_speed_gts(), o.current_speed_gts(), n.has_current_speed_gts(),
                  n.current_speed_gts(), "GT/s", kPcie);
  if (o.has_numa_node() && n.has_numa_node() && o.numa_node() != n.numa_node()) {
    sink.Text(DiffKind::kPcieChanged, subject, "NUMA node", "numa_node",
              absl::StrCat(o.numa_node()), absl::StrCat(n.numa_node()),
              "the device moved to another socket (check GPU/NIC placement)");
  }
}

void DiffGpus(NodeSink& sink, const v1::GpuRuntime& o, const v1::GpuRuntime& n) {
  const std::string& node = sink.node();
  sink.State(DiffKind::kSoftwareChanged, node, "GPU driver", "driver_present",
             o.driver_present() ? "present" : "absent", n.driver_present() ? "present" : "absent",
             "present", absl::StrCat("no GPU driver in NEW: ", n.reason()));
  sink.Text(DiffKind::kSoftwareChanged, node, "CUDA driver", "driver_version", o.driver_version(),
            n.driver_version());
  sink.Text(DiffKind::kSoftwareChanged, node, "CUDA runtime", "runtime_version",
            o.runtime_version(), n.runtime_version());
  sink.Capability(
      n.gpus_size() < o.gpus_size() ? DiffKind::kComponentRemoved : DiffKind::kComponentAdded, node,
      "GPU count", "gpu_count", true, o.gpus_size(), true, n.gpus_size(), "",
      "GPUs missing: check nvidia-smi, the PCIe slots and the driver log");
  MatchByKey(
      o.gpus(), n.gpus(), [](const v1::Gpu& g) { return absl::StrCat(g.index()); },
      [&](const std::string& index, const v1::Gpu* og, const v1::Gpu* ng) {
        if (og == nullptr || ng == nullptr) return;  // the count says it
        sink.Swapped(absl::StrCat("gpu", index), og->serial(), ng->serial(), og->part_number(),
                     ng->part_number());
        const std::string subject = absl::StrCat(node, " gpu", index);
        sink.Text(DiffKind::kIdentityChanged, subject, "model", "name", og->name(), ng->name(),
                  "a different GPU model");
        sink.Text(DiffKind::kIdentityChanged, subject, "UUID", "uuid", og->uuid(), ng->uuid(),
                  "a different GPU (swapped?)");
        sink.Text(DiffKind::kIdentityChanged, subject, "PCI bus id", "pci_bus_id", og->pci_bus_id(),
                  ng->pci_bus_id(), "the GPU sits in another PCIe slot");
      });
}

void DiffStack(NodeSink& sink, const v1::Stack& o, const v1::Stack& n) {
  const std::string& node = sink.node();
  sink.Text(DiffKind::kSoftwareChanged, node, "OFED", "ofed_version", o.ofed_version(),
            n.ofed_version());
  sink.Text(DiffKind::kSoftwareChanged, node, "rdma-core", "rdma_core_version",
            o.rdma_core_version(), n.rdma_core_version());
  sink.State(DiffKind::kSoftwareChanged, node, "peer memory", "peermem_loaded",
             o.peermem_loaded() ? "loaded" : "not loaded",
             n.peermem_loaded() ? "loaded" : "not loaded", "loaded",
             "GPUDirect RDMA lost: modprobe nvidia_peermem");
  MatchByKey(
      o.modules(), n.modules(), [](const v1::KernelModule& m) { return m.name(); },
      [&](const std::string& name, const v1::KernelModule* om, const v1::KernelModule* nm) {
        if (om == nullptr || nm == nullptr) return;  // another agent's list, not a change
        sink.State(DiffKind::kSoftwareChanged, absl::StrCat(node, " module ", name), "", "loaded",
                   om->loaded() ? "loaded" : "not loaded", nm->loaded() ? "loaded" : "not loaded",
                   "loaded", absl::StrCat("modprobe ", name));
      });
}

std::string MaskText(bool has, uint32_t mask) { return has ? absl::StrFormat("0x%02x", mask) : ""; }

void DiffQos(NodeSink& sink, const v1::NetdevQos& o, const v1::NetdevQos& n) {
  const std::string subject = absl::StrCat(sink.node(), " ", o.netdev(), " QoS");
  sink.Text(DiffKind::kConfigChanged, subject, "PFC mask", "pfc_enabled_mask",
            MaskText(o.has_pfc_enabled_mask(), o.pfc_enabled_mask()),
            MaskText(n.has_pfc_enabled_mask(), n.pfc_enabled_mask()));
  sink.Text(DiffKind::kConfigChanged, subject, "trust", "trust", o.trust(), n.trust());
  sink.Text(DiffKind::kConfigChanged, subject, "traffic class", "traffic_class",
            o.has_traffic_class() ? absl::StrCat(o.traffic_class()) : "",
            n.has_traffic_class() ? absl::StrCat(n.traffic_class()) : "");
  sink.Text(DiffKind::kConfigChanged, subject, "ECN NP mask", "ecn_np_mask",
            MaskText(o.has_ecn_np_mask(), o.ecn_np_mask()),
            MaskText(n.has_ecn_np_mask(), n.ecn_np_mask()));
  sink.Text(DiffKind::kConfigChanged, subject, "ECN RP mask", "ecn_rp_mask",
            MaskText(o.has_ecn_rp_mask(), o.ecn_rp_mask()),
            MaskText(n.has_ecn_rp_mask(), n.ecn_rp_mask()));
  auto dscp = [](const v1::NetdevQos& q) {
    std::vector<std::string> parts;
    for (const auto& e : q.dscp_priorities())
      parts.push_back(absl::StrCat(e.dscp(), ":", e.priority()));
    return absl::StrJoin(parts, ",");
  };
  sink.Text(DiffKind::kConfigChanged, subject, "DSCP->priority", "dscp_priorities", dscp(o),
            dscp(n));
}

// The cable or transceiver in one rail port (matched by rail): another
// serial at the same place names the replacement, as Swapped names a NIC.
// Listed, not a regression. Nothing is said when a side has no module or no
// serial (not read: its cable.present finding says why).
void DiffRailPort(NodeSink& sink, const v1::RailPort& o, const v1::RailPort& n) {
  if (!o.has_module() || !n.has_module()) return;
  const v1::CableModule& om = o.module();
  const v1::CableModule& nm = n.module();
  if (om.serial().empty() || nm.serial().empty() || om.serial() == nm.serial()) return;
  std::string text = absl::StrCat("the cable/transceiver in ", o.rail(), " on ", sink.node(),
                                  " was replaced: serial ", om.serial(), " -> ", nm.serial());
  if (!om.part_number().empty() && !nm.part_number().empty() &&
      om.part_number() != nm.part_number()) {
    absl::StrAppend(&text, " (part ", om.part_number(), " -> ", nm.part_number(), ")");
  } else if (!nm.part_number().empty() || !om.part_number().empty()) {
    absl::StrAppend(&text, " (part ",
                    nm.part_number().empty() ? om.part_number() : nm.part_number(), ")");
  }
  sink.Add(DiffKind::kIdentityChanged, absl::StrCat(sink.node(), " ", o.rail(), " cable"),
           "module_serial", om.serial(), nm.serial(), std::move(text));
}

void DiffInventory(NodeSink& sink, const v1::Inventory& o, const v1::Inventory& n) {
  const std::string& node = sink.node();
  sink.Text(DiffKind::kIdentityChanged, node, "hostname", "hostname", o.hostname(), n.hostname(),
            "another host answers for this node");
  sink.Text(DiffKind::kConfigChanged, node, "management address", "management_address",
            o.management_address(), n.management_address());
  MatchByKey(
      o.rdma_devices(), n.rdma_devices(), [](const v1::RdmaDevice& d) { return d.name(); },
      [&](const std::string& name, const v1::RdmaDevice* od, const v1::RdmaDevice* nd) {
        const std::string subject = absl::StrCat(node, " ", name);
        if (od == nullptr) return sink.Added(subject, "an RDMA device");
        if (nd == nullptr) {
          return sink.Removed(subject, "an RDMA device",
                              "check the NIC (lspci), its driver and its firmware");
        }
        DiffRdmaDevice(sink, *od, *nd);
      });
  MatchByKey(
      o.netdevs(), n.netdevs(), [](const v1::Netdev& d) { return d.name(); },
      [&](const std::string& name, const v1::Netdev* od, const v1::Netdev* nd) {
        const std::string subject = absl::StrCat(node, " ", name);
        if (od == nullptr) {
          if (IsDataNetdev(*nd)) sink.Added(subject, "a netdev");
          return;
        }
        if (nd == nullptr) {
          if (IsDataNetdev(*od)) sink.Removed(subject, "a netdev", "check the NIC and its driver");
          return;
        }
        if (IsDataNetdev(*od) || IsDataNetdev(*nd)) DiffNetdev(sink, *od, *nd);
      });
  MatchByKey(
      o.pci(), n.pci(),
      [](const v1::PciFunction& f) { return f.name().empty() ? f.address() : f.name(); },
      [&](const std::string& name, const v1::PciFunction* of, const v1::PciFunction* nf) {
        const std::string subject = absl::StrCat(node, " ", name, " PCIe");
        if (of == nullptr) return sink.Added(subject, "a PCI function");
        if (nf == nullptr)
          return sink.Removed(subject, "a PCI function", "check lspci and the slot");
        DiffPci(sink, *of, *nf);
      });
  DiffGpus(sink, o.gpu_runtime(), n.gpu_runtime());
  DiffStack(sink, o.stack(), n.stack());
  MatchByKey(
      o.rail_ports(), n.rail_ports(), [](const v1::RailPort& p) { return p.rail(); },
      [&](const std::string&, const v1::RailPort* op, const v1::RailPort* np) {
        if (op != nullptr && np != nullptr) DiffRailPort(sink, *op, *np);
      });
  MatchByKey(
      o.qos(), n.qos(), [](const v1::NetdevQos& q) { return q.netdev(); },
      [&](const std::string&, const v1::NetdevQos* oq, const v1::NetdevQos* nq) {
        if (oq != nullptr && nq != nullptr) DiffQos(sink, *oq, *nq);
      });
}

void DiffNode(const v1::NodeResult& o, const v1::NodeResult& n, std::vector<DiffEntry>* entries) {
  NodeSink sink(o.name(), entries);
  if (o.reachable() != n.reachable()) {
    DiffEntry& entry = sink.Add(
        DiffKind::kNodeReachability, o.name(), "reachable",
        o.reachable() ? "reachable" : "unreachable", n.reachable() ? "reachable" : "unreachable",
        absl::StrCat(o.name(), " ", o.reachable() ? "reachable" : "unreachable", " -> ",
                     n.reachable() ? "reachable" : "unreachable"));
    entry.regression = o.reachable();
    entry.improvement = n.reachable();
    if (!n.reachable()) absl::StrAppend(&entry.text, ": ", n.error());
    return;
  }
  sink.Text(DiffKind::kSoftwareChanged, o.name(), "agent", "agent_version", o.agent_version(),
            n.agent_version());
  if (o.has_inventory() && n.has_inventory()) DiffInventory(sink, o.inventory(), n.inventory());
}

}  // namespace

void DiffNodeInventories(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                         std::vector<DiffEntry>* entries) {
  MatchByKey(
      old_cert.nodes(), new_cert.nodes(), [](const v1::NodeResult& n) { return n.name(); },
      [&](const std::string& name, const v1::NodeResult* o, const v1::NodeResult* n) {
        NodeSink sink(name, entries);
        if (o == nullptr) {
          sink.Add(DiffKind::kNodeAdded, name, "", "", "present",
                   absl::StrCat(name, " is new in NEW"));
          return;
        }
        if (n == nullptr) {
          DiffEntry& entry =
              sink.Add(DiffKind::kNodeRemoved, name, "", "present", "",
                       absl::StrCat(name, " is in OLD but not in NEW: NEW does not certify it"));
          entry.regression = true;
          return;
        }
        DiffNode(*o, *n, entries);
      });
}

}  // namespace clustercert::controller
