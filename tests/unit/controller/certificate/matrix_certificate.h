#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "common/sha256.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/certificate/verdict_recompute.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/plan/plan_parser.h"
#include "gtest/gtest.h"

namespace clustercert::controller::testing {

// What a run of `format` writes for a plan and its measured cells: the
// reachability phases, each node's inventory checks of that format (on an
// empty inventory: they come out as the evaluation makes them), the matrix's
// checks and suspects by that format's rules, keys, findings and verdict.
// The recompute tests edit it and ask verify what it sees.
inline v1::Certificate MatrixCertificate(const std::string& plan_yaml, const std::string& plan_path,
                                         const std::string& cluster,
                                         std::vector<v1::PairResult> pairs, uint32_t format) {
  auto plan = plan::ParsePlan(plan_yaml, plan_path);
  EXPECT_TRUE(plan.ok()) << plan.status();
  v1::Certificate certificate;
  if (!plan.ok()) return certificate;
  certificate.set_format_version(format);
  certificate.set_tool("clustercert");
  certificate.set_cluster(cluster);
  certificate.set_plan_path(plan_path);
  certificate.set_plan_yaml(plan_yaml);
  certificate.set_plan_sha256(Sha256Hex(plan_yaml));
  for (const char* name : {"connect", "inventory", "pairwise"}) {
    v1::PhaseResult* phase = certificate.add_phases();
    phase->set_name(name);
    phase->set_status(v1::PhaseResult::pass);
  }
  for (const plan::Node& node : plan->nodes) {
    v1::NodeResult* result = certificate.add_nodes();
    result->set_name(node.name);
    result->set_reachable(true);
    result->mutable_inventory()->set_node_name(node.name);
  }
  std::vector<checks::NodeEvidence> evidence;
  for (int i = 0; i < certificate.nodes_size(); ++i) {
    checks::NodeEvidence e;
    e.node = &plan->nodes[static_cast<size_t>(i)];
    e.reachable = true;
    e.inventory = &certificate.nodes(i).inventory();
    evidence.push_back(e);
  }
  // A release of `format` had only the inventory checks of its format.
  for (auto& finding : checks::EvaluateInventoryChecks(*plan, evidence)) {
    if (FormatVersionIntroducing(finding.id()) > format) continue;
    *certificate.add_checks() = std::move(finding);
  }
  MatrixJudgement matrix = JudgeMatrix(*plan, pairs, {}, format);
  for (const auto& pair : pairs) *certificate.add_pairs() = pair;
  for (const auto& finding : matrix.checks) *certificate.add_checks() = finding;
  for (const auto& suspect : matrix.suspects) *certificate.add_suspects() = suspect;
  AssignFindingKeys(*certificate.mutable_checks());
  for (const auto& check : certificate.checks()) {
    if (check.status() == v1::Finding::fail || check.status() == v1::Finding::unknown) {
      *certificate.add_findings() = check;
    }
  }
  const std::vector<std::string> reasons = VerdictReasons(certificate);
  certificate.set_verdict(reasons.empty() ? "certified" : "not-certified");
  for (const auto& reason : reasons) certificate.add_verdict_reasons(reason);
  return certificate;
}

}  // namespace clustercert::controller::testing
