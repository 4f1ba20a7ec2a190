#include "controller/commands/certification_run.h"

#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/time_format.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/checks/cluster_checks.h"
#include "controller/checks/flap_checks.h"
#include "controller/checks/node_checks.h"
#include "controller/checks/status_text.h"
#include "controller/client/guarded_agent_client.h"
#include "controller/client/node_health.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/commands/command_support.h"
#include "controller/pairwise/incast/incast_phase.h"
#include "controller/pairwise/phase/pairwise_phase.h"
#include "controller/phases/collectives_phase.h"
#include "controller/phases/connect_phase.h"
#include "controller/phases/inventory_phase.h"
#include "controller/phases/link_flap_reads.h"
#include "controller/phases/uplink_phase.h"

namespace clustercert::controller {

namespace {

constexpr char kNoAgentAnswered[] = "skipped: no agent answered";

void Conclude(v1::PhaseResult& phase, v1::PhaseResult::Status status, std::string detail) {
  phase.set_status(status);
  phase.set_detail(std::move(detail));
}

// This process's CPU time so far, every thread, user and system. Not on the
// injected clock: it measures what the controller itself cost.
absl::Duration ProcessCpuTime() {
  timespec now{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) != 0) return absl::ZeroDuration();
  return absl::DurationFromTimespec(now);
}

// The frame of every phase: its name, and its duration on `clock` and the
// controller's CPU time around `measure`, which concludes it.
v1::PhaseResult TimedPhase(const char* name, Clock& clock,
                           const std::function<void(v1::PhaseResult&)>& measure) {
  v1::PhaseResult phase;
  phase.set_name(name);
  const absl::Time start = clock.Now();
  const absl::Duration cpu_start = ProcessCpuTime();
  measure(phase);
  phase.set_duration_ms(absl::ToInt64Milliseconds(clock.Now() - start));
  phase.set_controller_cpu_ms(absl::ToInt64Milliseconds(ProcessCpuTime() - cpu_start));
  return phase;
}

// A phase for one of the plan's optional sections: skipped, without a call,
// when the plan has none; its detail goes on the progress line either way.
v1::PhaseResult SectionPhase(const char* name, bool planned, Progress& progress, Clock& clock,
                             const std::function<void(v1::PhaseResult&)>& measure) {
  v1::PhaseResult phase = TimedPhase(name, clock, [&](v1::PhaseResult& timed) {
    if (planned) {
      measure(timed);
    } else {
      Conclude(timed, v1::PhaseResult::skipped,
               absl::StrCat("skipped: the plan has no ", name, " section"));
    }
  });
  progress.Line(name, phase.detail());
  return phase;
}

v1::PhaseResult RunConnect(const plan::Plan& plan, std::vector<NodeState>& nodes,
                           CertificationResult& result, Progress& progress, Clock& clock) {
  return TimedPhase("connect", clock, [&](v1::PhaseResult& connect) {
    result.reachable = RunConnectPhase(nodes, plan.agents, progress, clock);
    Conclude(connect,
             result.reachable == static_cast<int>(nodes.size()) ? v1::PhaseResult::pass
                                                                : v1::PhaseResult::fail,
             absl::StrCat(result.reachable, " of ", nodes.size(), " agent(s) answered"));
  });
}

v1::PhaseResult RunInventory(const plan::Plan& plan, std::vector<NodeState>& nodes,
                             CertificationResult& result, Progress& progress, Clock& clock,
                             const RerunScope* rerun) {
  return TimedPhase("inventory", clock, [&](v1::PhaseResult& inventory) {
    if (result.reachable == 0) {
      Conclude(inventory, v1::PhaseResult::skipped, kNoAgentAnswered);
      for (const NodeState& state : nodes) {
        result.checks.push_back(checks::ReachabilityFinding(state.node, false, state.error));
      }
      return;
    }
    result.checks = RunInventoryPhase(nodes, plan, progress, rerun);
    const int blocking = checks::CountBlocking(result.checks);
    Conclude(
        inventory, blocking == 0 ? v1::PhaseResult::pass : v1::PhaseResult::fail,
        absl::StrCat(result.checks.size(), " check(s), ", blocking, " blocking certification"));
  });
}

// "incast: 4 round(s), 1 check(s) blocking certification", or why the
// rounds did not run.
std::string IncastDetail(const IncastOutcome& incast) {
  if (!incast.skipped.empty()) return absl::StrCat("incast ", incast.skipped);
  return absl::StrCat("incast: ", incast.rounds.size(), " round(s), ",
                      checks::CountBlocking(incast.checks), " check(s) blocking certification");
}

v1::PhaseResult RunPairwise(const plan::Plan& plan, std::vector<NodeState>& nodes,
                            CertificationResult& result, RunRecord& record, Progress& progress,
                            Clock& clock, const RerunScope* rerun, const RunStop* stop,
                            PhaseJournal* journal) {
  return SectionPhase(
      "pairwise", plan.pairwise.enabled, progress, clock, [&](v1::PhaseResult& phase) {
        if (result.reachable < 2) {
          Conclude(phase, v1::PhaseResult::fail, "fewer than two agents answered: no pair to test");
          if (plan.pairwise.incast.enabled) {
            record.incast_skipped = "not run: fewer than two agents answered";
          }
          return;
        }
        PairwiseOutcome outcome =
            RunPairwisePhase(nodes, plan, result.checks, progress, rerun, stop, journal);
        IncastOutcome incast = RunIncastPhase(nodes, plan, progress, rerun, stop);
        const int blocking =
            checks::CountBlocking(outcome.checks) + checks::CountBlocking(incast.checks);
        std::string detail =
            absl::StrCat(outcome.pairs.size(), " cell(s) in ", outcome.rounds, " round(s), ",
                         outcome.failing, " failing, ", outcome.suspects.size(), " suspect(s)");
        if (plan.pairwise.incast.enabled) absl::StrAppend(&detail, "; ", IncastDetail(incast));
        Conclude(
            phase,
            blocking == 0 && outcome.rounds > 0 ? v1::PhaseResult::pass : v1::PhaseResult::fail,
            std::move(detail));
        for (auto& check : outcome.checks) result.checks.push_back(std::move(check));
        for (auto& check : incast.checks) result.checks.push_back(std::move(check));
        record.pairs = std::move(outcome.pairs);
        record.suspects = std::move(outcome.suspects);
        record.incast = std::move(incast.rounds);
        record.incast_skipped = std::move(incast.skipped);
      });
}

// Each sweep's large-message bus bandwidth (or "failed"), then how many checks block.
std::string CollectivesDetail(const CollectivesOutcome& outcome, int blocking) {
  std::string scopes;
  for (const auto& sweep : outcome.sweeps) {
    absl::StrAppend(&scopes, scopes.empty() ? "" : ", ", ScopeLabel(sweep), " ",
                    sweep.ok() ? absl::StrFormat("%.4g GB/s", sweep.large_busbw_gbytes())
                               : std::string("failed"));
  }
  return absl::StrCat(outcome.sweeps.size(), " sweep(s) (", scopes, "), ", blocking,
                      " check(s) blocking certification");
}

v1::PhaseResult RunCollectives(const plan::Plan& plan, std::vector<NodeState>& nodes,
                               CertificationResult& result, RunRecord& record, Progress& progress,
                               Clock& clock, const RerunScope* rerun, const RunStop* stop,
                               PhaseJournal* journal) {
  return SectionPhase("collectives", plan.collectives.enabled, progress, clock,
                      [&](v1::PhaseResult& phase) {
                        if (result.reachable == 0) {
                          Conclude(phase, v1::PhaseResult::skipped, kNoAgentAnswered);
                          return;
                        }
                        CollectivesOutcome outcome =
                            RunCollectivesPhase(nodes, plan, progress, clock, rerun, stop, journal);
                        if (!outcome.not_run.empty()) {
                          Conclude(phase, v1::PhaseResult::skipped, outcome.not_run);
                        } else {
                          const int blocking = checks::CountBlocking(outcome.checks);
                          Conclude(phase,
                                   blocking == 0 && !outcome.sweeps.empty() ? v1::PhaseResult::pass
                                                                            : v1::PhaseResult::fail,
                                   CollectivesDetail(outcome, blocking));
                        }
                        for (auto& check : outcome.checks)
                          result.checks.push_back(std::move(check));
                        record.collectives = std::move(outcome.sweeps);
                        record.skipped_scopes = std::move(outcome.skipped);
                      });
}

v1::PhaseResult RunUplink(const plan::Plan& plan, std::vector<NodeState>& nodes,
                          std::vector<NodeState>& sinks, CertificationResult& result,
                          RunRecord& record, Progress& progress, Clock& clock,
                          const RerunScope* rerun, const RunStop* stop, PhaseJournal* journal) {
  return SectionPhase("uplink", plan.uplink.enabled, progress, clock, [&](v1::PhaseResult& phase) {
    if (result.reachable == 0) {
      Conclude(phase, v1::PhaseResult::skipped, kNoAgentAnswered);
      return;
    }
    UplinkOutcome outcome =
        RunUplinkPhase(nodes, sinks, plan, progress, clock, rerun, stop, journal);
    const int blocking = checks::CountBlocking(outcome.checks);
    const v1::UplinkSizing& sizing = outcome.uplink.sizing();
    Conclude(
        phase, blocking == 0 ? v1::PhaseResult::pass : v1::PhaseResult::fail,
        absl::StrCat("sizing ", checks::StatusText(sizing.verdict()), ", ",
                     outcome.uplink.throughput_size(), " run(s) to ", plan.uplink.targets.size(),
                     " target(s), ", blocking, " blocking certification"));
    for (auto& finding : outcome.checks) result.checks.push_back(std::move(finding));
    record.uplink = std::move(outcome.uplink);
  });
}

// Puts a GuardedAgentClient in front of each node's (and sink's) client for
// the run and gives the originals back when it ends, so that no guard
// outlives the run's NodeHealth and RunStop.
class RunGuards {
 public:
  RunGuards(std::vector<NodeState>& nodes, std::vector<NodeState>* sinks,
            const std::shared_ptr<NodeHealth>& health, RunStop* stop) {
    Guard(nodes, health, stop);
    if (sinks != nullptr) Guard(*sinks, health, stop);
  }
  ~RunGuards() {
    for (auto& [state, inner] : originals_) {
      state->client = std::move(inner);
      state->health = nullptr;
    }
  }
  RunGuards(const RunGuards&) = delete;
  RunGuards& operator=(const RunGuards&) = delete;

 private:
  void Guard(std::vector<NodeState>& states, const std::shared_ptr<NodeHealth>& health,
             RunStop* stop) {
    for (NodeState& state : states) {
      if (!state.client) continue;
      std::unique_ptr<AgentClient> inner = std::move(state.client);
      state.client = std::make_unique<GuardedAgentClient>(*inner, state.node.name, health, stop);
      state.health = health.get();
      originals_.emplace_back(&state, std::move(inner));
    }
  }

  std::vector<std::pair<NodeState*, std::unique_ptr<AgentClient>>> originals_;
};

// Runs the phases in order: each starts with every node trusted again
// (NodeHealth), its stalls are named in its detail, and once the run is
// asked to stop the phase under way is marked interrupted and the later ones
// are skipped without a call.
class PhaseSequence {
 public:
  PhaseSequence(NodeHealth& health, RunStop* stop, Progress& progress)
      : health_(health), stop_(stop), progress_(progress) {}

  bool stopping() const { return stop_ != nullptr && stop_->requested(); }

  // `judges`: false for the connect phase, which retries silent nodes itself.
  // `planned`: false when the plan has no section for the phase, whose body
  // then only records that (no call), stopping or not.
  v1::PhaseResult Run(const std::string& name, const std::function<v1::PhaseResult()>& body,
                      bool judges = true, bool planned = true) {
    if (stopping() && planned) {
      const StopRequest request = *stop_->request();
      v1::PhaseResult skipped;
      skipped.set_name(name);
      skipped.set_status(v1::PhaseResult::skipped);
      skipped.set_detail(absl::StrCat("not run: the run was interrupted by ", request.signal,
                                      " during the ", request.phase, " phase"));
      progress_.Line(name, skipped.detail());
      return skipped;
    }
    health_.BeginPhase(name, judges);
    if (stop_ != nullptr) stop_->EnterPhase(name);
    v1::PhaseResult phase = body();
    for (const Stall& stall : health_.Stalls()) {
      const std::string summary = NodeHealth::Summary(stall, name);
      progress_.Line(name, summary);
      phase.set_detail(absl::StrCat(phase.detail(), "; ", summary));
      // What the silent node would have measured is missing.
      if (phase.status() == v1::PhaseResult::pass) phase.set_status(v1::PhaseResult::fail);
    }
    if (std::optional<StopRequest> request = stop_ != nullptr ? stop_->request() : std::nullopt;
        request && request->phase == name) {
      phase.set_status(v1::PhaseResult::interrupted);
      phase.set_detail(absl::StrCat("interrupted by ", request->signal, " after ",
                                    absl::FormatDuration(absl::Trunc(
                                        absl::Milliseconds(phase.duration_ms()), absl::Seconds(1))),
                                    ": ", phase.detail()));
    }
    return phase;
  }

 private:
  NodeHealth& health_;
  RunStop* stop_;
  Progress& progress_;
};

}  // namespace

CertificationResult RunCertification(const plan::Plan& plan, std::vector<NodeState>& nodes,
                                     Progress& progress, Clock& clock, PhaseScope scope,
                                     const RerunScope* rerun, const v1::Baseline* baseline,
                                     std::vector<NodeState>* sinks, RunStop* stop,
                                     PhaseJournal* journal) {
  CertificationResult result;
  RunRecord record;
  record.started = clock.Now();
  auto health = std::make_shared<NodeHealth>(clock.NowFunction());
  RunGuards guards(nodes, sinks, health, stop);
  PhaseSequence phases(*health, stop, progress);

  record.phases.push_back(phases.Run(
      "connect", [&] { return RunConnect(plan, nodes, result, progress, clock); },
      /*judges=*/false));
  record.phases.push_back(phases.Run(
      "inventory", [&] { return RunInventory(plan, nodes, result, progress, clock, rerun); }));

  // port.flap: every rail port's link-down counters now, and again after the
  // last phase, so a flap at any time of the run is caught.
  std::vector<FlapPort> flap_ports;
  std::vector<checks::FlapRead> flaps_first;
  if (scope == PhaseScope::kAll && result.reachable > 0 && !phases.stopping()) {
    flap_ports = FlapPortsOf(plan, nodes, rerun);
    flaps_first = ReadFlapCounters(nodes, flap_ports);
  }

  if (scope == PhaseScope::kAll) {
    record.phases.push_back(phases.Run(
        "pairwise",
        [&] {
          return RunPairwise(plan, nodes, result, record, progress, clock, rerun, stop, journal);
        },
        true, plan.pairwise.enabled));
    record.phases.push_back(phases.Run(
        "collectives",
        [&] {
          return RunCollectives(plan, nodes, result, record, progress, clock, rerun, stop, journal);
        },
        true, plan.collectives.enabled));
    std::vector<NodeState> no_sinks;
    record.phases.push_back(phases.Run(
        "uplink",
        [&] {
          return RunUplink(plan, nodes, sinks != nullptr ? *sinks : no_sinks, result, record,
                           progress, clock, rerun, stop, journal);
        },
        true, plan.uplink.enabled));
  }
  std::vector<v1::LinkFlaps> link_flaps;
  if (!flap_ports.empty() && !phases.stopping()) {
    link_flaps = FlapsOfRun(nodes, flap_ports, flaps_first, ReadFlapCounters(nodes, flap_ports));
    for (const v1::LinkFlaps& port : link_flaps) result.checks.push_back(checks::JudgeFlaps(port));
  }
  if (stop != nullptr) stop->EnterPhase("certify");
  if (std::optional<StopRequest> request = stop != nullptr ? stop->request() : std::nullopt) {
    v1::Interrupted interrupted;
    interrupted.set_signal(request->signal);
    interrupted.set_at(FormatUtc(request->at));
    interrupted.set_phase(request->phase);
    record.interrupted = interrupted;
  }
  record.checks = result.checks;
  record.finished = clock.Now();
  if (journal != nullptr && journal->resuming()) record.resumed = journal->Taken();
  if (rerun != nullptr && baseline != nullptr) {
    record.baseline = *baseline;
    for (const NodeState& state : nodes) {
      if (!rerun->Measures(state.node.name) && state.inventory) {
        record.carried_nodes[state.node.name] = rerun->carried;
      }
    }
  }
  result.certificate = BuildCertificate(plan, nodes, record);
  for (v1::LinkFlaps& port : link_flaps) *result.certificate.add_link_flaps() = std::move(port);
  return result;
}

int ExitCodeFor(const CertificationResult& result, size_t node_count) {
  if (node_count > 0 && result.reachable == 0) return kExitCannotRun;
  return result.certificate.verdict() == "certified" ? kExitCertified : kExitNotCertified;
}

}  // namespace clustercert::controller
