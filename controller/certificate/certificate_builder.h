#pragma once

#include <map>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/phases/node_state.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Assembles the certificate of one run and decides its verdict.
//
// Certified means: every node answered, no check of severity error failed or
// stayed unknown, and every phase the plan asked for actually ran (and the
// incast rounds, when it asks for pairwise.incast). A phase the plan
// requests that this build cannot run is recorded as skipped with its
// reason and keeps the run from being certified: a certificate never claims
// more than was measured.
struct RunRecord {
  absl::Time started;
  absl::Time finished;
  std::vector<v1::PhaseResult> phases;
  std::vector<v1::Finding> checks;
  std::vector<v1::PairResult> pairs;
  std::vector<v1::Suspect> suspects;
  std::vector<v1::CollectiveSweep> collectives;
  std::vector<std::string> skipped_scopes;  // "2-node: <reason>"
  std::vector<v1::IncastResult> incast;     // pairwise.incast's rounds
  // Why the planned incast rounds did not run ("" when they ran or the plan
  // has none): a SkippedTest of kind "incast".
  std::string incast_skipped;
  // A partial re-certification: its baseline, and the nodes whose
  // inventory was taken over from it.
  std::optional<v1::Baseline> baseline;
  std::map<std::string, v1::Carried> carried_nodes;
  std::optional<v1::Uplink> uplink;            // set when the uplink phase ran
  std::optional<v1::Interrupted> interrupted;  // set when a signal stopped the run
  std::optional<v1::Resumed> resumed;          // set when it took over a killed run's results
};

// The schema version certificate.json is written in (docs/certificate.md).
inline constexpr uint32_t kCertificateFormatVersion = 8;

v1::Certificate BuildCertificate(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const RunRecord& record);

// Why a certificate is not certified (empty: certified), from its nodes,
// checks and phases: an interrupted run, an unreachable node, a blocking
// check, a phase the plan asks for that did not run. `controller verify` recomputes it the same
// way.
std::vector<std::string> VerdictReasons(const v1::Certificate& certificate);

// Sets each finding's stable key (FindingKey unless one is set), making
// repeated keys unique with "#2", "#3".
void AssignFindingKeys(google::protobuf::RepeatedPtrField<v1::Finding>& findings);

}  // namespace clustercert::controller
