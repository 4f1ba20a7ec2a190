#include "agent/inventory/frr_bgp_json.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/ip_subnet.h"
#include "common/message_text.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::agent::inventory {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr size_t kMaxQuotedChars = 80;
constexpr size_t kMaxAddressFamilies = 16;

std::string Quoted(absl::string_view text) { return QuotedText(text, kMaxQuotedChars); }

bool AllOf(absl::string_view text, size_t max_chars, bool (*allowed)(char)) {
  if (text.empty() || text.size() > max_chars) return false;
  return std::all_of(text.begin(), text.end(), allowed);
}

bool IsFamilyName(absl::string_view text) {  // "ipv4Unicast", "l2VpnEvpn"
  return AllOf(text, 32, [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); });
}

bool IsHostName(absl::string_view text) {
  return AllOf(text, 64, [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool IsUptime(absl::string_view text) {  // "00:01:02", "1d02h03m", "never"
  return AllOf(text, 32, [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == ':';
  });
}

// A JSON object parsed with protobuf's parser, which bounds the nesting;
// InvalidArgument naming the text's first line otherwise.
absl::StatusOr<Struct> ParseObject(absl::string_view text) {
  if (text.size() > kMaxVtyshOutputBytes) {
    return absl::InvalidArgumentError(absl::StrCat("vtysh printed ", text.size(),
                                                   " bytes, more than the ", kMaxVtyshOutputBytes,
                                                   " this agent reads"));
  }
  Value root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(std::string(text), &root);
  if (!parsed.ok() || root.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a JSON object: ", Quoted(FirstLine(absl::StripLeadingAsciiWhitespace(text)))));
  }
  return std::move(*root.mutable_struct_value());
}

// The keys of `object` in sorted order: protobuf's map has none, and the
// inventory should not change from one read to the next.
std::vector<std::string> SortedKeys(const Struct& object) {
  std::vector<std::string> keys;
  keys.reserve(object.fields().size());
  for (const auto& [key, value] : object.fields()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

const Value* Field(const Struct& object, absl::string_view key) {
  auto found = object.fields().find(std::string(key));
  return found == object.fields().end() ? nullptr : &found->second;
}

std::string StringField(const Struct& object, absl::string_view key) {
  const Value* value = Field(object, key);
  return value != nullptr && value->kind_case() == Value::kStringValue ? value->string_value()
                                                                       : std::string();
}

// A non-negative integer no larger than `max`; nullopt for anything else.
std::optional<uint64_t> CountField(const Struct& object, absl::string_view key, double max) {
  const Value* value = Field(object, key);
  if (value == nullptr || value->kind_case() != Value::kNumberValue) return std::nullopt;
  const double number = value->number_value();
  if (!(number >= 0) || number > max || std::floor(number) != number) return std::nullopt;
  return static_cast<uint64_t>(number);
}

std::optional<uint32_t> AsField(const Struct& object, absl::string_view key) {
  auto as = CountField(object, key, std::numeric_limits<uint32_t>::max());
  if (!as.has_value()) return std::nullopt;
  return static_cast<uint32_t>(*as);
}

constexpr double kMaxCount = 9007199254740992.0;  // 2^53: exact in a JSON number

// One entry of an address family's "peers" object.
v1::BgpNeighbor ReadNeighbor(absl::string_view family, absl::string_view peer, const Struct& fields,
                             std::vector<std::string>& rejected) {
  v1::BgpNeighbor neighbor;
  neighbor.set_peer(std::string(peer));
  neighbor.set_address_family(std::string(family));
  neighbor.set_unnumbered(StringField(fields, "idType") == "interface");
  const std::string state = StringField(fields, "state");
  if (IsBgpState(state)) {
    neighbor.set_state(state);
  } else {
    rejected.push_back(absl::StrCat("state of peer ", peer, " (", family, ") ", Quoted(state),
                                    ": not a BGP state"));
  }
  if (auto as = AsField(fields, "remoteAs")) neighbor.set_remote_as(*as);
  if (auto received = CountField(fields, "pfxRcd", kMaxCount)) {
    neighbor.set_prefixes_received(*received);
  }
  if (auto sent = CountField(fields, "pfxSnt", kMaxCount)) neighbor.set_prefixes_sent(*sent);
  if (auto uptime_ms = CountField(fields, "peerUptimeMsec", kMaxCount)) {
    neighbor.set_uptime_ms(*uptime_ms);
  }
  const std::string uptime = StringField(fields, "peerUptime");
  if (IsUptime(uptime)) neighbor.set_uptime(uptime);
  const std::string hostname = StringField(fields, "hostname");
  if (IsHostName(hostname)) neighbor.set_remote_hostname(hostname);
  return neighbor;
}

void ReadFamily(absl::string_view family, const Struct& summary, BgpSummary& result) {
  if (result.router_id.empty()) {
    const std::string router_id = StringField(summary, "routerId");
    if (IsIpv4Address(router_id)) result.router_id = router_id;
  }
  if (!result.local_as.has_value()) result.local_as = AsField(summary, "as");
  const Value* peers = Field(summary, "peers");
  if (peers == nullptr || peers->kind_case() != Value::kStructValue) return;
  for (const std::string& peer : SortedKeys(peers->struct_value())) {
    const Value& fields = peers->struct_value().fields().at(peer);
    if (!IsBgpPeerName(peer) || fields.kind_case() != Value::kStructValue) {
      result.rejected.push_back(absl::StrCat("peer ", Quoted(peer), " of ", family,
                                             ": not an interface name or address"));
      continue;
    }
    if (result.neighbors.size() == kMaxBgpNeighbors) {
      result.rejected.push_back(
          absl::StrCat("more than ", kMaxBgpNeighbors, " neighbours: the rest are not listed"));
      return;
    }
    result.neighbors.push_back(ReadNeighbor(family, peer, fields.struct_value(), result.rejected));
  }
}

// Whether any path of a route was made here: FRR gives locally originated
// paths (network, redistribute, aggregate) no peer, "(unspec)".
bool OriginatedHere(const Value& paths) {
  if (paths.kind_case() != Value::kListValue) return false;
  for (const Value& path : paths.list_value().values()) {
    if (path.kind_case() == Value::kStructValue &&
        StringField(path.struct_value(), "peerId") == "(unspec)") {
      return true;
    }
  }
  return false;
}

}  // namespace

bool IsBgpPeerName(absl::string_view text) {
  if (!text.empty() && text.front() == '-') return false;
  return AllOf(text, 64, [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
           c == '%' || c == '-';
  });
}

bool IsBgpState(absl::string_view text) {
  return AllOf(text, 32, [](char c) {
    return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == ' ' || c == '(' || c == ')';
  });
}

bool IsIpv4Address(absl::string_view text) {
  if (text.empty() || text.size() > 15) return false;
  in_addr address;
  return ::inet_pton(AF_INET, std::string(text).c_str(), &address) == 1;
}

absl::StatusOr<BgpSummary> ParseBgpSummary(absl::string_view text) {
  absl::StatusOr<Struct> root = ParseObject(text);
  if (!root.ok()) return root.status();
  BgpSummary result;
  if (root->fields().size() > kMaxAddressFamilies) {
    return absl::InvalidArgumentError(absl::StrCat(root->fields().size(),
                                                   " address families, more than the ",
                                                   kMaxAddressFamilies, " FRR has"));
  }
  for (const std::string& family : SortedKeys(*root)) {
    const Value& summary = root->fields().at(family);
    if (!IsFamilyName(family) || summary.kind_case() != Value::kStructValue) {
      result.rejected.push_back(
          absl::StrCat("address family ", Quoted(family), ": not an address family summary"));
      continue;
    }
    ReadFamily(family, summary.struct_value(), result);
  }
  return result;
}

absl::StatusOr<BgpOriginated> ParseBgpOriginated(absl::string_view text) {
  BgpOriginated result;
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  // bgpd's sentence when no `router bgp` exists in the default VRF.
  if (absl::EndsWith(trimmed, "instance not found") && trimmed.size() < 80) return result;
  absl::StatusOr<Struct> root = ParseObject(text);
  if (!root.ok()) return root.status();
  result.instance_present = true;
  const std::string router_id = StringField(*root, "routerId");
  if (IsIpv4Address(router_id)) {
    result.router_id = router_id;
  } else if (!router_id.empty()) {
    result.rejected.push_back(
        absl::StrCat("routerId ", Quoted(router_id), ": not an IPv4 address"));
  }
  result.local_as = AsField(*root, "localAS");
  const Value* routes = Field(*root, "routes");
  if (routes == nullptr || routes->kind_case() != Value::kStructValue) return result;
  for (const std::string& prefix : SortedKeys(routes->struct_value())) {
    if (!OriginatedHere(routes->struct_value().fields().at(prefix))) continue;
    std::optional<IpSubnet> subnet = IpSubnet::Parse(prefix);
    if (!subnet.has_value()) {
      result.rejected.push_back(absl::StrCat("route ", Quoted(prefix), ": not a prefix"));
      continue;
    }
    if (result.prefixes.size() == kMaxOriginatedPrefixes) {
      result.rejected.push_back(absl::StrCat("more than ", kMaxOriginatedPrefixes,
                                             " originated prefixes: the rest are not listed"));
      break;
    }
    result.prefixes.push_back(subnet->ToString());
  }
  return result;
}

}  // namespace clustercert::agent::inventory
