#include "agent/inventory/nic_firmware_collector.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/message_text.h"

namespace clustercert::agent::inventory {
namespace {

constexpr char kCaptureDir[] = "/clustercert-capture/mstconfig";
constexpr char kNotInstalled[] = "mstconfig not installed: apt-get install mstflint";
constexpr size_t kMaxOutputBytes = 256 * 1024;
constexpr size_t kMaxLines = 4096;
constexpr size_t kMaxValueChars = 64;
constexpr size_t kMaxQuotedChars = 120;

// mstflint reports a refused open with the errno's words ("-E- Failed to
// open device: 0000:19:00.0. Permission denied"); a read-only /sys (the
// unit's ProtectKernelTunables) reads "Read-only file system".
bool SaysPermissionDenied(absl::string_view output) {
  output = output.substr(0, kMaxOutputBytes);
  for (absl::string_view words :
       {"Permission denied", "Operation not permitted", "Read-only file system"}) {
    if (absl::StrContains(output, words)) return true;
  }
  return false;
}

constexpr char kNeedsRoot[] =
    ": the tool needs root to open the NIC's configuration gateway (read-write PCI config space "
    "under /sys), which the shipped unit (deploy/clustercert-agent.service) withholds on purpose, "
    "since that access can also rewrite the firmware; run `node-agent --capture DIR` as root "
    "once and certify from the capture, or run the query by hand as root";

std::string Quoted(absl::string_view text) { return QuotedText(text, kMaxQuotedChars); }

bool IsHex(absl::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsKept(absl::string_view name) {
  for (absl::string_view kept : kFirmwareSettingNames) {
    if (name == kept) return true;
  }
  return false;
}

bool IsPrintableValue(absl::string_view value) {
  if (value.empty() || value.size() > kMaxValueChars) return false;
  for (char c : value) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The value columns the Configurations: header names: "Next Boot" or
// "Default", "Current", "Next Boot". Names are separated by two or more spaces.
std::vector<std::string> HeaderColumns(absl::string_view rest) {
  std::vector<std::string> columns;
  for (absl::string_view part : absl::StrSplit(rest, "  ", absl::SkipWhitespace())) {
    columns.emplace_back(absl::StripAsciiWhitespace(part));
  }
  return columns;
}

// The card a function belongs to: "0000:41:00" of "0000:41:00.1".
std::string CardOf(absl::string_view pci_address) {
  return std::string(pci_address.substr(0, pci_address.rfind('.')));
}

}  // namespace

bool IsPciAddressArgument(absl::string_view text) {
  return text.size() == 12 && text[4] == ':' && text[7] == ':' && text[10] == '.' &&
         IsHex(text.substr(0, 4)) && IsHex(text.substr(5, 2)) && IsHex(text.substr(8, 2)) &&
         text[11] >= '0' && text[11] <= '7';
}

absl::StatusOr<std::vector<v1::FirmwareSetting>> ParseMstconfigQuery(absl::string_view text) {
  text = text.substr(0, kMaxOutputBytes);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() > kMaxLines) lines.resize(kMaxLines);
  size_t row = 0;
  std::vector<std::string> columns;
  for (; row < lines.size(); ++row) {
    absl::string_view line = absl::StripTrailingAsciiWhitespace(lines[row]);
    if (absl::ConsumePrefix(&line, "Configurations:")) {
      columns = HeaderColumns(line);
      break;
    }
  }
  if (row == lines.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no 'Configurations:' table in the query output (it begins ",
                     Quoted(FirstLine(text)), ")"));
  }
  const size_t width = columns.empty() ? 1 : columns.size();
  size_t take = 0;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == "Current") take = i;
  }
  std::vector<v1::FirmwareSetting> settings;
  size_t rows = 0;
  for (++row; row < lines.size(); ++row) {
    absl::string_view line = absl::StripTrailingAsciiWhitespace(lines[row]);
    absl::ConsumePrefix(&line, "*");  // changed from the default
    // Table rows are indented; anything at column 0 ("-I- ...", the next
    // device's header) ends the table, and so does a blank line.
    if (line.empty() || !absl::ascii_isspace(static_cast<unsigned char>(line.front()))) break;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.empty()) break;
    if (fields.size() != width + 1) continue;  // a value wider than its column, or garbage
    ++rows;
    if (!IsKept(fields[0]) || !IsPrintableValue(fields[1 + take])) continue;
    v1::FirmwareSetting setting;
    setting.set_name(std::string(fields[0]));
    setting.set_value(std::string(fields[1 + take]));
    settings.push_back(std::move(setting));
  }
  if (rows == 0) {
    return absl::InvalidArgumentError(
        "the 'Configurations:' table has no row of a name and one value per column");
  }
  return settings;
}

NicFirmwareCollector::Query NicFirmwareCollector::RunTool(const std::string& pci_address) const {
  Query query;
  for (const char* tool : {"mstconfig", "mlxconfig"}) {
    query.tool = tool;
    auto result = runner_.Run({tool, "-d", pci_address, "q"}, kQueryTimeout);
    if (absl::IsNotFound(result.status())) continue;
    if (!result.ok()) {
      query.text = result.status();
    } else if (result->exit_code != 0) {
      std::string said = FirstLine(result->stderr_text);
      if (said.empty()) said = FirstLine(result->stdout_text);
      std::string message = absl::StrCat(tool, " -d ", pci_address, " q exited with status ",
                                         result->exit_code, ": ", Quoted(said));
      if (SaysPermissionDenied(result->stderr_text) || SaysPermissionDenied(result->stdout_text)) {
        absl::StrAppend(&message, kNeedsRoot);
        query.text = absl::PermissionDeniedError(message);
      } else {
        query.text = absl::UnavailableError(message);
      }
    } else {
      query.text = std::move(result->stdout_text);
    }
    return query;
  }
  query.tool.clear();
  query.text = absl::NotFoundError(kNotInstalled);
  return query;
}

NicFirmwareCollector::Query NicFirmwareCollector::ReadCapture(
    const std::string& pci_address) const {
  Query query;
  query.tool = "capture";
  const std::string path = absl::StrCat(kCaptureDir, "/", pci_address, ".txt");
  query.text = view_.ReadText(path);
  if (absl::IsNotFound(query.text.status())) {
    query.text = absl::NotFoundError(
        absl::StrCat("the capture has no ", path, " (", kNotInstalled, " on the captured host)"));
  } else if (!query.text.ok()) {
    query.text = absl::UnavailableError(absl::StrCat(path, ": ", ReasonOf(query.text.status())));
  }
  return query;
}

std::vector<v1::NicFirmwareConfig> NicFirmwareCollector::Collect(
    const std::vector<v1::RdmaDevice>& devices) const {
  std::vector<v1::NicFirmwareConfig> configs;
  std::map<std::string, v1::NicFirmwareConfig> by_card;
  // After a missing tool or a hung query, the other NICs would only repeat it.
  std::optional<std::string> give_up;
  for (const v1::RdmaDevice& device : devices) {
    if (device.pci_address().empty()) continue;
    v1::NicFirmwareConfig config;
    config.set_device(device.name());
    config.set_pci_address(device.pci_address());
    if (!IsPciAddressArgument(device.pci_address())) {
      config.set_error(absl::StrCat("PCI address ", Quoted(device.pci_address()),
                                    " is not dddd:bb:dd.f, so it is not passed to mstconfig"));
      configs.push_back(std::move(config));
      continue;
    }
    const std::string card = CardOf(device.pci_address());
    if (auto known = by_card.find(card); known != by_card.end()) {
      config.set_tool(known->second.tool());
      *config.mutable_settings() = known->second.settings();
      config.set_error(known->second.error());
      configs.push_back(std::move(config));
      continue;
    }
    if (give_up.has_value()) {
      config.set_error(*give_up);
      configs.push_back(std::move(config));
      continue;
    }
    Query query =
        view_.is_live() ? RunTool(device.pci_address()) : ReadCapture(device.pci_address());
    config.set_tool(query.tool);
    if (query.text.ok()) {
      auto settings = ParseMstconfigQuery(*query.text);
      if (settings.ok()) {
        for (auto& setting : *settings) *config.add_settings() = std::move(setting);
      } else {
        config.set_error(absl::StrCat(query.tool, " output for ", device.pci_address(),
                                      " unparsable: ", settings.status().message()));
      }
    } else if (view_.is_live() && absl::IsNotFound(query.text.status())) {
      config.set_error(kNotInstalled);
      give_up = kNotInstalled;
    } else if (view_.is_live() && absl::IsPermissionDenied(query.text.status())) {
      // Every other NIC would be refused the same way.
      config.set_error(std::string(query.text.status().message()));
      give_up = absl::StrCat("not queried, since ", device.pci_address(),
                             " was refused: ", query.text.status().message());
    } else if (absl::IsDeadlineExceeded(query.text.status())) {
      config.set_error(absl::StrCat(query.tool, " -d ", device.pci_address(),
                                    " q: ", query.text.status().message()));
      give_up = absl::StrCat("not queried: ", query.tool, " timed out on ", device.pci_address());
    } else {
      config.set_error(std::string(query.text.status().message()));
    }
    by_card.emplace(card, config);
    configs.push_back(std::move(config));
  }
  return configs;
}

}  // namespace clustercert::agent::inventory
