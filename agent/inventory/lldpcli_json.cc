#include "agent/inventory/lldpcli_json.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_strict.h"
#include "common/message_text.h"
#include "common/printable.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::agent::inventory {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr size_t kMaxDepth = 32;
constexpr size_t kMaxStringBytes = 255;  // as an LLDP TLV's string
constexpr size_t kMaxQuotedChars = 80;

// json0 wraps each value in a list: a list stands for its first element.
const Value& Unwrapped(const Value& value) {
  if (value.kind_case() == Value::kListValue && value.list_value().values_size() > 0) {
    return value.list_value().values(0);
  }
  return value;
}

const Value* Field(const Value* object, absl::string_view key) {
  if (object == nullptr) return nullptr;
  const Value& unwrapped = Unwrapped(*object);
  if (unwrapped.kind_case() != Value::kStructValue) return nullptr;
  auto found = unwrapped.struct_value().fields().find(std::string(key));
  return found == unwrapped.struct_value().fields().end() ? nullptr : &found->second;
}

// A string as -f json prints it ("x") or as json0 does ([{"value": "x"}]);
// nullopt for any other shape.
std::optional<std::string> RawText(const Value* value) {
  if (value == nullptr) return std::nullopt;
  const Value& unwrapped = Unwrapped(*value);
  if (unwrapped.kind_case() == Value::kStringValue) return unwrapped.string_value();
  if (unwrapped.kind_case() == Value::kStructValue) {
    const Value* inner = Field(&unwrapped, "value");
    if (inner != nullptr && inner->kind_case() == Value::kStringValue) return inner->string_value();
  }
  return std::nullopt;
}

// A string field as the inventory keeps it: cut, hidden bytes escaped.
std::string Text(const Value* value) {
  std::optional<std::string> raw = RawText(value);
  return raw.has_value() ? PrintableText(*raw, kMaxStringBytes) : std::string();
}

bool IsNetdevName(absl::string_view name) {  // IFNAMSIZ - 1, no '/' or space
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '@' || c == ':';
  });
}

bool IsSubtypeName(absl::string_view name) {  // "mac", "ifname", "local", "unhandled"
  if (name.empty() || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_islower(static_cast<unsigned char>(c)) || c == '-';
  });
}

// A 16-bit count printed as a string ("120"); nullopt for anything else.
std::optional<uint32_t> Uint16Text(const Value* value) {
  std::optional<std::string> raw = RawText(value);
  uint32_t number = 0;
  if (!raw.has_value() || raw->empty() || raw->size() > 5 ||
      !std::all_of(raw->begin(), raw->end(),
                   [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) ||
      !absl::SimpleAtoi(*raw, &number) || number > 65535) {
    return std::nullopt;
  }
  return number;
}

// An "id" object's type and value; false when either is missing.
bool ReadId(const Value* id, std::string& type, std::string& value) {
  std::optional<std::string> raw_type = RawText(Field(id, "type"));
  value = Text(Field(id, "value"));
  if (!raw_type.has_value() || !IsSubtypeName(*raw_type) || value.empty()) return false;
  type = *raw_type;
  return true;
}

// The chassis object and its system name: -f json keys the chassis by its
// name unless the switch sent none; json0 has a "name" field.
std::pair<const Value*, std::string> NamedChassis(const Value* chassis) {
  if (chassis == nullptr || Field(chassis, "id") != nullptr) {
    return {chassis, Text(Field(chassis, "name"))};
  }
  const Value& unwrapped = Unwrapped(*chassis);
  if (unwrapped.kind_case() != Value::kStructValue ||
      unwrapped.struct_value().fields().size() != 1) {
    return {nullptr, ""};
  }
  const auto& [name, inner] = *unwrapped.struct_value().fields().begin();
  return {&inner, PrintableText(name, kMaxStringBytes)};
}

// One interface's neighbour; an error names what is missing.
absl::StatusOr<v1::LinkNeighbor> ReadNeighbor(const Value& entry) {
  v1::LinkNeighbor neighbor;
  neighbor.set_source("lldpcli");
  auto [chassis, name] = NamedChassis(Field(&entry, "chassis"));
  if (chassis == nullptr) return absl::InvalidArgumentError("no chassis, or one of several names");
  neighbor.set_switch_name(name);
  if (!ReadId(Field(chassis, "id"), *neighbor.mutable_chassis_id_subtype(),
              *neighbor.mutable_chassis_id())) {
    return absl::InvalidArgumentError("no chassis ID with a type and a value");
  }
  const Value* port = Field(&entry, "port");
  if (!ReadId(Field(port, "id"), *neighbor.mutable_port_id_subtype(),
              *neighbor.mutable_port_id())) {
    return absl::InvalidArgumentError("no port ID with a type and a value");
  }
  neighbor.set_port_description(Text(Field(port, "descr")));
  // lldpd before 1.0 printed the TTL with the chassis.
  std::optional<uint32_t> ttl = Uint16Text(Field(port, "ttl"));
  if (!ttl.has_value()) ttl = Uint16Text(Field(chassis, "ttl"));
  if (ttl.has_value()) neighbor.set_ttl_s(*ttl);
  if (std::optional<uint32_t> mfs = Uint16Text(Field(port, "mfs")))
    neighbor.set_max_frame_size(*mfs);
  const bool port_id_names_port =
      neighbor.port_id_subtype() == "ifname" || neighbor.port_id_subtype() == "local";
  neighbor.set_port(port_id_names_port || neighbor.port_description().empty()
                        ? neighbor.port_id()
                        : neighbor.port_description());
  return neighbor;
}

// The (interface name, entry) pairs of the "interface" value in either form.
std::vector<std::pair<std::string, const Value*>> Interfaces(const Value* interfaces) {
  std::vector<std::pair<std::string, const Value*>> result;
  if (interfaces == nullptr) return result;
  auto add_object = [&result](const Value& object) {
    if (object.kind_case() != Value::kStructValue) return;
    const auto& fields = object.struct_value().fields();
    auto name = fields.find("name");
    if (name != fields.end() && name->second.kind_case() == Value::kStringValue) {
      result.emplace_back(name->second.string_value(), &object);  // json0
      return;
    }
    std::vector<std::string> keys;
    for (const auto& [key, value] : fields) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys) result.emplace_back(key, &fields.at(key));
  };
  if (interfaces->kind_case() == Value::kListValue) {
    for (const Value& element : interfaces->list_value().values()) add_object(element);
  } else {
    add_object(*interfaces);
  }
  return result;
}

void AddInterface(const std::string& raw_name, const Value& entry, LldpcliNeighbors& result) {
  if (!IsNetdevName(raw_name)) {
    result.rejected[""].push_back(absl::StrCat(
        "interface ", PrintableText(raw_name, kMaxQuotedChars), ": not a netdev name"));
    return;
  }
  absl::StatusOr<v1::LinkNeighbor> neighbor = ReadNeighbor(entry);
  if (!neighbor.ok()) {
    result.rejected[raw_name].push_back(
        absl::StrCat("lldpcli's entry for ", raw_name, ": ", neighbor.status().message()));
    return;
  }
  auto [at, inserted] = result.by_netdev.emplace(raw_name, *std::move(neighbor));
  if (!inserted) {
    result.rejected[raw_name].push_back(absl::StrCat(
        "lldpd lists more than one neighbour on ", raw_name, " (", at->second.switch_name(),
        " is kept): something between this port and its switch forwards LLDP"));
  }
}

}  // namespace

absl::StatusOr<LldpcliNeighbors> ParseLldpcliJson(absl::string_view text) {
  if (text.size() > kMaxLldpcliOutputBytes) {
    return absl::InvalidArgumentError(absl::StrCat("lldpcli printed ", text.size(),
                                                   " bytes, more than the ", kMaxLldpcliOutputBytes,
                                                   " this agent reads"));
  }
  if (absl::Status strict = CheckStrictJson(text, "lldpcli's output", kMaxDepth); !strict.ok()) {
    return strict;
  }
  Value root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(std::string(text), &root);
  const Value* lldp = parsed.ok() ? Field(&root, "lldp") : nullptr;
  if (lldp == nullptr || Unwrapped(*lldp).kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat("not lldpcli's JSON ({\"lldp\": ...}): ",
                     QuotedText(PrintableText(FirstLine(text), kMaxQuotedChars), kMaxQuotedChars)));
  }
  LldpcliNeighbors result;
  const auto interfaces = Interfaces(Field(lldp, "interface"));
  for (size_t i = 0; i < interfaces.size(); ++i) {
    if (i == kMaxLldpcliInterfaces) {
      result.rejected[""].push_back(
          absl::StrCat("more than ", kMaxLldpcliInterfaces, " interfaces: the rest are not read"));
      break;
    }
    AddInterface(interfaces[i].first, *interfaces[i].second, result);
  }
  return result;
}

}  // namespace clustercert::agent::inventory
