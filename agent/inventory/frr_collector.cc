#include "agent/inventory/frr_collector.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/frr_bgp_json.h"
#include "agent/inventory/unknowns.h"
#include "common/message_text.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kMaxQuotedChars = 120;

std::string Quoted(absl::string_view text) { return QuotedText(text, kMaxQuotedChars); }

// vtysh prints its own complaints (a missing vtysh.conf) on stderr before
// the answer, so the line that explains a failure is stdout's, else the
// last of stderr.
std::string Explanation(const process::CommandResult& result) {
  if (!FirstLine(result.stdout_text).empty()) return FirstLine(result.stdout_text);
  absl::string_view text = absl::StripTrailingAsciiWhitespace(result.stderr_text);
  const size_t last_newline = text.rfind('\n');
  return std::string(last_newline == absl::string_view::npos ? text
                                                             : text.substr(last_newline + 1));
}

}  // namespace

FrrCollector::FrrCollector(process::CommandRunner& runner, FrrOptions options)
    : runner_(runner), options_(std::move(options)) {}

std::vector<std::string> FrrCollector::Argv(absl::string_view command) const {
  std::vector<std::string> argv = {"vtysh"};
  if (!options_.pathspace.empty()) {
    argv.emplace_back("-N");
    argv.push_back(options_.pathspace);
  }
  argv.emplace_back("-c");
  argv.emplace_back(command);
  return argv;
}

std::string FrrCollector::CommandText(absl::string_view command) const {
  std::string text = "vtysh";
  if (!options_.pathspace.empty()) absl::StrAppend(&text, " -N ", options_.pathspace);
  absl::StrAppend(&text, " -c '", command, "'");
  return text;
}

absl::StatusOr<std::string> FrrCollector::Vtysh(absl::string_view command) const {
  auto result = runner_.Run(Argv(command), kTimeout);
  if (!result.ok()) {
    if (absl::IsNotFound(result.status())) {
      return absl::NotFoundError(
          absl::StrCat("vtysh not found (", ReasonOf(result.status()),
                       "): FRR is not installed, so this node does not route its fabric with BGP"));
    }
    return absl::Status(result.status().code(),
                        absl::StrCat(CommandText(command), ": ", ReasonOf(result.status())));
  }
  if (result->exit_code != 0) {
    const std::string said = Explanation(*result);
    if (absl::StrContains(said, "is not running")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "FRR is installed but bgpd is not running (vtysh: ", Quoted(said),
          "); where the fabric is routed, set bgpd=yes in /etc/frr/daemons and restart frr"));
    }
    if (absl::StrContains(said, "failed to connect to any daemons")) {
      // vtysh says the same when the sockets exist but this process may not
      // open them (they are frr:frrvty 0770 and the agent's unit keeps no
      // CAP_DAC_OVERRIDE).
      return absl::FailedPreconditionError(absl::StrCat(
          "FRR is installed but no FRR daemon answered vtysh (", Quoted(said),
          "): frr is not running, or the agent may not open its sockets in /var/run/frr (add "
          "the agent's user to FRR's group: adduser clustercert frrvty, then systemctl restart "
          "clustercert-agent)"));
    }
    return absl::UnavailableError(absl::StrCat(CommandText(command), " exited with status ",
                                               result->exit_code, ": ", Quoted(said)));
  }
  if (result->stdout_text.size() > kMaxVtyshOutputBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(CommandText(command), " printed more than ",
                                                     kMaxVtyshOutputBytes,
                                                     " bytes; this agent reads no more"));
  }
  return std::move(result->stdout_text);
}

bool FrrCollector::FillNeighbors(v1::BgpState& state) const {
  absl::StatusOr<std::string> text = Vtysh(kSummaryCommand);
  if (absl::IsNotFound(text.status()) || absl::IsFailedPrecondition(text.status())) {
    state.set_reason(std::string(text.status().message()));
    return false;
  }
  const std::string path = CommandText(kSummaryCommand);
  if (!text.ok()) {
    state.set_reason(absl::StrCat("FRR did not answer: ", text.status().message()));
    AddUnknown(state, "neighbors", path, text.status().message());
    return false;
  }
  state.set_frr_present(true);
  absl::StatusOr<BgpSummary> summary = ParseBgpSummary(*text);
  if (!summary.ok()) {
    AddUnknown(state, "neighbors", path, summary.status().message());
    return true;
  }
  for (const std::string& rejected : summary->rejected)
    AddUnknown(state, "neighbors", path, rejected);
  state.set_router_id(summary->router_id);
  if (summary->local_as.has_value()) state.set_local_as(*summary->local_as);
  for (auto& neighbor : summary->neighbors) *state.add_neighbors() = std::move(neighbor);
  if (!summary->router_id.empty() || state.neighbors_size() > 0) state.set_instance_present(true);
  return true;
}

void FrrCollector::FillOriginated(v1::BgpState& state, absl::string_view command) const {
  const std::string path = CommandText(command);
  absl::StatusOr<std::string> text = Vtysh(command);
  absl::StatusOr<BgpOriginated> originated =
      text.ok() ? ParseBgpOriginated(*text) : absl::StatusOr<BgpOriginated>(text.status());
  if (!originated.ok()) {
    AddUnknown(state, "originated_prefixes", path, originated.status().message());
    return;
  }
  for (const std::string& rejected : originated->rejected) {
    AddUnknown(state, "originated_prefixes", path, rejected);
  }
  if (originated->instance_present) state.set_instance_present(true);
  if (state.router_id().empty()) state.set_router_id(originated->router_id);
  if (!state.has_local_as() && originated->local_as.has_value()) {
    state.set_local_as(*originated->local_as);
  }
  for (auto& prefix : originated->prefixes) state.add_originated_prefixes(std::move(prefix));
}

v1::BgpState FrrCollector::Collect() const {
  v1::BgpState state;
  state.set_source(options_.pathspace.empty() ? std::string("vtysh")
                                              : absl::StrCat("vtysh -N ", options_.pathspace));
  if (!FillNeighbors(state)) return state;
  FillOriginated(state, kOriginatedIpv4Command);
  if (!state.instance_present()) {
    state.set_reason(state.unknowns_size() > 0
                         ? "FRR answered, but whether bgpd has a `router bgp` could not be read "
                           "(see the unknowns)"
                         : "FRR's bgpd runs but has no `router bgp` in the default VRF, so this "
                           "node does not route its fabric with BGP");
    return state;
  }
  FillOriginated(state, kOriginatedIpv6Command);
  return state;
}

}  // namespace clustercert::agent::inventory
