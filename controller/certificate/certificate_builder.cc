#include "controller/certificate/certificate_builder.h"

#include "absl/strings/str_cat.h"
#include "common/time_format.h"
#include "common/version.h"
#include "controller/checks/node_checks.h"

namespace clustercert::controller {
namespace {

v1::PhaseResult Skipped(const char* name, bool requested) {
  v1::PhaseResult phase;
  phase.set_name(name);
  phase.set_status("skipped");
  if (requested) {
    phase.set_detail(absl::StrCat("skipped: the ", name, " phase is not in clustercert ",
                                  kToolVersion, "; this certificate covers connect, inventory, pairwise and collectives"));
  } else {
    phase.set_detail(absl::StrCat("skipped: the plan has no ", name, " section"));
  }
  return phase;
}

}  // namespace

std::vector<v1::PhaseResult> UnimplementedPhases(const plan::Plan& plan) {
  return {Skipped("uplink", plan.uplink.enabled)};
}

v1::Certificate BuildCertificate(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const RunRecord& record) {
  v1::Certificate certificate;
  certificate.set_format_version(1);
  certificate.set_tool("clustercert");
  certificate.set_tool_version(kToolVersion);
  certificate.set_cluster(plan.cluster);
  certificate.set_plan_path(plan.path);
  certificate.set_plan_sha256(plan.sha256);
  certificate.set_started_at(FormatUtc(record.started));
  certificate.set_finished_at(FormatUtc(record.finished));

  for (const auto& phase : record.phases) *certificate.add_phases() = phase;
  for (const NodeState& state : nodes) {
    v1::NodeResult* node = certificate.add_nodes();
    node->set_name(state.node.name);
    node->set_agent(state.node.agent);
    node->set_reachable(state.reachable);
    node->set_error(state.error);
    node->set_agent_version(state.version.agent_version());
    if (state.inventory) *node->mutable_inventory() = *state.inventory;
  }

  for (const auto& pair : record.pairs) *certificate.add_pairs() = pair;
  for (const auto& suspect : record.suspects) *certificate.add_suspects() = suspect;
  for (const auto& sweep : record.collectives) *certificate.add_collectives() = sweep;

  std::vector<std::string> reasons;
  int blocking = 0;
  for (const auto& check : record.checks) {
    *certificate.add_checks() = check;
    if (check.status() == "fail" || check.status() == "unknown") {
      *certificate.add_findings() = check;
    }
    if (checks::BlocksCertification(check)) ++blocking;
  }
  for (const NodeState& state : nodes) {
    if (!state.reachable) reasons.push_back(absl::StrCat(state.node.name, " was unreachable"));
  }
  if (blocking > 0) {
    reasons.push_back(absl::StrCat(blocking, " check(s) of severity error failed or are unknown"));
  }
  // A phase the plan asks for that did not run (not in this build, no GPU
  // for nccl, no agent) keeps the run from being certified.
  for (const auto& phase : record.phases) {
    if (phase.status() == "skipped" &&
        phase.detail().find("the plan has no") == std::string::npos) {
      reasons.push_back(absl::StrCat("the plan asks for the ", phase.name(),
                                     " phase, which did not run (", phase.detail(), ")"));
    }
  }
  certificate.set_verdict(reasons.empty() ? "certified" : "not-certified");
  for (auto& reason : reasons) certificate.add_verdict_reasons(reason);
  return certificate;
}

}  // namespace clustercert::controller
