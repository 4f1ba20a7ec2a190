#include "controller/plan/other_fabrics_section.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/host_port.h"
#include "common/ip_subnet.h"

namespace clustercert::controller::plan {
namespace {

// The agent's bounds (agent/inventory/fabric_isolation.h), said here first.
constexpr size_t kMaxFabrics = 8;
constexpr size_t kMaxSubnets = 16;
constexpr size_t kMaxProbes = 16;

constexpr absl::string_view kSectionRule =
    "a list of fabrics kept apart from the training fabric, each a map with name, subnets and "
    "probe (e.g. [{name: inference, subnets: [10.30.0.0/16], probe: [\"10.30.0.10:8000\"]}])";
constexpr absl::string_view kSubnetsRule =
    "a list of 1 to 16 subnets in CIDR form (e.g. [10.30.0.0/16, fd30::/48])";
constexpr absl::string_view kSubnetRule = "a subnet in CIDR form (e.g. 10.30.0.0/16)";
constexpr absl::string_view kProbesRule =
    "a list of at most 16 IP:port targets inside the fabric's subnets that answer TCP, e.g. "
    "[\"10.30.0.10:2049\"] (an NFS server), [\"[fd30::10]:8000\"]";
constexpr absl::string_view kProbeRule =
    "a literal IP address and TCP port inside the fabric's subnets (e.g. \"10.30.0.10:2049\")";

void ParseSubnets(FieldReader& reader, const YamlField& field, OtherFabric& fabric) {
  std::optional<std::vector<YamlField>> items = reader.Items(field, kSubnetsRule);
  if (!items.has_value()) return;
  if (items->empty() || items->size() > kMaxSubnets) {
    reader.Reject(field, kSubnetsRule);
    return;
  }
  for (const YamlField& item : *items) {
    std::optional<std::string> text = reader.String(item, kSubnetRule);
    if (!text.has_value()) continue;
    std::optional<IpSubnet> subnet = IpSubnet::Parse(*text);
    if (!subnet.has_value()) {
      reader.Reject(item, kSubnetRule);
      continue;
    }
    fabric.subnets.push_back(subnet->ToString());
  }
}

bool InSubnets(const std::vector<std::string>& subnets, const std::string& ip) {
  for (const std::string& text : subnets) {
    std::optional<IpSubnet> subnet = IpSubnet::Parse(text);
    if (subnet.has_value() && subnet->Contains(ip)) return true;
  }
  return false;
}

void ParseProbes(FieldReader& reader, const YamlField& field, OtherFabric& fabric) {
  std::optional<std::vector<YamlField>> items = reader.Items(field, kProbesRule);
  if (!items.has_value()) return;
  if (items->size() > kMaxProbes) {
    reader.Reject(field, kProbesRule);
    return;
  }
  for (const YamlField& item : *items) {
    std::optional<HostPort> target = reader.Endpoint(item, kProbeRule);
    if (!target.has_value()) continue;
    if (!IsIpAddress(target->host)) {
      reader.Reject(item, kProbeRule, "a host name would make the agents resolve it");
      continue;
    }
    if (!fabric.subnets.empty() && !InSubnets(fabric.subnets, target->host)) {
      reader.Report(item,
                    absl::StrCat(item.path, " is ", target->ToString(), ", outside ", fabric.name,
                                 "'s subnets (", absl::StrJoin(fabric.subnets, ", "),
                                 "); a probe proves isolation only from inside the fabric "
                                 "it stands for: pick an address in those subnets."));
      continue;
    }
    fabric.probe.push_back(target->ToString());
  }
}

OtherFabric ParseFabric(FieldReader& reader, const YamlField& item) {
  OtherFabric fabric;
  fabric.location = item.at;
  MapReader entry(&reader, item);
  constexpr absl::string_view kNameRule =
      "a name of letters, digits, '.', '_' and '-' (e.g. inference, storage)";
  if (std::optional<YamlField> name = entry.Require("name", kNameRule)) {
    if (std::optional<std::string> value = reader.Name(*name, kNameRule)) fabric.name = *value;
  }
  if (std::optional<YamlField> subnets = entry.Require("subnets", kSubnetsRule)) {
    ParseSubnets(reader, *subnets, fabric);
  }
  if (std::optional<YamlField> probe = entry.Get("probe")) ParseProbes(reader, *probe, fabric);
  entry.Finish();
  return fabric;
}

// A node whose data_ip lies in another fabric's subnet shares that fabric's
// addresses: the plan contradicts itself.
void CheckDataAddresses(FieldReader& reader, const YamlField& item, const OtherFabric& fabric,
                        const std::vector<Node>& nodes) {
  for (const Node& node : nodes) {
    if (node.data_ip.empty() || !InSubnets(fabric.subnets, node.data_ip)) continue;
    reader.Report(
        item, absl::StrCat(item.path, " (", fabric.name, ": ", absl::StrJoin(fabric.subnets, ", "),
                           ") holds ", node.name, "'s data_ip ", node.data_ip,
                           "; a fabric kept apart cannot share the training fabric's "
                           "addresses: fix the subnet or the node's data_ip."));
  }
}

}  // namespace

void ParseOtherFabricsSection(MapReader& top, Plan* plan) {
  std::optional<YamlField> field = top.Get("other_fabrics");
  if (!field.has_value()) return;
  FieldReader& reader = *top.reader();
  std::optional<std::vector<YamlField>> items = reader.Items(*field, kSectionRule);
  if (!items.has_value()) return;
  if (items->empty() || items->size() > kMaxFabrics) {
    reader.Reject(*field, kSectionRule, "1 to 8 fabrics");
    return;
  }
  std::set<std::string> names;
  for (const YamlField& item : *items) {
    if (!item.value.IsMap()) {
      reader.Reject(item, "a map with name, subnets and probe");
      continue;
    }
    OtherFabric fabric = ParseFabric(reader, item);
    if (!fabric.name.empty() && !names.insert(fabric.name).second) {
      reader.Report(item, absl::StrCat(item.path, " is named ", fabric.name,
                                       " like an earlier entry; give each fabric its own name."));
      continue;
    }
    CheckDataAddresses(reader, item, fabric, plan->nodes);
    plan->other_fabrics.push_back(std::move(fabric));
  }
}

}  // namespace clustercert::controller::plan
