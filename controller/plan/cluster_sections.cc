#include "controller/plan/cluster_sections.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/host_port.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kNameRule = "a name of letters, digits, '.', '_' and '-' (e.g. node1)";
constexpr absl::string_view kAgentRule =
    "the node-agent's host:port with a port from 1 to 65535 (e.g. 192.168.100.11:7070; "
    "an IPv6 address goes in brackets, [fd00::11]:7070)";
constexpr absl::string_view kDataIpRule =
    "an IPv4 or IPv6 address on the data plane (e.g. 10.10.1.1), without a port";
constexpr absl::string_view kRailsRule = "a list of RDMA device names (e.g. [mlx5_0, mlx5_1])";
constexpr absl::string_view kRailRule =
    "an RDMA device name of letters, digits, '.', '_' and '-' (e.g. mlx5_0)";
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

void ParseRails(FieldReader& reader, const YamlField& field, Node* node) {
  std::optional<std::vector<YamlField>> items = reader.Items(field, kRailsRule);
  if (!items.has_value()) return;
  std::unordered_map<std::string, size_t> first_with_name;  // linear, however long the list
  for (size_t i = 0; i < items->size(); ++i) {
    const YamlField& item = (*items)[i];
    std::optional<std::string> rail = reader.Name(item, kRailRule);
    if (!rail.has_value()) continue;
    const auto [first, inserted] = first_with_name.try_emplace(*rail, i);
    if (!inserted) {
      reader.Report(item, absl::StrCat(item.path, " is ", *rail, ", already listed as ",
                                       (*items)[first->second].path,
                                       "; each rail may appear once per node."));
      continue;
    }
    node->rails.push_back(*rail);
  }
}

Node ParseNode(FieldReader& reader, const YamlField& item) {
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
  if (std::optional<YamlField> rails = entry.Get("rails")) ParseRails(reader, *rails, &node);
  entry.Int("gpus", 0, 64, "an integer from 0 to 64 (GPUs on the node; 0 for a CPU-only host)",
            &node.gpus);
  if (std::optional<YamlField> leaf = entry.Get("leaf")) {
    if (std::optional<std::string> value = reader.Name(*leaf, kLeafRule)) node.leaf = *value;
  }
  entry.Finish();
  return node;
}

}  // namespace

void ParseFabricSection(MapReader& top, Fabric* fabric) {
  std::optional<MapReader> section = top.Map(
      "fabric",
      "a map with type, link_rate_gbps, active_mtu, min_netdev_mtu, roce, infiniband and routing");
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
  section->Finish();
}

void ParseNodesSection(MapReader& top, std::vector<Node>* nodes) {
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
  for (const YamlField& item : *items) {
    if (!item.value.IsMap()) {
      reader.Reject(item, "a map with name, agent, data_ip, rails, gpus and leaf");
      // A placeholder keeps nodes[i] in the Plan aligned with nodes[i] in
      // the file for the cross-section rules; the plan is rejected anyway.
      Node placeholder;
      placeholder.location = item.at;
      nodes->push_back(placeholder);
      continue;
    }
    nodes->push_back(ParseNode(reader, item));
  }
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
