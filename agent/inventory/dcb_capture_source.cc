#include "agent/inventory/dcb_capture_source.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clustercert::agent::inventory {
namespace {

constexpr char kCaptureDcbDir[] = "/clustercert-capture/dcb";
constexpr unsigned kMaxPriority = 7;
constexpr unsigned kMaxDscp = 63;

}  // namespace

absl::StatusOr<uint8_t> ParsePfcPriorities(absl::string_view text) {
  uint8_t mask = 0;
  for (absl::string_view token :
       absl::StrSplit(text, absl::ByAnyChar(", \t\n"), absl::SkipEmpty())) {
    unsigned priority = 0;
    if (!absl::SimpleAtoi(token, &priority) || priority > kMaxPriority) {
      return absl::InvalidArgumentError(
          absl::StrCat("unparsable: '", token, "' is not a priority 0..7 in '", text, "'"));
    }
    mask |= static_cast<uint8_t>(1u << priority);
  }
  return mask;
}

absl::StatusOr<std::vector<DcbDscpPriority>> ParseDscpPriorities(absl::string_view text) {
  std::vector<DcbDscpPriority> entries;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    unsigned dscp = 0;
    unsigned priority = 0;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &dscp) ||
        !absl::SimpleAtoi(fields[1], &priority) || dscp > kMaxDscp || priority > kMaxPriority) {
      return absl::InvalidArgumentError(absl::StrCat("unparsable line ", line_number, ": '", line,
                                                     "' (expected 'DSCP PRIORITY', 0..63 0..7)"));
    }
    entries.push_back(DcbDscpPriority{static_cast<uint8_t>(dscp), static_cast<uint8_t>(priority)});
  }
  return entries;
}

DcbCaptureSource::DcbCaptureSource(const SysfsView& view) : view_(view) {}

absl::StatusOr<DcbSettings> DcbCaptureSource::Read(const std::string& netdev) {
  const std::string dir = absl::StrCat(kCaptureDcbDir, "/", netdev);
  if (netdev.empty() || netdev.find('/') != std::string::npos || !view_.Exists(dir)) {
    return absl::NotFoundError(
        absl::StrCat(netdev, ": the capture has no DCB settings (no ", dir, ")"));
  }
  DcbSettings settings;
  settings.source = dir;

  const std::string pfc_path = absl::StrCat(dir, "/pfc_enabled_priorities");
  auto pfc_text = view_.ReadText(pfc_path);
  if (!pfc_text.ok()) {
    settings.pfc_reason = absl::StrCat(pfc_path, ": ", ReasonOf(pfc_text.status()));
  } else if (auto mask = ParsePfcPriorities(*pfc_text); mask.ok()) {
    settings.pfc_enabled_mask = *mask;
  } else {
    settings.pfc_reason = absl::StrCat(pfc_path, ": ", mask.status().message());
  }

  const std::string dscp_path = absl::StrCat(dir, "/dscp_priorities");
  auto dscp_text = view_.ReadText(dscp_path);
  if (!dscp_text.ok()) {
    settings.dscp_reason = absl::StrCat(dscp_path, ": ", ReasonOf(dscp_text.status()));
  } else if (auto table = ParseDscpPriorities(*dscp_text); table.ok()) {
    settings.dscp_priorities = std::move(*table);
  } else {
    settings.dscp_reason = absl::StrCat(dscp_path, ": ", table.status().message());
  }
  return settings;
}

}  // namespace clustercert::agent::inventory
