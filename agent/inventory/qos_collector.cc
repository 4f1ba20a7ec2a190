#include "agent/inventory/qos_collector.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/unknowns.h"

namespace clustercert::agent::inventory {
namespace {

constexpr int kPriorities = 8;
constexpr uint32_t kMaxTrafficClass = 255;
constexpr absl::string_view kTclassKey = "tclass=";

std::string NetPath(absl::string_view netdev, absl::string_view tail) {
  return absl::StrCat("/sys/class/net/", netdev, "/", tail);
}

}  // namespace

absl::StatusOr<uint32_t> ParseTrafficClass(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  auto unparsable = [&] {
    return absl::InvalidArgumentError(absl::StrCat("unparsable: '", text, "'"));
  };
  auto key = text.find(kTclassKey);
  if (key == absl::string_view::npos) return unparsable();
  absl::string_view value = text.substr(key + kTclassKey.size());
  auto end = value.find_first_of(" \t\n");
  if (end != absl::string_view::npos) value = value.substr(0, end);
  uint32_t tclass = 0;
  if (!absl::SimpleAtoi(value, &tclass) || tclass > kMaxTrafficClass) return unparsable();
  return tclass;
}

QosCollector::QosCollector(const SysfsView& view, DcbSource& dcb) : view_(view), dcb_(dcb) {}

std::vector<v1::NetdevQos> QosCollector::Collect(const std::vector<RoceNetdev>& ports) const {
  std::vector<v1::NetdevQos> result;
  result.reserve(ports.size());
  for (const auto& port : ports) result.push_back(CollectOne(port));
  return result;
}

v1::NetdevQos QosCollector::CollectOne(const RoceNetdev& port) const {
  v1::NetdevQos qos;
  qos.set_netdev(port.netdev);
  qos.set_rdma_device(port.rdma_device);
  CollectDcb(qos);
  CollectTrust(qos);
  CollectTrafficClass(qos);
  CollectEcn(qos, "roce_np");
  CollectEcn(qos, "roce_rp");
  return qos;
}

void QosCollector::CollectDcb(v1::NetdevQos& qos) const {
  auto settings = dcb_.Read(qos.netdev());
  if (!settings.ok()) {
    const std::string path = absl::StrCat("dcb ", qos.netdev());
    const std::string reason(settings.status().message());
    qos.set_pfc_source(reason);
    AddUnknown(qos, "pfc_enabled_mask", path, reason);
    AddUnknown(qos, "dscp_priorities", path, reason);
    return;
  }
  qos.set_pfc_source(settings->source);
  if (settings->pfc_enabled_mask.has_value()) {
    qos.set_pfc_enabled_mask(*settings->pfc_enabled_mask);
  } else {
    AddUnknown(qos, "pfc_enabled_mask", settings->source, settings->pfc_reason);
  }
  if (settings->dscp_priorities.has_value()) {
    for (const auto& entry : *settings->dscp_priorities) {
      auto* out = qos.add_dscp_priorities();
      out->set_dscp(entry.dscp);
      out->set_priority(entry.priority);
    }
  } else {
    AddUnknown(qos, "dscp_priorities", settings->source, settings->dscp_reason);
  }
}

void QosCollector::CollectTrust(v1::NetdevQos& qos) const {
  const std::string path = NetPath(qos.netdev(), "qos/trust");
  auto text = view_.ReadText(path);
  if (absl::IsNotFound(text.status())) {
    AddUnknown(qos, "trust", path,
               "qos/trust not exposed (MLNX_OFED only); upstream mlx5 trusts DSCP when the DCB "
               "app table has DSCP entries");
    return;
  }
  if (!text.ok()) {
    AddUnknown(qos, "trust", path, text.status());
    return;
  }
  std::string trust = absl::AsciiStrToLower(absl::StripAsciiWhitespace(*text));
  if (trust != "dscp" && trust != "pcp") {
    AddUnknown(qos, "trust", path, absl::StrCat("unparsable: '", *text, "'"));
    return;
  }
  qos.set_trust(trust);
  qos.set_trust_source(path);
}

void QosCollector::CollectTrafficClass(v1::NetdevQos& qos) const {
  if (qos.rdma_device().empty()) {
    AddUnknown(qos, "traffic_class", "", "no RDMA device named for this netdev");
    return;
  }
  const std::string path =
      absl::StrCat("/sys/class/infiniband/", qos.rdma_device(), "/tc/1/traffic_class");
  auto text = view_.ReadText(path);
  if (absl::IsNotFound(text.status())) {
    AddUnknown(qos, "traffic_class", path, "tc/1/traffic_class not exposed (MLNX_OFED only)");
    return;
  }
  if (!text.ok()) {
    AddUnknown(qos, "traffic_class", path, text.status());
    return;
  }
  if (text->empty()) {
    AddUnknown(qos, "traffic_class", path, "empty: no global traffic class configured");
    return;
  }
  auto tclass = ParseTrafficClass(*text);
  if (!tclass.ok()) {
    AddUnknown(qos, "traffic_class", path, tclass.status().message());
    return;
  }
  qos.set_traffic_class(*tclass);
}

void QosCollector::CollectEcn(v1::NetdevQos& qos, absl::string_view side) const {
  const std::string field = absl::StrCat("ecn_", side.substr(side.find('_') + 1), "_mask");
  const std::string dir = NetPath(qos.netdev(), absl::StrCat("ecn/", side, "/enable"));
  auto listing = view_.ListDir(dir);
  if (absl::IsNotFound(listing.status())) {
    AddUnknown(qos, field, dir, absl::StrCat("ecn/", side, " not exposed (MLNX_OFED/DOCA only)"));
    return;
  }
  if (!listing.ok()) {
    AddUnknown(qos, field, dir, listing.status());
    return;
  }
  uint32_t mask = 0;
  for (int priority = 0; priority < kPriorities; ++priority) {
    const std::string path = absl::StrCat(dir, "/", priority);
    auto text = view_.ReadText(path);
    if (!text.ok()) {
      AddUnknown(qos, field, path, text.status());
      return;
    }
    if (*text == "1") {
      mask |= 1u << priority;
    } else if (*text != "0") {
      AddUnknown(qos, field, path, absl::StrCat("unparsable: '", *text, "'"));
      return;
    }
  }
  if (side == "roce_np") {
    qos.set_ecn_np_mask(mask);
  } else {
    qos.set_ecn_rp_mask(mask);
  }
}

}  // namespace clustercert::agent::inventory
