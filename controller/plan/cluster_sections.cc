#include "controller/plan/cluster_sections.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "controller/plan/cable_plan.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kNameRule = "a name of letters, digits, '.', '_' and '-' (e.g. node1)";
constexpr absl::string_view kAgentRule =
    "the node-agent's host:port with a port from 1 to 65535 (e.g. 192.168.100.11:7070; "
    "an IPv6 address goes in brackets, [fd00::11]:7070)";
constexpr absl::string_view kDataIpRule =
    "an IPv4 or IPv6 address on the data plane (e.g. 10.10.1.1), without a port";
constexpr absl::string_view kRailsRule =
    "a list of RDMA device names, each a name or a map with name, switch and port (e.g. "
    "[mlx5_0, {name: mlx5_1, switch: leaf2, port: swp1}])";
constexpr absl::string_view kRailRule =
    "an RDMA device name of letters, digits, '.', '_' and '-' (e.g. mlx5_0)";
constexpr absl::string_view kSwitchRule =
    "the switch's name as LLDP announces it, of letters, digits, '.', '_' and '-' (e.g. leaf2)";
constexpr absl::string_view kPortRule =
    "the switch's name for the port, printable ASCII of at most 64 characters (e.g. swp1, "
    "Ethernet14)";
constexpr absl::string_view kLeafRule =
    "a name of letters, digits, '.', '_' and '-': the node's leaf switch or rail group (e.g. "
    "leaf3)";

std::optional<FabricType> FabricTypeFromName(const std::string& name) {
  if (name == "roce") return FabricType::kRoce;
  if (name == "infiniband") return FabricType::kInfiniband;
  if (name == "ethernet") return FabricType::kEthernet;
  return std::nullopt;
}

void ParseRoce(MapReader& fabric, RoceSettings* roce) {
  std::optional<MapReader> section =
      fabric.Map("roce", "a map with gid_index, pfc_priority, dscp, trust, ecn and lossless");
  if (!section.has_value()) return;
  section->Int("gid_index", 0, 255,
               "an integer from 0 to 255 (the RoCE v2 GID table index: 3 on a typical mlx5 "
               "port, 1 on soft-RoCE)",
               &roce->gid_index);
  section->Int("pfc_priority", 0, 7,
               "an integer from 0 to 7 (the one priority with PFC on; 3 by convention)",
               &roce->pfc_priority);
  section->Int("dscp", 0, 63,
               "an integer from 0 to 63 (the DSCP marked on RDMA traffic; 26 gives "
               "traffic_class 106)",
               &roce->dscp);
  section->Enum("trust", {"dscp", "pcp"}, &roce->trust);
  section->Bool("ecn", &roce->ecn);
  section->Bool("lossless", &roce->lossless);
  section->Finish();
}

void ParseInfiniband(MapReader& fabric, InfinibandSettings* infiniband) {
  std::optional<MapReader> section = fabric.Map("infiniband", "a map with service_level");
  if (!section.has_value()) return;
  section->Int("service_level", 0, 15,
               "an integer from 0 to 15 (the IB service level the verbs tests send on; the "
               "subnet manager's SL-to-VL table maps it to a virtual lane)",
               &infiniband->service_level);
  section->Finish();
}

// switch and port of a rail map or of nodes[].cable: both or neither.
std::optional<CableEnd> ParseCableEnd(MapReader& entry) {
  FieldReader& reader = *entry.reader();
  std::optional<YamlField> switch_field = entry.Get("switch");
  std::optional<YamlField> port_field = entry.Get("port");
  if (!switch_field.has_value() && !port_field.has_value()) return std::nullopt;
  if (!switch_field.has_value() || !port_field.has_value()) {
    reader.ReportAt(
        entry.field().at, entry.field().path,
        absl::StrCat(entry.field().path, " gives ",
                     switch_field.has_value() ? "switch but not port" : "port but not switch",
                     "; give both, the far end of the port's cable (e.g. {switch: leaf2, "
                     "port: swp1}), or neither."));
    return std::nullopt;
  }
  std::optional<std::string> switch_name = reader.Name(*switch_field, kSwitchRule);
  std::optional<std::string> port = reader.String(*port_field, kPortRule);
  if (port.has_value() && !IsSwitchPortName(*port)) {
    reader.Reject(*port_field, kPortRule);
    port.reset();
  }
  if (!switch_name.has_value() || !port.has_value()) return std::nullopt;
  return CableEnd{*switch_name, *port, entry.field().path};
}

// One rails entry: a device name, or {name, switch, port}.
std::optional<std::string> ParseRail(FieldReader& reader, const YamlField& item,
                                     std::optional<CableEnd>* end) {
  if (!item.value.IsMap()) return reader.Name(item, kRailRule);
  MapReader entry(&reader, item);
  std::optional<std::string> rail;
  if (std::optional<YamlField> name = entry.Require("name", kRailRule)) {
    rail = reader.Name(*name, kRailRule);
  }
  *end = ParseCableEnd(entry);
  entry.Finish();
  return rail;
}

void ParseRails(FieldReader& reader, const YamlField& field, Node* node,
                std::vector<YamlCableEnd>* ends) {
  std::optional<std::vector<YamlField>> items = reader.Items(field, kRailsRule);
  if (!items.has_value()) return;
  std::unordered_map<std::string, size_t> first_with_name;  // linear, however long the list
  for (size_t i = 0; i < items->size(); ++i) {
    const YamlField& item = (*items)[i];
    std::optional<CableEnd> end;
    std::optional<std::string> rail = ParseRail(reader, item, &end);
    if (!rail.has_value()) continue;
    const auto [first, inserted] = first_with_name.try_emplace(*rail, i);
    if (!inserted) {
      reader.Report(item, absl::StrCat(item.path, " is ", *rail, ", already listed as ",
                                       (*items)[first->second].path,
                                       "; each rail may appear once per node."));
      continue;
    }
    node->rails.push_back(*rail);
    if (end.has_value() && !node->name.empty()) {
      ends->push_back(YamlCableEnd{node->name, *rail, *std::move(end), item.at});
    }
  }
}

// nodes[].cable: the far end of the node's one data port on fabric.type
// ethernet, whose netdev the agent names (the one holding data_ip).
void ParseNodeCable(FieldReader& reader, MapReader& entry, const Node& node, FabricType type,
                    std::vector<YamlCableEnd>* ends) {
  std::optional<MapReader> cable =
      entry.Map("cable",
                "a map with switch and port: where the data port's cable lands (e.g. {switch: "
                "leaf1, port: swp3})");
  if (!cable.has_value()) return;
  std::optional<CableEnd> end = ParseCableEnd(*cable);
  cable->Finish();
  if (type != FabricType::kEthernet) {
    reader.ReportAt(cable->field().at, cable->field().path,
                    absl::StrCat(cable->field().path,
                                 " gives the far end of the data port, but "
                                 "fabric.type is ",
                                 FabricTypeName(type),
                                 "; give switch and port on each rails entry instead (e.g. "
                                 "{name: mlx5_0, switch: leaf1, port: swp1})."));
    return;
  }
  if (!end.has_value()) {
    if (!reader.context().errors->HasErrorAt(cable->field().path)) {
      reader.ReportAt(cable->field().at, cable->field().path,
                      absl::StrCat(cable->field().path,
                                   " is empty; give switch and port (e.g. "
                                   "{switch: leaf1, port: swp3}), or leave cable out."));
    }
    return;
  }
  if (!node.name.empty())
    ends->push_back(YamlCableEnd{node.name, "", *std::move(end), cable->field().at});
}

Node ParseNode(FieldReader& reader, const YamlField& item, FabricType type,
               std::vector<YamlCableEnd>* ends) {
  Node node;
  node.location = item.at;
  MapReader entry(&reader, item);
  if (std::optional<YamlField> name = entry.Require("name", kNameRule)) {
    if (std::optional<std::string> value = reader.Name(*name, kNameRule)) node.name = *value;
  }
  if (std::optional<YamlField> agent = entry.Require("agent", kAgentRule)) {
    if (reader.Endpoint(*agent, kAgentRule).has_value()) node.agent = agent->value.Scalar();
  }
  if (std::optional<YamlField> data_ip = entry.Get("data_ip")) {
    if (auto value = reader.IpAddress(*data_ip, kDataIpRule)) node.data_ip = *value;
  }
  if (std::optional<YamlField> rails = entry.Get("rails")) {
    ParseRails(reader, *rails, &node, ends);
  }
  entry.Int("gpus", 0, 64, "an integer from 0 to 64 (GPUs on the node; 0 for a CPU-only host)",
            &node.gpus);
  if (std::optional<YamlField> leaf = entry.Get("leaf")) {
    if (std::optional<std::string> value = reader.Name(*leaf, kLeafRule)) node.leaf = *value;
  }
  if (entry.Has("cable")) ParseNodeCable(reader, entry, node, type, ends);
  entry.Finish();
  return node;
}

// On fabric.type ethernet the agent reports the data netdev as the one
// rail, so a far end given on a rails entry would never be compared.
void RefuseRailEndsOnEthernet(FieldReader& reader, FabricType type,
                              std::vector<YamlCableEnd>* ends) {
  if (type != FabricType::kEthernet) return;
  std::vector<YamlCableEnd> kept;
  for (YamlCableEnd& end : *ends) {
    if (end.device.empty()) {
      kept.push_back(std::move(end));
      continue;
    }
    reader.ReportAt(end.at, end.end.source,
                    absl::StrCat(end.end.source,
                                 " gives switch and port, but on fabric.type "
                                 "ethernet the node's one data port is what is cabled; give it "
                                 "as the node's cable: {switch: ",
                                 end.end.switch_name, ", port: ", end.end.port, "} instead."));
  }
  *ends = std::move(kept);
}

std::optional<FabricTopology> TopologyFromName(const std::string& name) {
  if (name == "unspecified") return FabricTopology::kUnspecified;
  if (name == "rail-optimized") return FabricTopology::kRailOptimized;
  return std::nullopt;
}

// fabric.cabling, fabric.topology and fabric.lldp_wait_s: the cable plan and
// how long the agents listen for LLDP (controller/plan/cable_plan.h).
void ParseCablingKeys(MapReader& fabric_section, Fabric* fabric) {
  fabric_section.String("cabling",
                        "the path of the cable plan, a CSV with the columns node, device, switch "
                        "and port (relative to the plan's directory, e.g. cables.csv)",
                        &fabric->cabling);
  std::string topology;
  if (fabric_section.Enum("topology", {"unspecified", "rail-optimized"}, &topology)) {
    fabric->topology = *TopologyFromName(topology);
  }
  fabric_section.Duration("lldp_wait_s", NumberRange{1, true, 120, true, true},
                          "a number of seconds from 1 to 120 (how long every agent listens for "
                          "LLDP at once; a switch sends every 30 s by default, so 31)",
                          absl::Seconds(1), &fabric->lldp_wait);
}

}  // namespace

void ParseFabricSection(MapReader& top, Fabric* fabric) {
  std::optional<MapReader> section = top.Map(
      "fabric",
      "a map with type, link_rate_gbps, active_mtu, min_netdev_mtu, roce, infiniband, routing, "
      "cabling, topology and lldp_wait_s");
  if (!section.has_value()) return;
  std::string type;
  if (section->Enum("type", {"roce", "infiniband", "ethernet"}, &type)) {
    fabric->type = *FabricTypeFromName(type);
  }
  section->Number("link_rate_gbps", NumberRange::PositiveAtMost(3200),
                  "a positive number of Gb/s, at most 3200 (e.g. 200 for HDR, 400 for NDR)",
                  &fabric->link_rate_gbps);
  section->IntIn("active_mtu", {256, 512, 1024, 2048, 4096},
                 "one of 256, 512, 1024, 2048, 4096 (the RDMA path MTU in bytes; 4096 on a "
                 "jumbo-frame fabric)",
                 &fabric->active_mtu);
  section->Int("min_netdev_mtu", 576, 9216,
               "an integer from 576 to 9216 (the smallest Ethernet MTU in bytes allowed on the "
               "data netdevs; 9000 for jumbo frames)",
               &fabric->min_netdev_mtu);
  ParseRoce(*section, &fabric->roce);
  ParseInfiniband(*section, &fabric->infiniband);
  std::string routing;
  if (section->Enum("routing", {"auto", "bgp", "l2"}, &routing)) {
    fabric->routing = routing == "bgp"  ? FabricRouting::kBgp
                      : routing == "l2" ? FabricRouting::kL2
                                        : FabricRouting::kAuto;
  }
  ParseCablingKeys(*section, fabric);
  section->Finish();
}

void ParseNodesSection(MapReader& top, Plan* plan) {
  constexpr absl::string_view kNodesRule =
      "a non-empty list of nodes, each a map with at least name and agent";
  std::optional<YamlField> field = top.Require("nodes", kNodesRule);
  if (!field.has_value()) return;
  FieldReader& reader = *top.reader();
  const size_t max_nodes = reader.context().limits.max_nodes;
  if (field->value.IsSequence() && field->value.size() > max_nodes) {
    reader.Report(*field, absl::StrCat("nodes lists ", field->value.size(),
                                       " entries; a plan may hold at most ", max_nodes,
                                       " nodes (certify a larger cluster as several plans, e.g. "
                                       "one per pod or rail group)."));
    return;
  }
  std::optional<std::vector<YamlField>> items = reader.Items(*field, kNodesRule);
  if (!items.has_value()) return;
  if (items->empty()) {
    reader.Reject(*field, kNodesRule);
    return;
  }
  std::vector<YamlCableEnd> ends;
  for (const YamlField& item : *items) {
    if (!item.value.IsMap()) {
      reader.Reject(item, "a map with name, agent, data_ip, rails, gpus, leaf and cable");
      // A placeholder keeps nodes[i] in the Plan aligned with nodes[i] in
      // the file for the cross-section rules; the plan is rejected anyway.
      Node placeholder;
      placeholder.location = item.at;
      plan->nodes.push_back(placeholder);
      continue;
    }
    plan->nodes.push_back(ParseNode(reader, item, plan->fabric.type, &ends));
  }
  RefuseRailEndsOnEthernet(reader, plan->fabric.type, &ends);
  // After the nodes: the cable plan's rows name them and their rails.
  ResolveCabling(reader, ends, plan);
}

void ParseExpectSection(MapReader& top, Expectations* expect) {
  std::optional<MapReader> section =
      top.Map("expect",
              "a map with nvidia_peermem, pcie, clock_offset_ms, ntp_synced, ofed, "
              "max_gpu_nic_relation and gpu_nic_same_numa");
  if (!section.has_value()) return;
  section->Bool("nvidia_peermem", &expect->nvidia_peermem);
  if (std::optional<MapReader> pcie = section->Map("pcie", "a map with gen and width")) {
    pcie->Int("gen", 1, 6, "an integer from 1 to 6 (the PCIe generation; 4 for 16 GT/s)",
              &expect->pcie.gen);
    pcie->IntIn("width", {1, 2, 4, 8, 16, 32},
                "one of 1, 2, 4, 8, 16, 32 (PCIe lanes; 16 for an x16 slot)", &expect->pcie.width);
    pcie->Finish();
  }
  section->Duration("clock_offset_ms", NumberRange::Positive(),
                    "a positive number of milliseconds (the largest clock offset allowed between "
                    "nodes, e.g. 5)",
                    absl::Milliseconds(1), &expect->clock_offset);
  section->Bool("ntp_synced", &expect->ntp_synced);
  section->Bool("management_separate", &expect->management_separate);
  section->Bool("ofed", &expect->ofed);
  section->Enum("max_gpu_nic_relation", {"PIX", "PXB", "PHB", "NODE", "SYS"},
                &expect->max_gpu_nic_relation);
  section->Bool("gpu_nic_same_numa", &expect->gpu_nic_same_numa);
  section->Finish();
}

void ParseAgentsSection(MapReader& top, AgentSettings* agents) {
  std::optional<MapReader> section =
      top.Map("agents", "a map with insecure, tls, connect_timeout_s, call_timeout_s and retries");
  if (!section.has_value()) return;
  section->Bool("insecure", &agents->insecure);
  if (std::optional<MapReader> tls = section->Map("tls", "a map with ca, cert and key")) {
    constexpr absl::string_view kPemRule = "the path of a PEM file (deploy/pki.sh makes them)";
    tls->String("ca", kPemRule, &agents->tls.ca);
    tls->String("cert", kPemRule, &agents->tls.cert);
    tls->String("key", kPemRule, &agents->tls.key);
    tls->Finish();
  }
  section->Duration("connect_timeout_s", NumberRange::Positive(),
                    "a positive number of seconds (how long to try reaching an agent, e.g. 5)",
                    absl::Seconds(1), &agents->connect_timeout);
  section->Duration("call_timeout_s", NumberRange::Positive(),
                    "a positive number of seconds (the deadline of one agent call, e.g. 30)",
                    absl::Seconds(1), &agents->call_timeout);
  section->Int("retries", 0, 10,
               "an integer from 0 to 10 (extra attempts to reach an agent before the node "
               "counts as failed)",
               &agents->retries);
  section->Finish();
}

void ParseCertificateSection(MapReader& top, CertificateSettings* certificate) {
  std::optional<MapReader> section = top.Map("certificate", "a map with out and signing_key");
  if (!section.has_value()) return;
  section->String("out", "a directory path for certificate.json and the reports (e.g. certs/)",
                  &certificate->out);
  section->String("signing_key",
                  "the path of the certificate signing key (PEM), or \"\" for an unsigned "
                  "certificate",
                  &certificate->signing_key, /*allow_empty=*/true);
  section->Finish();
}

}  // namespace clustercert::controller::plan
