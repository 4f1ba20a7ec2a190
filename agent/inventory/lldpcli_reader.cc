#include "agent/inventory/lldpcli_reader.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/message_text.h"
#include "common/printable.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kMaxQuotedChars = 160;
constexpr char kCommand[] = "lldpcli -f json show neighbors details";

// lldpcli logs its complaint on stderr ("[WARN/control] unable to connect to
// socket /run/lldpd.socket: No such file or directory"): its last line.
std::string Complaint(const process::CommandResult& result) {
  absl::string_view text = absl::StripTrailingAsciiWhitespace(result.stderr_text);
  const size_t last_newline = text.rfind('\n');
  if (last_newline != absl::string_view::npos) text = text.substr(last_newline + 1);
  if (text.empty()) text = FirstLine(result.stdout_text);
  return QuotedText(PrintableText(text, kMaxQuotedChars), kMaxQuotedChars + 3);
}

absl::Status Failed(const process::CommandResult& result) {
  const std::string said = Complaint(result);
  if (absl::StrContains(said, "Permission denied")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "lldpd runs on this host but refused the agent its socket (lldpcli: ", said,
        "): add the agent's user to lldpd's group (usermod -aG _lldpd clustercert) and restart "
        "clustercert-agent"));
  }
  if (absl::StrContains(said, "unable to connect")) {
    // The log line lldpcli printed adds only its timestamp to this.
    return absl::FailedPreconditionError(
        "lldpd is not running on this host (lldpcli found no lldpd socket)");
  }
  return absl::UnavailableError(
      absl::StrCat(kCommand, " exited with status ", result.exit_code, ": ", said));
}

}  // namespace

std::vector<std::string> LldpcliReader::Argv() {
  return {"lldpcli", "-f", "json", "show", "neighbors", "details"};
}

absl::StatusOr<LldpcliNeighbors> LldpcliReader::Read(absl::Duration timeout) const {
  auto result = runner_.Run(Argv(), std::min(timeout, kTimeout));
  if (!result.ok()) {
    if (absl::IsNotFound(result.status())) {
      return absl::NotFoundError(absl::StrCat("lldpcli not found (", ReasonOf(result.status()),
                                              "): lldpd is not installed on this host"));
    }
    return absl::Status(result.status().code(),
                        absl::StrCat(kCommand, ": ", ReasonOf(result.status())));
  }
  if (result->exit_code != 0) return Failed(*result);
  absl::StatusOr<LldpcliNeighbors> neighbors = ParseLldpcliJson(result->stdout_text);
  if (!neighbors.ok()) {
    return absl::Status(neighbors.status().code(),
                        absl::StrCat(kCommand, ": ", neighbors.status().message()));
  }
  return neighbors;
}

}  // namespace clustercert::agent::inventory
