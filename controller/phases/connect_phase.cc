#include "controller/phases/connect_phase.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/version.h"
#include "controller/phases/clock_estimator.h"
#include "controller/phases/fan_out.h"
#include "controller/phases/sync_call.h"

namespace clustercert::controller {
namespace {

bool Retryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

std::string Seconds(absl::Duration d) { return absl::StrFormat("%g s", absl::ToDoubleSeconds(d)); }

// Exchanges per node: enough that one of them sees no queueing on a busy
// management network, few enough to take milliseconds.
constexpr int kClockExchanges = 8;

// Refines state.clock with NTP-style exchanges; keeps the GetVersion sample
// when the agent cannot exchange (an older agent answers Unimplemented).
void MeasureClock(NodeState& state, absl::Duration timeout, Clock& clock) {
  std::vector<TimeExchange> exchanges;
  for (int i = 0; i < kClockExchanges; ++i) {
    v1::ExchangeTimeRequest request;
    const absl::Time t1 = clock.Now();
    request.set_controller_send_unix_us(absl::ToUnixMicros(t1));
    auto answer = CallAndWait<v1::ExchangeTimeResponse>(
        [&](auto done) { state.client->ExchangeTime(request, timeout, std::move(done)); });
    const absl::Time t4 = clock.Now();
    if (!answer.ok()) return;
    exchanges.push_back(TimeExchange{t1, absl::FromUnixMicros(answer->receive_unix_us()),
                                     absl::FromUnixMicros(answer->transmit_unix_us()), t4});
  }
  absl::StatusOr<ClockEstimate> estimate = EstimateClock(exchanges);
  if (!estimate.ok()) return;
  state.clock = ClockSample{*estimate};
}

// One GetVersion per pending node, side by side.
struct VersionAnswer {
  absl::StatusOr<v1::GetVersionResponse> version = absl::UnknownError("no answer");
  CallTiming timing;
};
std::vector<VersionAnswer> AskVersions(std::vector<NodeState>& nodes,
                                       const std::vector<size_t>& pending, absl::Duration timeout) {
  std::vector<VersionAnswer> answers(pending.size());
  FanOut(pending.size(), [&](size_t k, std::function<void()> finished) {
    nodes[pending[k]].client->GetVersion(
        timeout,
        [&, k, finished](absl::StatusOr<v1::GetVersionResponse> result, CallTiming timing) {
          answers[k] = VersionAnswer{std::move(result), timing};
          finished();
        });
  });
  return answers;
}

// A node whose agent answered: reachable when it speaks this API version,
// with the round trip as its first clock sample; said on the progress lines.
void AcceptVersion(NodeState& state, const v1::GetVersionResponse& version,
                   const CallTiming& timing, Progress& progress) {
  const std::string& where = state.node.agent;
  if (version.api_version() != kApiVersion) {
    state.error =
        absl::StrCat("agent at ", where, " speaks API v", version.api_version(), " (agent ",
                     version.agent_version(), "), this controller v", kApiVersion, " (",
                     kToolVersion, "): install the same clustercert release on the node and here");
    progress.Line("connect", absl::StrCat(state.node.name, " ", where, ": ", state.error));
    return;
  }
  state.reachable = true;
  state.version = version;
  const absl::Duration rtt = timing.received - timing.sent;
  // The round trip as one exchange whose agent stamps coincide.
  const absl::Time agent_time = absl::FromUnixMicros(version.unix_time_us());
  if (auto estimate =
          EstimateClock({TimeExchange{timing.sent, agent_time, agent_time, timing.received}});
      estimate.ok()) {
    state.clock = ClockSample{*estimate};
  }
  progress.Line("connect",
                absl::StrCat(state.node.name, " ", where, ": agent ", version.agent_version(),
                             " on ", version.hostname(), " as '", version.node_name(), "' (",
                             absl::FormatDuration(absl::Trunc(rtt, absl::Microseconds(10))), ")"));
  if (!version.node_name().empty() && version.node_name() != state.node.name) {
    progress.Line("connect",
                  absl::StrCat("warning: ", where, " calls itself '", version.node_name(),
                               "' but the plan names it '", state.node.name,
                               "': check the plan's agent address for this node"));
  }
}

// Nodes whose clock exchanges run at once.
constexpr size_t kClockWorkers = 16;

// Refines the reachable nodes' clocks (each node's exchanges in order, the
// nodes side by side).
void MeasureClocks(std::vector<NodeState>& nodes, absl::Duration timeout, Clock& clock) {
  std::vector<size_t> reached;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].reachable) reached.push_back(i);
  }
  // A small fixed pool takes the nodes in turn: a thread per node was 1,024
  // threads at 1,024 nodes (bench/scale.sh), and fewer exchanges in flight
  // also keep the controller's own scheduling out of each round trip.
  std::atomic<size_t> next{0};
  std::vector<std::thread> clocks;
  const size_t workers = std::min(reached.size(), kClockWorkers);
  clocks.reserve(workers);
  for (size_t w = 0; w < workers; ++w) {
    clocks.emplace_back([&] {
      for (size_t k = next++; k < reached.size(); k = next++) {
        MeasureClock(nodes[reached[k]], timeout, clock);
      }
    });
  }
  for (std::thread& thread : clocks) thread.join();
}

// Why a node that never answered is unreachable, with where to look.
std::string UnreachableReason(const NodeState& state, const absl::Status& last_error,
                              const plan::AgentSettings& settings) {
  return absl::StrCat("agent at ", state.node.agent, " did not answer (",
                      absl::StatusCodeToString(last_error.code()), ": ", last_error.message(),
                      ") after ", settings.retries + 1, " attempt(s) of ",
                      Seconds(settings.connect_timeout), ": check that node-agent runs on ",
                      state.node.name, " (systemctl status clustercert-agent), that it listens on ",
                      state.node.agent,
                      " and that the management network and firewall let this host reach it");
}

}  // namespace

int RunConnectPhase(std::vector<NodeState>& nodes, const plan::AgentSettings& settings,
                    Progress& progress, Clock& clock) {
  const absl::Duration timeout = settings.connect_timeout;
  std::vector<size_t> pending;
  for (size_t i = 0; i < nodes.size(); ++i) pending.push_back(i);
  std::vector<absl::Status> last_error(nodes.size());
  for (int attempt = 0; attempt <= settings.retries && !pending.empty(); ++attempt) {
    if (attempt > 0) {
      progress.Line("connect", absl::StrCat("retrying ", pending.size(), " node(s), attempt ",
                                            attempt + 1, " of ", settings.retries + 1));
      clock.SleepFor(absl::Milliseconds(250 * attempt));
    }
    const std::vector<VersionAnswer> answers = AskVersions(nodes, pending, timeout);
    std::vector<size_t> retry;
    for (size_t k = 0; k < pending.size(); ++k) {
      if (answers[k].version.ok()) {
        AcceptVersion(nodes[pending[k]], *answers[k].version, answers[k].timing, progress);
        continue;
      }
      last_error[pending[k]] = answers[k].version.status();
      if (Retryable(answers[k].version.status())) retry.push_back(pending[k]);
    }
    pending = std::move(retry);
  }
  MeasureClocks(nodes, timeout, clock);

  int reachable = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeState& state = nodes[i];
    if (state.reachable) {
      ++reachable;
    } else if (state.error.empty()) {
      state.error = UnreachableReason(state, last_error[i], settings);
      progress.Line("connect", absl::StrCat(state.node.name, ": unreachable: ", state.error));
    }
  }
  return reachable;
}

}  // namespace clustercert::controller
