#include "agent/inventory/captured_port_attribute_source.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace clustercert::agent::inventory {
namespace {

// "4096 (5)" -> 4096; "PORT_ACTIVE (4)" -> 4 (the number in brackets).
bool LeadingNumber(absl::string_view value, uint32_t* out) {
  auto space = value.find(' ');
  return absl::SimpleAtoi(value.substr(0, space), out);
}

bool BracketedNumber(absl::string_view value, uint32_t* out) {
  auto open = value.rfind('(');
  auto close = value.rfind(')');
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open) {
    return false;
  }
  return absl::SimpleAtoi(value.substr(open + 1, close - open - 1), out);
}

}  // namespace

absl::StatusOr<std::map<std::pair<std::string, uint32_t>, PortAttributes>> ParseIbvDevinfo(
    absl::string_view text) {
  std::map<std::pair<std::string, uint32_t>, PortAttributes> ports;
  std::string hca;
  PortAttributes* current = nullptr;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    auto colon = trimmed.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view key = trimmed.substr(0, colon);
    absl::string_view value = absl::StripAsciiWhitespace(trimmed.substr(colon + 1));
    if (key == "hca_id") {
      hca = std::string(value);
      current = nullptr;
    } else if (key == "port") {
      uint32_t number = 0;
      if (hca.empty() || !absl::SimpleAtoi(value, &number)) {
        return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": unparsable: '",
                                                       trimmed,
                                                       "' (expected 'port: N' after hca_id)"));
      }
      current = &ports[{hca, number}];
      current->source = "captured ibv_devinfo -v";
    } else if (current != nullptr) {
      uint32_t number = 0;
      if (key == "active_mtu" && LeadingNumber(value, &number)) current->active_mtu_bytes = number;
      if (key == "max_mtu" && LeadingNumber(value, &number)) current->max_mtu_bytes = number;
      if (key == "state" && BracketedNumber(value, &number)) current->state = number;
      if (key == "phys_state" && BracketedNumber(value, &number)) current->phys_state = number;
      if (key == "sm_lid" && absl::SimpleAtoi(value, &number)) current->sm_lid = number;
      if (key == "port_lid" && absl::SimpleAtoi(value, &number)) current->lid = number;
      if (key == "link_layer") current->link_layer = std::string(value);
    }
  }
  return ports;
}

absl::StatusOr<PortAttributes> CapturedPortAttributeSource::Query(const std::string& device,
                                                                  uint32_t port) {
  auto text = view_.ReadText(kPath);
  if (!text.ok()) return text.status();
  auto ports = ParseIbvDevinfo(*text);
  if (!ports.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kPath, ": ", ports.status().message()));
  }
  auto it = ports->find({device, port});
  if (it == ports->end() || it->second.active_mtu_bytes == 0) {
    return absl::NotFoundError(absl::StrCat(kPath, ": no active_mtu for ", device, " port ", port));
  }
  return it->second;
}

}  // namespace clustercert::agent::inventory
