#include "controller/report/html_inventory.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/time_format.h"
#include "controller/report/html_parts.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

template <typename T>
std::string Opt(bool has, T value, absl::string_view suffix = "") {
  return has ? absl::StrCat(value, suffix) : std::string("?");
}

std::string OptNumber(bool has, double value, absl::string_view suffix = "") {
  return has ? absl::StrCat(FormatNumber(value), suffix) : std::string("?");
}

// Priorities whose bit is set: 0x18 -> "3,4"; "none" for 0.
std::string Priorities(uint32_t mask) {
  std::vector<int> bits;
  for (int i = 0; i < 8; ++i) {
    if (mask & (1u << i)) bits.push_back(i);
  }
  return bits.empty() ? std::string("none") : absl::StrJoin(bits, ",");
}

void AddUnknowns(std::vector<std::vector<HtmlCell>>& rows, const std::string& where,
                 const google::protobuf::RepeatedPtrField<v1::Unknown>& unknowns) {
  for (const auto& unknown : unknowns) {
    rows.push_back(
        {Text(where), Text(unknown.field()), Text(unknown.path()), Text(unknown.reason())});
  }
}

using Rows = std::vector<std::pair<std::string, std::string>>;

// Only when the agent read a fixture tree instead of the host's /sys.
void SysfsRootRow(const v1::Inventory& inv, Rows& rows) {
  if (inv.sysfs_root() != "/" && !inv.sysfs_root().empty()) {
    rows.emplace_back("sysfs root", inv.sysfs_root());
  }
}

// What is this node's own: its names, addresses and when it answered.
void IdentityRows(const v1::Inventory& inv, const v1::NodeResult& node, Rows& rows) {
  rows.emplace_back("hostname", inv.hostname());
  rows.emplace_back("agent",
                    absl::StrCat(node.agent(), node.agent_version().empty() ? "" : " (",
                                 node.agent_version(), node.agent_version().empty() ? "" : ")"));
  if (!inv.management_address().empty()) {
    rows.emplace_back("management", absl::StrCat(inv.management_address(),
                                                 inv.management_netdev().empty() ? "" : " on ",
                                                 inv.management_netdev()));
  }
  SysfsRootRow(inv, rows);
  if (inv.collected_unix_ms() > 0) {
    rows.emplace_back(
        "collected",
        absl::StrCat(FormatUtc(absl::FromUnixMillis(inv.collected_unix_ms())),
                     inv.collect_micros() > 0 ? " in " : "",
                     inv.collect_micros() > 0 ? FormatDurationMs(inv.collect_micros() / 1000)
                                              : std::string()));
  }
}

void StackRows(const v1::Inventory& inv, Rows& rows) {
  const v1::Stack& stack = inv.stack();
  rows.emplace_back("OFED", stack.ofed_version().empty()
                                ? absl::StrCat("none (", stack.ofed_source(), ")")
                                : stack.ofed_version());
  rows.emplace_back("rdma-core", stack.rdma_core_version());
  rows.emplace_back("peer memory",
                    absl::StrCat(stack.peermem_loaded() ? "loaded" : "not loaded",
                                 stack.peermem_source().empty() ? "" : " (", stack.peermem_source(),
                                 stack.peermem_source().empty() ? "" : ")"));
  std::vector<std::string> loaded, missing;
  for (const auto& module : stack.modules()) {
    (module.loaded() ? loaded : missing).push_back(module.name());
  }
  if (!loaded.empty()) rows.emplace_back("modules loaded", absl::StrJoin(loaded, ", "));
  if (!missing.empty()) rows.emplace_back("modules not loaded", absl::StrJoin(missing, ", "));
  const v1::GpuRuntime& gpu = inv.gpu_runtime();
  std::string gpu_text;
  if (gpu.driver_present()) {
    gpu_text = absl::StrCat("driver ", gpu.driver_version(), ", runtime ", gpu.runtime_version(),
                            ", ", gpu.gpus_size(), " GPU(s)");
  } else {
    gpu_text = gpu.reason().empty() ? std::string("no driver") : gpu.reason();
  }
  rows.emplace_back("GPU driver", gpu_text);
}

std::string ClockSyncText(const v1::Clock& clock) {
  return clock.has_synchronized() ? (clock.synchronized() ? "synchronized" : "NOT synchronized")
                                  : std::string("synchronization unknown");
}

// The clock's state, its error bounds and offset (which differ on every
// node, so a shared view keeps only the state).
void ClockRows(const v1::Inventory& inv, const v1::NodeResult& node, bool shared, Rows& rows) {
  const v1::Clock& clock = inv.clock();
  if (shared) {
    rows.emplace_back("clock", ClockSyncText(clock));
    return;
  }
  rows.emplace_back("clock", ClockErrorText(clock));
  if (!clock.source().empty()) rows.emplace_back("clock source", clock.source());
  if (node.clock_measured()) rows.emplace_back("offset from controller", ClockOffsetText(node));
}

std::string Summary(const v1::Inventory& inv, const v1::NodeResult& node, bool shared) {
  Rows rows;
  if (shared) {
    rows.emplace_back("agent version", node.agent_version());
    SysfsRootRow(inv, rows);
  } else {
    IdentityRows(inv, node, rows);
  }
  StackRows(inv, rows);
  ClockRows(inv, node, shared, rows);
  return KeyValueTable(rows);
}

// "2 (2 RoCE v2) 1:10.0.0.1"; a shared view counts the IPv4 addresses
// instead of naming them.
std::string GidsText(const v1::RdmaPort& port, bool shared) {
  int roce_v2 = 0;
  std::vector<std::string> ipv4;
  for (const auto& gid : port.gids()) {
    if (gid.type() == "RoCE v2") ++roce_v2;
    if (!gid.ipv4().empty()) ipv4.push_back(absl::StrCat(gid.index(), ":", gid.ipv4()));
  }
  std::string gids = absl::StrCat(port.gids_size(), " (", roce_v2, " RoCE v2)");
  if (ipv4.empty()) return gids;
  if (shared) return absl::StrCat(gids, ", ", ipv4.size(), " with IPv4");
  return absl::StrCat(gids, " ", absl::StrJoin(ipv4, " "));
}

// Firmware, then on InfiniBand the port's LID and the SM's; a shared view
// leaves out the port's own LID.
std::string FirmwareText(const v1::RdmaDevice& device, const v1::RdmaPort& port, bool shared) {
  if (port.link_layer() != "InfiniBand") return device.fw_ver();
  const std::string sm = Opt(port.has_sm_lid(), port.sm_lid());
  if (shared) return absl::StrCat(device.fw_ver(), "; SM LID ", sm);
  return absl::StrCat(device.fw_ver(), "; LID/SM ", Opt(port.has_lid(), port.lid()), " / ", sm);
}

std::string RateText(const v1::RdmaPort& port) {
  std::string rate = port.has_rate_gbps() ? absl::StrCat(FormatNumber(port.rate_gbps()), " Gb/s")
                                          : std::string("?");
  if (port.has_width() || !port.speed_name().empty()) {
    absl::StrAppend(&rate, " (", port.has_width() ? absl::StrCat(port.width(), "X ") : "",
                    port.speed_name(), ")");
  }
  return rate;
}

std::string RdmaTable(const v1::Inventory& inv, bool shared) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& device : inv.rdma_devices()) {
    if (device.ports().empty()) {
      rows.push_back({Text(device.name()), Text("-"), Text("no ports"), Text(""), Text(""),
                      Text(""), Text(""), Text(""), Text(""), Text(device.fw_ver()),
                      Text(device.pci_address())});
    }
    for (const auto& port : device.ports()) {
      std::string mtu = Opt(port.has_active_mtu(), port.active_mtu());
      if (!port.active_mtu_source().empty() && port.active_mtu_source() != "ibv_query_port") {
        absl::StrAppend(&mtu, " (", port.active_mtu_source(), ")");
      }
      const bool active = port.state() == "ACTIVE";
      std::string device_text = device.name();
      if (!device.parent_netdev().empty())
        absl::StrAppend(&device_text, " (on ", device.parent_netdev(), ")");
      rows.push_back({Text(device_text), Text(absl::StrCat(port.port())),
                      Text(port.state().empty() ? "?" : port.state(), active ? "ok" : "bad"),
                      Text(port.phys_state().empty() ? "?" : port.phys_state(),
                           port.phys_state() == "LinkUp" ? "ok" : "bad"),
                      Text(RateText(port)), Text(port.link_layer()), Text(mtu), Text(port.netdev()),
                      Text(GidsText(port, shared)), Text(FirmwareText(device, port, shared)),
                      Text(device.pci_address())});
    }
  }
  if (rows.empty()) return "<p class=\"muted\">No RDMA devices.</p>\n";
  return HtmlTable({"RDMA device", "port", "state", "phys", "rate", "link layer", "active MTU",
                    "netdev", "GIDs", "firmware", "PCI"},
                   rows, "compact");
}

std::string NetdevTable(const v1::Inventory& inv, bool shared) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& netdev : inv.netdevs()) {
    std::string speed = netdev.has_speed_mbps()
                            ? absl::StrCat(FormatNumber(netdev.speed_mbps() / 1000.0), " Gb/s")
                            : std::string("?");
    rows.push_back(
        {Text(netdev.name()), Text(netdev.operstate(), netdev.operstate() == "up" ? "ok" : ""),
         Text(Opt(netdev.has_mtu(), netdev.mtu())), Text(speed), Text(netdev.pci_address()),
         Text(absl::StrJoin(netdev.rdma_devices(), ", ")),
         Text(shared && !netdev.ipv4().empty() ? absl::StrCat(netdev.ipv4_size(), " address(es)")
                                               : absl::StrJoin(netdev.ipv4(), ", "))});
  }
  if (rows.empty()) return "";
  return HtmlTable({"netdev", "state", "MTU", "speed", "PCI", "RDMA", "IPv4"}, rows, "compact");
}

std::string PciTable(const v1::Inventory& inv) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& fn : inv.pci()) {
    const std::string current =
        absl::StrCat("Gen", Opt(fn.has_current_gen(), fn.current_gen()), " x",
                     Opt(fn.has_current_width(), fn.current_width()), " (",
                     OptNumber(fn.has_current_speed_gts(), fn.current_speed_gts(), " GT/s"), ")");
    const std::string max = absl::StrCat(
        "Gen", Opt(fn.has_max_gen(), fn.max_gen()), " x", Opt(fn.has_max_width(), fn.max_width()),
        " (", OptNumber(fn.has_max_speed_gts(), fn.max_speed_gts(), " GT/s"), ")");
    const bool degraded =
        (fn.has_current_gen() && fn.has_max_gen() && fn.current_gen() < fn.max_gen()) ||
        (fn.has_current_width() && fn.has_max_width() && fn.current_width() < fn.max_width());
    rows.push_back({Text(fn.address()), Text(fn.role()), Text(fn.name()),
                    Text(current, degraded ? "bad" : ""), Text(max),
                    Text(Opt(fn.has_numa_node(), fn.numa_node())),
                    Text(absl::StrCat(fn.vendor_id(), ":", fn.device_id()))});
  }
  if (rows.empty()) return "";
  return HtmlTable({"PCI", "role", "name", "link now", "link max", "NUMA", "vendor:device"}, rows,
                   "compact");
}

std::string GpuTables(const v1::Inventory& inv, bool shared) {
  std::string out;
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& gpu : inv.gpu_runtime().gpus()) {
    rows.push_back({Text(absl::StrCat(gpu.index())), Text(gpu.name()), Text(gpu.pci_bus_id()),
                    Text(absl::StrCat(FormatNumber(gpu.memory_bytes() / 1073741824.0), " GiB")),
                    Text(shared ? std::string("-") : gpu.uuid())});
  }
  if (!rows.empty()) {
    out += HtmlTable({"GPU", "name", "PCI", "memory", shared ? "UUID (per node)" : "UUID"}, rows,
                     "compact");
  }
  rows.clear();
  for (const auto& path : inv.gpu_nic_paths()) {
    rows.push_back(
        {Text(absl::StrCat(path.gpu(), " ", path.gpu_pci())),
         Text(absl::StrCat(path.nic(), " ", path.nic_pci())),
         Text(path.relation(), path.relation() == "PIX" || path.relation() == "PXB" ? "ok" : "")});
  }
  if (!rows.empty()) out += HtmlTable({"GPU", "NIC", "PCIe relation"}, rows, "compact");
  return out;
}

std::string QosTable(const v1::Inventory& inv) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& qos : inv.qos()) {
    std::vector<std::string> dscp;
    for (const auto& entry : qos.dscp_priorities()) {
      dscp.push_back(absl::StrCat(entry.dscp(), "\xE2\x86\x92", entry.priority()));
    }
    rows.push_back(
        {Text(absl::StrCat(qos.netdev(), " (", qos.rdma_device(), ")")),
         Text(qos.has_pfc_enabled_mask() ? Priorities(qos.pfc_enabled_mask()) : "?"),
         Text(qos.trust().empty() ? "?" : qos.trust()),
         Text(dscp.empty() ? "-" : absl::StrJoin(dscp, " ")),
         Text(Opt(qos.has_traffic_class(), qos.traffic_class())),
         Text(absl::StrCat(qos.has_ecn_np_mask() ? Priorities(qos.ecn_np_mask()) : "?", " / ",
                           qos.has_ecn_rp_mask() ? Priorities(qos.ecn_rp_mask()) : "?"))});
  }
  if (rows.empty()) return "";
  return HtmlTable({"RoCE netdev", "PFC priorities", "trust", "DSCP\xE2\x86\x92prio",
                    "traffic class", "ECN np / rp"},
                   rows, "compact");
}

std::string UnknownsTable(const v1::Inventory& inv) {
  std::vector<std::vector<HtmlCell>> rows;
  AddUnknowns(rows, "node", inv.unknowns());
  for (const auto& device : inv.rdma_devices()) {
    AddUnknowns(rows, device.name(), device.unknowns());
    for (const auto& port : device.ports()) {
      AddUnknowns(rows, absl::StrCat(device.name(), " port ", port.port()), port.unknowns());
    }
  }
  for (const auto& netdev : inv.netdevs()) AddUnknowns(rows, netdev.name(), netdev.unknowns());
  for (const auto& fn : inv.pci()) AddUnknowns(rows, fn.address(), fn.unknowns());
  AddUnknowns(rows, "stack", inv.stack().unknowns());
  for (const auto& qos : inv.qos())
    AddUnknowns(rows, absl::StrCat("qos ", qos.netdev()), qos.unknowns());
  AddUnknowns(rows, "clock", inv.clock().unknowns());
  if (rows.empty()) return "";
  return absl::StrCat(
      "<details><summary>", rows.size(), " fact(s) the agent could not read</summary>\n",
      HtmlTable({"where", "field", "path", "reason"}, rows, "compact"), "</details>\n");
}

std::string InventoryTables(const v1::NodeResult& node, bool shared) {
  const v1::Inventory& inv = node.inventory();
  return absl::StrCat(Summary(inv, node, shared), RdmaTable(inv, shared), NetdevTable(inv, shared),
                      PciTable(inv), GpuTables(inv, shared), QosTable(inv), UnknownsTable(inv));
}

}  // namespace

std::string ClockErrorText(const v1::Clock& clock) {
  std::string text = ClockSyncText(clock);
  if (clock.has_est_error_us())
    absl::StrAppend(&text, ", est. error ", clock.est_error_us(), " us");
  if (clock.has_max_error_us()) absl::StrAppend(&text, ", max error ", clock.max_error_us(), " us");
  return text;
}

std::string ClockOffsetText(const v1::NodeResult& node) {
  if (!node.clock_measured()) return "";
  return absl::StrCat(FormatNumber(node.clock_offset_ms()), " ms \xC2\xB1 ",
                      FormatNumber(node.clock_uncertainty_ms()), " ms");
}

std::string NodeInventoryHtml(const v1::NodeResult& node) {
  std::string out =
      absl::StrCat("<section class=\"node\" id=\"node-", Anchor(node.name()), "\">\n<h3>",
                   HtmlEscape(node.name()), " ",
                   node.reachable() ? Badge("pass", "reachable") : Badge("fail", "unreachable"));
  if (IsCarried(node.carried())) {
    absl::StrAppend(&out, " ", Badge("carried", CarriedText(node.carried())));
  }
  out += "</h3>\n";
  if (!node.reachable()) {
    absl::StrAppend(&out, "<p class=\"error\">", HtmlEscape(node.agent()), ": ",
                    HtmlEscape(node.error().empty() ? "no answer" : node.error()), "</p>\n");
  }
  if (!node.has_inventory()) {
    out += "<p class=\"muted\">No inventory was collected from this node.</p>\n</section>\n";
    return out;
  }
  absl::StrAppend(&out, InventoryTables(node, /*shared=*/false), "</section>\n");
  return out;
}

std::string SharedInventoryHtml(const v1::NodeResult& node) {
  if (!node.has_inventory()) {
    return "<p class=\"muted\">No inventory was collected from these nodes.</p>\n";
  }
  return InventoryTables(node, /*shared=*/true);
}

}  // namespace clustercert::controller::report
