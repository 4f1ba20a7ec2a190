#include "controller/certificate/certificate_builder.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/time_format.h"
#include "common/version.h"
#include "controller/certificate/result_keys.h"
#include "controller/checks/consistency_checks.h"
#include "controller/checks/node_checks.h"
#include "controller/pairwise/gpu_rail_map.h"

namespace clustercert::controller {

std::vector<std::string> VerdictReasons(const v1::Certificate& certificate) {
  std::vector<std::string> reasons;
  // A stopped run measured part of the plan at most, whatever that part says.
  if (certificate.has_interrupted()) {
    const v1::Interrupted& stop = certificate.interrupted();
    reasons.push_back(absl::StrCat("the run was interrupted by ", stop.signal(), " at ", stop.at(),
                                   " during the ", stop.phase(),
                                   " phase: only part of the plan was measured; run it again to "
                                   "completion"));
  }
  for (const auto& node : certificate.nodes()) {
    if (!node.reachable()) reasons.push_back(absl::StrCat(node.name(), " was unreachable"));
  }
  int blocking = 0;
  for (const auto& check : certificate.checks()) {
    if (checks::BlocksCertification(check)) ++blocking;
  }
  if (blocking > 0) {
    reasons.push_back(absl::StrCat(blocking, " check(s) of severity error failed or are unknown"));
  }
  // A phase the plan asks for that did not run (not in this build, no GPU
  // for nccl, no agent) keeps the run from being certified.
  for (const auto& phase : certificate.phases()) {
    if (phase.status() == v1::PhaseResult::skipped &&
        phase.detail().find("the plan has no") == std::string::npos) {
      reasons.push_back(absl::StrCat("the plan asks for the ", phase.name(),
                                     " phase, which did not run (", phase.detail(), ")"));
    }
  }
  // So do pairwise.incast's rounds when none could run.
  for (const auto& skipped : certificate.skipped()) {
    if (skipped.kind() == "incast") {
      reasons.push_back(absl::StrCat(
          "the plan asks for pairwise.incast, whose rounds did not run (", skipped.reason(), ")"));
    }
  }
  return reasons;
}

void AssignFindingKeys(google::protobuf::RepeatedPtrField<v1::Finding>& findings) {
  std::map<std::string, int> seen;
  for (auto& finding : findings) {
    std::string key = finding.key().empty() ? FindingKey(finding) : finding.key();
    const int n = ++seen[key];
    if (n > 1) absl::StrAppend(&key, "#", n);
    finding.set_key(key);
  }
}

std::vector<v1::SkippedTest> SkippedTests(const v1::Certificate& certificate) {
  std::vector<v1::SkippedTest> skipped;
  auto add = [&](const char* kind, const std::string& key, const std::string& reason) {
    v1::SkippedTest test;
    test.set_kind(kind);
    test.set_key(key);
    test.set_reason(reason);
    skipped.push_back(std::move(test));
  };
  for (const auto& phase : certificate.phases()) {
    if (phase.status() == v1::PhaseResult::skipped) add("phase", phase.name(), phase.detail());
  }
  for (const auto& check : certificate.checks()) {
    if (check.status() == v1::Finding::skipped) add("check", check.key(), check.message());
  }
  // A main cell's verdict is already among the checks; retests are not.
  for (const auto& pair : certificate.pairs()) {
    if (!pair.retest_of().empty() && pair.verdict().status() == v1::Finding::skipped) {
      add("pair", PairKey(pair), pair.verdict().message());
    }
  }
  return skipped;
}

v1::Certificate BuildCertificate(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const RunRecord& record) {
  v1::Certificate certificate;
  certificate.set_format_version(kCertificateFormatVersion);
  certificate.set_tool("clustercert");
  certificate.set_tool_version(kToolVersion);
  certificate.set_cluster(plan.cluster);
  certificate.set_plan_path(plan.path);
  certificate.set_plan_sha256(plan.sha256);
  certificate.set_plan_yaml(plan.text);
  certificate.set_cabling_csv(plan.cabling_text);
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
    if (state.inventory) {
      *node->mutable_inventory() = *state.inventory;
      *node->mutable_versions() = checks::NodeVersionsOf(*state.inventory, state.node);
      const auto& memory = plan.pairwise.memory;
      const bool cuda_cells = plan.pairwise.enabled &&
                              plan.pairwise.engine == plan::PairwiseEngine::kVerbs &&
                              std::find(memory.begin(), memory.end(), "cuda") != memory.end();
      for (v1::GpuRail& entry :
           pairwise::MapGpusToRails(*state.inventory, state.node.rails, plan.pairwise.cuda_gpus)) {
        entry.set_tested(entry.tested() && cuda_cells);
        *node->add_gpu_rails() = std::move(entry);
      }
    }
    if (auto it = record.carried_nodes.find(state.node.name); it != record.carried_nodes.end()) {
      *node->mutable_carried() = it->second;
    }
    if (state.clock) {
      node->set_clock_measured(true);
      const ClockEstimate& clock = state.clock->estimate;
      node->set_clock_offset_ms(absl::ToDoubleMilliseconds(clock.offset));
      node->set_clock_uncertainty_ms(absl::ToDoubleMilliseconds(clock.uncertainty()));
      node->set_clock_exchanges(clock.exchanges);
      node->set_clock_delay_ms(absl::ToDoubleMilliseconds(clock.delay));
    }
  }

  if (record.baseline) *certificate.mutable_baseline() = *record.baseline;
  for (const auto& pair : record.pairs) *certificate.add_pairs() = pair;
  for (const auto& round : record.incast) *certificate.add_incast() = round;
  if (record.uplink) *certificate.mutable_uplink() = *record.uplink;
  if (record.interrupted) *certificate.mutable_interrupted() = *record.interrupted;
  if (record.resumed) *certificate.mutable_resumed() = *record.resumed;
  for (const auto& suspect : record.suspects) *certificate.add_suspects() = suspect;
  for (const auto& sweep : record.collectives) *certificate.add_collectives() = sweep;

  for (const auto& check : record.checks) *certificate.add_checks() = check;
  AssignFindingKeys(*certificate.mutable_checks());
  for (const auto& check : certificate.checks()) {
    if (check.status() == v1::Finding::fail || check.status() == v1::Finding::unknown) {
      *certificate.add_findings() = check;
    }
  }
  for (auto& suspect : *certificate.mutable_suspects()) {
    AssignFindingKeys(*suspect.mutable_inventory_findings());
  }
  for (auto& skipped : SkippedTests(certificate)) *certificate.add_skipped() = std::move(skipped);
  for (const auto& skipped : record.skipped_scopes) {
    v1::SkippedTest* test = certificate.add_skipped();
    test->set_kind("sweep");
    test->set_key(skipped.substr(0, skipped.find(':')));
    test->set_reason(skipped);
  }
  if (!record.incast_skipped.empty()) {
    v1::SkippedTest* test = certificate.add_skipped();
    test->set_kind("incast");
    test->set_key("incast");
    test->set_reason(record.incast_skipped);
  }
  const std::vector<std::string> reasons = VerdictReasons(certificate);
  certificate.set_verdict(reasons.empty() ? "certified" : "not-certified");
  for (const auto& reason : reasons) certificate.add_verdict_reasons(reason);
  return certificate;
}

}  // namespace clustercert::controller
