#include "controller/commands/certification_run.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/checks/cluster_checks.h"
#include "controller/checks/node_checks.h"
#include "controller/commands/command_support.h"
#include "controller/phases/collectives_phase.h"
#include "controller/phases/connect_phase.h"
#include "controller/phases/inventory_phase.h"
#include "controller/phases/pairwise_phase.h"
#include "controller/phases/uplink_phase.h"

namespace clustercert::controller {

namespace {

v1::PhaseResult RunPairwise(const plan::Plan& plan, std::vector<NodeState>& nodes,
                            CertificationResult& result, RunRecord& record, Progress& progress,
                            const std::function<absl::Time()>& now, const RerunScope* rerun) {
  v1::PhaseResult phase;
  phase.set_name("pairwise");
  const absl::Time start = now();
  if (!plan.pairwise.enabled) {
    phase.set_status("skipped");
    phase.set_detail("skipped: the plan has no pairwise section");
  } else if (result.reachable < 2) {
    phase.set_status("fail");
    phase.set_detail("fewer than two agents answered: no pair to test");
  } else {
    PairwiseOutcome outcome = RunPairwisePhase(nodes, plan, result.checks, progress, rerun);
    const int blocking = checks::CountBlocking(outcome.checks);
    phase.set_status(blocking == 0 && outcome.rounds > 0 ? "pass" : "fail");
    phase.set_detail(absl::StrCat(outcome.pairs.size(), " cell(s) in ", outcome.rounds,
                                  " round(s), ", outcome.failing, " failing, ",
                                  outcome.suspects.size(), " suspect(s)"));
    for (auto& check : outcome.checks) result.checks.push_back(std::move(check));
    record.pairs = std::move(outcome.pairs);
    record.suspects = std::move(outcome.suspects);
  }
  phase.set_duration_ms(absl::ToInt64Milliseconds(now() - start));
  progress.Line("pairwise", phase.detail());
  return phase;
}

v1::PhaseResult RunCollectives(const plan::Plan& plan, std::vector<NodeState>& nodes,
                               CertificationResult& result, RunRecord& record, Progress& progress,
                               const std::function<absl::Time()>& now, const RerunScope* rerun) {
  v1::PhaseResult phase;
  phase.set_name("collectives");
  const absl::Time start = now();
  if (!plan.collectives.enabled) {
    phase.set_status("skipped");
    phase.set_detail("skipped: the plan has no collectives section");
  } else if (result.reachable == 0) {
    phase.set_status("skipped");
    phase.set_detail("skipped: no agent answered");
  } else {
    CollectivesOutcome outcome = RunCollectivesPhase(nodes, plan, progress, rerun);
    if (!outcome.not_run.empty()) {
      phase.set_status("skipped");
      phase.set_detail(outcome.not_run);
    } else {
      const int blocking = checks::CountBlocking(outcome.checks);
      phase.set_status(blocking == 0 && !outcome.sweeps.empty() ? "pass" : "fail");
      std::string scopes;
      for (const auto& sweep : outcome.sweeps) {
        absl::StrAppend(&scopes, scopes.empty() ? "" : ", ", sweep.scope(), " ",
                        sweep.ok() ? absl::StrFormat("%.4g GB/s", sweep.large_busbw_gbytes())
                                   : std::string("failed"));
      }
      phase.set_detail(absl::StrCat(outcome.sweeps.size(), " sweep(s) (", scopes, "), ",
                                    blocking, " check(s) blocking certification"));
    }
    for (auto& check : outcome.checks) result.checks.push_back(std::move(check));
    record.collectives = std::move(outcome.sweeps);
    record.skipped_scopes = std::move(outcome.skipped);
  }
  phase.set_duration_ms(absl::ToInt64Milliseconds(now() - start));
  progress.Line("collectives", phase.detail());
  return phase;
}

v1::PhaseResult RunUplink(const plan::Plan& plan, std::vector<NodeState>& nodes,
                          std::vector<NodeState>& sinks, CertificationResult& result,
                          RunRecord& record, Progress& progress,
                          const std::function<absl::Time()>& now, const RerunScope* rerun) {
  const absl::Time start = now();
  v1::PhaseResult phase;
  phase.set_name("uplink");
  if (!plan.uplink.enabled) {
    phase.set_status("skipped");
    phase.set_detail("skipped: the plan has no uplink section");
  } else if (result.reachable == 0) {
    phase.set_status("skipped");
    phase.set_detail("skipped: no agent answered");
  } else {
    UplinkOutcome outcome = RunUplinkPhase(nodes, sinks, plan, progress, rerun);
    const int blocking = checks::CountBlocking(outcome.checks);
    phase.set_status(blocking == 0 ? "pass" : "fail");
    const v1::UplinkSizing& sizing = outcome.uplink.sizing();
    phase.set_detail(absl::StrCat(
        "sizing ", sizing.verdict().empty() ? "unknown" : sizing.verdict(), ", ",
        outcome.uplink.throughput_size(), " run(s) to ", plan.uplink.targets.size(),
        " target(s), ", blocking, " blocking certification"));
    for (auto& finding : outcome.checks) result.checks.push_back(std::move(finding));
    record.uplink = std::move(outcome.uplink);
  }
  phase.set_duration_ms(absl::ToInt64Milliseconds(now() - start));
  progress.Line("uplink", phase.detail());
  return phase;
}

}  // namespace

CertificationResult RunCertification(const plan::Plan& plan, std::vector<NodeState>& nodes,
                                     Progress& progress, const std::function<absl::Time()>& now,
                                     PhaseScope scope, const RerunScope* rerun,
                                     const v1::Baseline* baseline,
                                     std::vector<NodeState>* sinks) {
  CertificationResult result;
  RunRecord record;
  record.started = now();

  absl::Time phase_start = now();
  result.reachable = RunConnectPhase(nodes, plan.agents, progress);
  v1::PhaseResult connect;
  connect.set_name("connect");
  connect.set_status(result.reachable == static_cast<int>(nodes.size()) ? "pass" : "fail");
  connect.set_detail(absl::StrCat(result.reachable, " of ", nodes.size(), " agent(s) answered"));
  connect.set_duration_ms(absl::ToInt64Milliseconds(now() - phase_start));
  record.phases.push_back(connect);

  phase_start = now();
  v1::PhaseResult inventory;
  inventory.set_name("inventory");
  if (result.reachable == 0) {
    inventory.set_status("skipped");
    inventory.set_detail("skipped: no agent answered");
    for (const NodeState& state : nodes) {
      result.checks.push_back(checks::ReachabilityFinding(state.node, false, state.error));
    }
  } else {
    result.checks = RunInventoryPhase(nodes, plan, progress, rerun);
    const int blocking = checks::CountBlocking(result.checks);
    inventory.set_status(blocking == 0 ? "pass" : "fail");
    inventory.set_detail(
        absl::StrCat(result.checks.size(), " check(s), ", blocking, " blocking certification"));
  }
  inventory.set_duration_ms(absl::ToInt64Milliseconds(now() - phase_start));
  record.phases.push_back(inventory);

  if (scope == PhaseScope::kAll) {
    record.phases.push_back(RunPairwise(plan, nodes, result, record, progress, now, rerun));
    record.phases.push_back(RunCollectives(plan, nodes, result, record, progress, now, rerun));
    std::vector<NodeState> no_sinks;
    record.phases.push_back(RunUplink(plan, nodes, sinks != nullptr ? *sinks : no_sinks, result,
                                      record, progress, now, rerun));
  }
  record.checks = result.checks;
  record.finished = now();
  if (rerun != nullptr && baseline != nullptr) {
    record.baseline = *baseline;
    for (const NodeState& state : nodes) {
      if (!rerun->Measures(state.node.name) && state.inventory) {
        record.carried_nodes[state.node.name] = rerun->carried;
      }
    }
  }
  result.certificate = BuildCertificate(plan, nodes, record);
  return result;
}

int ExitCodeFor(const CertificationResult& result, size_t node_count) {
  if (node_count > 0 && result.reachable == 0) return kExitCannotRun;
  return result.certificate.verdict() == "certified" ? kExitCertified : kExitNotCertified;
}

}  // namespace clustercert::controller
