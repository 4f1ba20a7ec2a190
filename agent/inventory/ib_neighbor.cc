#include "agent/inventory/ib_neighbor.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/message_text.h"
#include "common/printable.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kMaxLines = 256;
constexpr size_t kMaxStringBytes = 255;
constexpr size_t kMaxQuotedChars = 160;

bool IsDeviceName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

bool IsGuid(absl::string_view text) {  // "0x7cfe900300a5a2c0"
  if (text.size() < 3 || text.size() > 18 || !absl::StartsWith(text, "0x")) return false;
  return std::all_of(text.begin() + 2, text.end(),
                     [](char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); });
}

// smpquery's complaint for an error: the last line of stderr.
std::string Complaint(const process::CommandResult& result) {
  absl::string_view text = absl::StripTrailingAsciiWhitespace(result.stderr_text);
  const size_t last_newline = text.rfind('\n');
  if (last_newline != absl::string_view::npos) text = text.substr(last_newline + 1);
  return QuotedText(PrintableText(text, kMaxQuotedChars), kMaxQuotedChars + 3);
}

}  // namespace

std::string SmpqueryField(absl::string_view text, absl::string_view key) {
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (++lines > kMaxLines) break;
    if (!absl::StartsWith(line, key) || line.size() <= key.size() || line[key.size()] != ':') {
      continue;
    }
    absl::string_view value = line.substr(key.size() + 1);
    while (!value.empty() && value.front() == '.') value.remove_prefix(1);
    return PrintableText(absl::StripAsciiWhitespace(value), kMaxStringBytes);
  }
  return "";
}

std::vector<std::string> IbNeighborReader::Argv(absl::string_view attribute,
                                                const std::string& device, uint32_t port) {
  return {"smpquery",
          "-C",
          device,
          "-P",
          absl::StrCat(port),
          "-D",
          std::string(attribute),
          absl::StrCat("0,", port)};
}

absl::StatusOr<std::string> IbNeighborReader::Query(absl::string_view attribute,
                                                    const std::string& device, uint32_t port,
                                                    absl::Duration timeout) const {
  const std::vector<std::string> argv = Argv(attribute, device, port);
  const std::string command = absl::StrJoin(argv, " ");
  auto result = runner_.Run(argv, std::min(timeout, kTimeout));
  if (!result.ok()) {
    if (absl::IsNotFound(result.status())) {
      return absl::NotFoundError(absl::StrCat("smpquery not found (", ReasonOf(result.status()),
                                              "): install infiniband-diags to read where ", device,
                                              " port ", port, " is cabled"));
    }
    return absl::Status(result.status().code(),
                        absl::StrCat(command, ": ", ReasonOf(result.status())));
  }
  if (result->exit_code != 0) {
    return absl::UnavailableError(absl::StrCat(command, " exited with status ", result->exit_code,
                                               ": ", Complaint(*result),
                                               " (it needs read-write access to "
                                               "/dev/infiniband/umad*, and the ib_umad module)"));
  }
  return std::move(result->stdout_text);
}

absl::StatusOr<v1::LinkNeighbor> IbNeighborReader::Read(const std::string& device, uint32_t port,
                                                        absl::Duration timeout) const {
  if (!IsDeviceName(device) || port == 0 || port > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", PrintableText(device, 64), "' port ", port,
                     " is not an InfiniBand device name and port this agent asks smpquery about"));
  }
  absl::StatusOr<std::string> info = Query("nodeinfo", device, port, timeout);
  if (!info.ok()) return info.status();
  const std::string guid = SmpqueryField(*info, "Guid");
  uint32_t remote_port = 0;
  if (!IsGuid(guid) || !absl::SimpleAtoi(SmpqueryField(*info, "LocalPort"), &remote_port) ||
      remote_port > 255) {
    return absl::InvalidArgumentError(absl::StrCat(
        absl::StrJoin(Argv("nodeinfo", device, port), " "),
        " printed no Guid and LocalPort: ", QuotedText(PrintableText(FirstLine(*info), 80), 83)));
  }
  absl::StatusOr<std::string> description = Query("nodedesc", device, port, timeout);
  if (!description.ok()) return description.status();
  v1::LinkNeighbor neighbor;
  neighbor.set_source("smpquery");
  neighbor.set_switch_name(SmpqueryField(*description, "Node Description"));
  neighbor.set_chassis_id(guid);
  neighbor.set_chassis_id_subtype("node guid");
  neighbor.set_port_id(absl::StrCat(remote_port));
  neighbor.set_port_id_subtype("port number");
  neighbor.set_port(absl::StrCat(remote_port));
  neighbor.set_remote_port_number(remote_port);
  return neighbor;
}

}  // namespace clustercert::agent::inventory
