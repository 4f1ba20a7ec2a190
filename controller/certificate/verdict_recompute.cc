#include "controller/certificate/verdict_recompute.h"

#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/non_finite.h"
#include "common/sha256.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/certificate/result_keys.h"
#include "controller/checks/flap_checks.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/checks/status_text.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/collectives/sweep_merge.h"
#include "controller/pairwise/incast_verdict.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/plan/plan_parser.h"
#include "controller/uplink/uplink_sizing.h"
#include "controller/uplink/uplink_verdicts.h"
#include "google/protobuf/util/message_differencer.h"

namespace clustercert::controller {

// The certificate format that first recorded a check; 2 for every check
// schema 2 had (schema 1 cannot be recomputed at all).
uint32_t FormatVersionIntroducing(const std::string& id) {
  static const char* const kFormat4[] = {
      "collectives.intra_node", "collectives.env", "pcie.acs", "host.iommu",
      "nic.link_type",          "nic.ats"};
  for (const char* introduced : kFormat4) {
    if (id == introduced) return 4;
  }
  // Format 7: DCQCN of each incast round; the module srcversion and load order.
  if (id == "incast.dcqcn" || id == "incast.cnp_ignored" || id == "stack.srcversion" ||
      id == "stack.module_order") {
    return 7;
  }
  // Format 6: the lossless chain of each bandwidth cell and incast round.
  if (id.rfind("lossless.", 0) == 0 || id.rfind("incast.", 0) == 0) return 6;
  // Format 7: each pairwise cell's path MTU.
  if (id == "mtu.path") return 7;
  // Format 8: the physical layer (issue 36): where each cable lands, the
  // module in it, link flaps over the run.
  if (id.rfind("cabling.", 0) == 0 || id.rfind("cable.", 0) == 0 || id == "port.flap") return 8;
  if (id.rfind("consistency.", 0) == 0) return 4;
  if (id == "mgmt.subnet" || id.rfind("uplink.", 0) == 0) return 3;
  return 2;
}

namespace {

std::string Describe(const v1::Finding& finding) {
  std::string text = absl::StrCat(checks::StatusText(finding.status()), " (",
                                  checks::StatusText(finding.severity()), ")");
  if (!finding.observed().empty()) absl::StrAppend(&text, ", observed ", finding.observed());
  if (!finding.expected().empty()) absl::StrAppend(&text, ", expected ", finding.expected());
  return text;
}

// The fields a verdict consists of; `where` names the finding in the sentence.
void CompareFinding(const std::string& where, const v1::Finding& recorded,
                    const v1::Finding& recomputed, std::vector<std::string>& differences) {
  const bool same = recorded.id() == recomputed.id() && recorded.status() == recomputed.status() &&
                    recorded.severity() == recomputed.severity() &&
                    recorded.observed() == recomputed.observed() &&
                    recorded.expected() == recomputed.expected() &&
                    recorded.message() == recomputed.message() &&
                    recorded.has_value() == recomputed.has_value() &&
                    SameValue(recorded.value(), recomputed.value()) &&
                    SameValue(recorded.threshold(), recomputed.threshold());
  if (same) return;
  differences.push_back(absl::StrCat(
      where, ": recorded ", Describe(recorded), "; recomputed from the recorded values ",
      Describe(recomputed),
      recorded.message() != recomputed.message() && recorded.status() == recomputed.status()
          ? absl::StrCat(" (message differs: recorded \"", recorded.message(), "\", recomputed \"",
                         recomputed.message(), "\")")
          : ""));
}

void CompareFindingLists(const std::string& list,
                         const google::protobuf::RepeatedPtrField<v1::Finding>& recorded,
                         const google::protobuf::RepeatedPtrField<v1::Finding>& recomputed,
                         std::vector<std::string>& differences) {
  std::map<std::string, const v1::Finding*> by_key;
  for (const auto& finding : recomputed) by_key[finding.key()] = &finding;
  std::map<std::string, bool> seen;
  for (const auto& finding : recorded) {
    const std::string key = finding.key().empty() ? FindingKey(finding) : finding.key();
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      differences.push_back(absl::StrCat(list, " ", key, ": recorded ", Describe(finding),
                                         ", but no such check follows from the recorded values"));
      continue;
    }
    seen[key] = true;
    CompareFinding(absl::StrCat(list, " ", key), finding, *it->second, differences);
  }
  for (const auto& finding : recomputed) {
    if (!seen.count(finding.key())) {
      differences.push_back(absl::StrCat(list, " ", finding.key(),
                                         ": missing from the record; "
                                         "recomputed ",
                                         Describe(finding)));
    }
  }
}

void CompareSuspects(const v1::Certificate& certificate, const std::vector<v1::Suspect>& recomputed,
                     std::vector<std::string>& differences) {
  auto name = [](const v1::Suspect& s) {
    return absl::StrCat(s.node().empty() ? "fabric" : s.node(), s.rail().empty() ? "" : "/",
                        s.rail());
  };
  auto text = [&](const v1::Suspect& s) {
    return absl::StrCat(name(s), " (", s.failing_pairs(), " of ", s.total_pairs(),
                        " pairs failing: ", s.reason(), ")");
  };
  std::vector<std::string> recorded_text;
  std::vector<std::string> recomputed_text;
  for (const auto& s : certificate.suspects()) recorded_text.push_back(text(s));
  for (const auto& s : recomputed) recomputed_text.push_back(text(s));
  if (recorded_text != recomputed_text) {
    differences.push_back(absl::StrCat("suspects: recorded [", absl::StrJoin(recorded_text, "; "),
                                       "], recomputed [", absl::StrJoin(recomputed_text, "; "),
                                       "]"));
  }
}

// The plan the certificate embeds, checked against its recorded hash;
// nullopt (with the reason in `differences`) when there is none to judge by.
std::optional<plan::Plan> EmbeddedPlan(const v1::Certificate& certificate,
                                       std::vector<std::string>& differences) {
  if (certificate.plan_yaml().empty()) {
    differences.push_back(
        "the certificate embeds no plan (plan_yaml is empty; schema 1 certificates do not): its "
        "verdicts cannot be recomputed; re-run the plan with this release");
    return std::nullopt;
  }
  if (Sha256Hex(certificate.plan_yaml()) != certificate.plan_sha256()) {
    differences.push_back(
        absl::StrCat("plan_yaml: its SHA-256 is ", Sha256Hex(certificate.plan_yaml()),
                     " but the certificate records plan_sha256 ", certificate.plan_sha256(),
                     ": the embedded plan was edited"));
  }
  // From format 8 the cable plan's bytes travel in the certificate: the
  // recomputation reads them, never the file the path names today.
  plan::PlanAttachments attachments;
  if (certificate.format_version() >= 8) attachments.cabling_csv = certificate.cabling_csv();
  auto plan = plan::ParsePlan(certificate.plan_yaml(), certificate.plan_path(), plan::PlanLimits(),
                              attachments);
  if (!plan.ok()) {
    differences.push_back(absl::StrCat("the embedded plan does not parse (",
                                       plan.status().message(),
                                       "): verdicts cannot be recomputed"));
    return std::nullopt;
  }
  return *std::move(plan);
}

// Each plan node's recorded reachability, inventory and clock.
std::vector<checks::NodeEvidence> RecordedEvidence(const v1::Certificate& certificate,
                                                   const plan::Plan& plan,
                                                   VerdictRecheck& recheck) {
  std::map<std::string, const v1::NodeResult*> node_results;
  for (const auto& node : certificate.nodes()) {
    node_results[node.name()] = &node;
    if (node.has_carried()) ++recheck.carried;
  }
  std::vector<checks::NodeEvidence> evidence;
  for (const plan::Node& node : plan.nodes) {
    auto it = node_results.find(node.name);
    if (it == node_results.end()) {
      recheck.differences.push_back(absl::StrCat("nodes: the plan names ", node.name,
                                                 " but the certificate has no result for it"));
      continue;
    }
    const v1::NodeResult& result = *it->second;
    checks::NodeEvidence e;
    e.node = &node;
    e.reachable = result.reachable();
    e.error = result.error();
    e.inventory = result.has_inventory() ? &result.inventory() : nullptr;
    if (result.clock_measured()) {
      e.clock = checks::NodeClockOffset{node.name, absl::Milliseconds(result.clock_offset_ms()),
                                        absl::Milliseconds(result.clock_uncertainty_ms())};
    }
    evidence.push_back(e);
  }
  if (node_results.size() != plan.nodes.size()) {
    recheck.differences.push_back(absl::StrCat("nodes: the certificate has ", node_results.size(),
                                               " node result(s), the plan names ",
                                               plan.nodes.size()));
  }
  return evidence;
}

// The inventory checks, or only reachability when the phase did not run.
std::vector<v1::Finding> RecomputeInventoryChecks(
    const v1::Certificate& certificate, const plan::Plan& plan,
    const std::vector<checks::NodeEvidence>& evidence) {
  bool inventory_ran = false;
  for (const auto& phase : certificate.phases()) {
    if (phase.name() == "inventory" && phase.status() != v1::PhaseResult::skipped)
      inventory_ran = true;
  }
  if (inventory_ran) return checks::EvaluateInventoryChecks(plan, evidence);
  std::vector<v1::Finding> reachability;
  reachability.reserve(evidence.size());
  for (const auto& e : evidence) {
    reachability.push_back(checks::ReachabilityFinding(*e.node, false, e.error));
  }
  return reachability;
}

// Each pair cell from its measurement and line rate; the matrix's findings
// go to `recomputed`, its suspects are compared with the record.
void RecheckPairs(const v1::Certificate& certificate, const plan::Plan& plan,
                  const std::vector<v1::Finding>& inventory_checks, VerdictRecheck& recheck,
                  v1::Certificate& recomputed) {
  std::vector<v1::PairResult> pairs(certificate.pairs().begin(), certificate.pairs().end());
  MatrixJudgement matrix = JudgeMatrix(plan, pairs, inventory_checks, certificate.format_version());
  recheck.pairs = static_cast<int>(pairs.size());
  for (int i = 0; i < certificate.pairs_size(); ++i) {
    const v1::PairResult& pair = certificate.pairs(i);
    if (pair.has_carried()) ++recheck.carried;
    CompareFinding(absl::StrCat("pairs[", PairKey(pair), "] verdict"), pair.verdict(),
                   pairs[static_cast<size_t>(i)].verdict(), recheck.differences);
  }
  for (auto& finding : matrix.checks) *recomputed.add_checks() = std::move(finding);
  CompareSuspects(certificate, matrix.suspects, recheck.differences);
}

// Collective sweeps, from their rows and transports.
void RecheckSweeps(const v1::Certificate& certificate, const plan::Plan& plan,
                   VerdictRecheck& recheck, v1::Certificate& recomputed) {
  std::vector<v1::CollectiveSweep> sweeps(certificate.collectives().begin(),
                                          certificate.collectives().end());
  recheck.sweeps = static_cast<int>(sweeps.size());
  for (auto& sweep : sweeps) {
    if (sweep.has_carried()) ++recheck.carried;
    // The large-message figure the busbw verdict judges follows from the rows.
    const double recorded = sweep.large_busbw_gbytes();
    const int64_t recorded_from = sweep.large_from_bytes();
    SetSweepRows({sweep.rows().begin(), sweep.rows().end()}, sweep);
    if (!SameValue(sweep.large_busbw_gbytes(), recorded) ||
        sweep.large_from_bytes() != recorded_from) {
      recheck.differences.push_back(
          absl::StrCat("collectives[", SweepName(sweep), "]: recorded large-message busbw ",
                       recorded, " GB/s from ", recorded_from, " B, but its rows give ",
                       sweep.large_busbw_gbytes(), " GB/s from ", sweep.large_from_bytes(), " B"));
    }
  }
  for (auto& finding : JudgeSweeps(plan, sweeps, certificate.format_version())) {
    *recomputed.add_checks() = std::move(finding);
  }
}

// The uplink: the sizing from the plan alone, each run's share of the
// ingest from the plan, the verdicts from the recorded runs.
void RecheckUplink(const v1::Certificate& certificate, const plan::Plan& plan,
                   VerdictRecheck& recheck, v1::Certificate& recomputed) {
  if (!certificate.has_uplink()) return;
  const v1::UplinkSizing& recorded = certificate.uplink().sizing();
  v1::Uplink uplink = certificate.uplink();
  *uplink.mutable_sizing() = uplink::SizeUplink(plan);
  if (!google::protobuf::util::MessageDifferencer::Equals(uplink.sizing(), recorded)) {
    recheck.differences.push_back(
        absl::StrCat("uplink.sizing: recorded ", recorded.required_gbps(), " Gb/s needed of ",
                     recorded.capacity_gbps(), " (", recorded.verdict(),
                     "), the plan's arithmetic gives ", uplink.sizing().required_gbps(), " of ",
                     uplink.sizing().capacity_gbps(), " (", uplink.sizing().verdict(), ")"));
  }
  std::map<std::string, const plan::Node*> plan_nodes;
  for (const plan::Node& node : plan.nodes) plan_nodes[node.name] = &node;
  for (v1::UplinkThroughput& run : *uplink.mutable_throughput()) {
    if (run.has_carried()) ++recheck.carried;
    auto node = plan_nodes.find(run.node());
    const double need =
        node == plan_nodes.end() ? 0 : uplink::NodeNeedGbps(plan, uplink.sizing(), *node->second);
    if (need != run.need_gbps()) {
      recheck.differences.push_back(absl::StrCat("uplink.throughput[", run.node(), " -> ",
                                                 run.target(), "]: recorded need ", run.need_gbps(),
                                                 " Gb/s, the plan gives ", need));
      run.set_need_gbps(need);
    }
  }
  for (auto& finding : uplink::JudgeUplink(uplink)) *recomputed.add_checks() = std::move(finding);
}

// pairwise.incast's rounds: each round's sums from its senders' figures
// against the recorded ones, then its findings as the run judged them. A
// skipped incast keeps the run from being certified (VerdictReasons).
void RecheckIncast(const v1::Certificate& certificate, const plan::Plan& plan,
                   VerdictRecheck& recheck, v1::Certificate& recomputed) {
  for (const v1::IncastResult& recorded : certificate.incast()) {
    if (recorded.has_carried()) ++recheck.carried;
    v1::IncastResult round = recorded;
    pairwise::SummarizeIncast(round);
    if (!SameValue(round.aggregate_gbps(), recorded.aggregate_gbps()) ||
        !SameValue(round.fairness(), recorded.fairness())) {
      recheck.differences.push_back(absl::StrCat(
          "incast[", pairwise::IncastLabel(recorded), "]: recorded ", recorded.aggregate_gbps(),
          " Gb/s at fairness ", recorded.fairness(), ", but its senders give ",
          round.aggregate_gbps(), " Gb/s at fairness ", round.fairness()));
    }
    for (auto& finding : pairwise::JudgeIncast(plan, round)) {
      *recomputed.add_checks() = std::move(finding);
    }
  }
  for (const auto& skipped : certificate.skipped()) {
    if (skipped.kind() == "incast") *recomputed.add_skipped() = skipped;
  }
}

// A certificate of an earlier format was judged by the checks its release
// had: leave out the ones added since, so an upgrade does not invalidate it.
void DropChecksNewerThan(uint32_t format_version,
                         google::protobuf::RepeatedPtrField<v1::Finding>& checks) {
  for (int i = checks.size() - 1; i >= 0; --i) {
    if (format_version < FormatVersionIntroducing(checks.Get(i).id())) {
      checks.DeleteSubrange(i, 1);
    }
  }
}

// The certificate's checks and findings list against the recomputed checks.
void CompareChecks(const v1::Certificate& certificate, VerdictRecheck& recheck,
                   const v1::Certificate& recomputed) {
  recheck.checks = recomputed.checks_size();
  for (const auto& finding : certificate.checks()) {
    if (finding.has_carried()) ++recheck.carried;
  }
  CompareFindingLists("checks", certificate.checks(), recomputed.checks(), recheck.differences);
  // The findings list is the failed and unknown checks, as recorded.
  google::protobuf::RepeatedPtrField<v1::Finding> failing;
  for (const auto& check : certificate.checks()) {
    if (check.status() == v1::Finding::fail || check.status() == v1::Finding::unknown)
      *failing.Add() = check;
  }
  CompareFindingLists("findings", certificate.findings(), failing, recheck.differences);
}

// The verdict, from the recomputed checks with the recorded nodes and phases.
void CompareVerdict(const v1::Certificate& certificate, v1::Certificate recomputed,
                    std::vector<std::string>& differences) {
  *recomputed.mutable_nodes() = certificate.nodes();
  *recomputed.mutable_phases() = certificate.phases();
  // An interrupted run stays not-certified whatever its verdict field says.
  if (certificate.has_interrupted()) *recomputed.mutable_interrupted() = certificate.interrupted();
  const std::vector<std::string> reasons = VerdictReasons(recomputed);
  const std::string verdict = reasons.empty() ? "certified" : "not-certified";
  if (verdict != certificate.verdict()) {
    differences.push_back(
        absl::StrCat("verdict: recorded ", certificate.verdict(), ", recomputed ", verdict,
                     reasons.empty() ? "" : absl::StrCat(" (", absl::StrJoin(reasons, "; "), ")")));
  } else if (std::vector<std::string>(certificate.verdict_reasons().begin(),
                                      certificate.verdict_reasons().end()) != reasons) {
    differences.push_back(absl::StrCat("verdict_reasons: recorded [",
                                       absl::StrJoin(certificate.verdict_reasons(), "; "),
                                       "], recomputed [", absl::StrJoin(reasons, "; "), "]"));
  }
}

}  // namespace

VerdictRecheck RecheckVerdicts(const v1::Certificate& certificate) {
  VerdictRecheck recheck;
  const std::optional<plan::Plan> plan = EmbeddedPlan(certificate, recheck.differences);
  if (!plan.has_value()) return recheck;

  v1::Certificate recomputed;
  const std::vector<checks::NodeEvidence> evidence = RecordedEvidence(certificate, *plan, recheck);
  const std::vector<v1::Finding> inventory_checks =
      RecomputeInventoryChecks(certificate, *plan, evidence);
  for (const auto& finding : inventory_checks) *recomputed.add_checks() = finding;
  RecheckPairs(certificate, *plan, inventory_checks, recheck, recomputed);
  RecheckSweeps(certificate, *plan, recheck, recomputed);
  RecheckUplink(certificate, *plan, recheck, recomputed);
  RecheckIncast(certificate, *plan, recheck, recomputed);
  for (v1::Finding& finding : checks::JudgeAllFlaps(certificate.link_flaps())) {
    *recomputed.add_checks() = std::move(finding);
  }

  DropChecksNewerThan(certificate.format_version(), *recomputed.mutable_checks());
  AssignFindingKeys(*recomputed.mutable_checks());
  CompareChecks(certificate, recheck, recomputed);
  CompareVerdict(certificate, std::move(recomputed), recheck.differences);
  return recheck;
}

}  // namespace clustercert::controller
