#include "controller/pairwise/phase/matrix_judgement.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/non_finite.h"
#include "controller/certificate/result_keys.h"
#include "controller/checks/mtu_checks.h"
#include "controller/pairwise/localisation.h"
#include "controller/pairwise/lossless_verdict.h"
#include "controller/pairwise/pair_verdict.h"

namespace clustercert::controller {
namespace {

// The server's rail: the plan's rail of the same index on the server (a pair
// runs on rail i of both ends), the client's rail name when the plan does
// not say.
std::string ServerRail(const plan::Plan& plan, const v1::PairResult& pair) {
  const plan::Node* client = nullptr;
  const plan::Node* server = nullptr;
  for (const plan::Node& node : plan.nodes) {
    if (node.name == pair.client()) client = &node;
    if (node.name == pair.server()) server = &node;
  }
  if (client == nullptr || server == nullptr) return pair.rail();
  for (size_t i = 0; i < client->rails.size(); ++i) {
    if (client->rails[i] == pair.rail() && i < server->rails.size()) return server->rails[i];
  }
  return pair.rail();
}

}  // namespace

bool IsBandwidthTest(const std::string& test) {
  return test.size() > 3 && test.substr(test.size() - 3) == "_bw";
}

pairwise::PairMeasurement MeasurementOf(const v1::PairResult& pair, bool bidirectional) {
  pairwise::PairMeasurement m;
  m.client = pair.client();
  m.server = pair.server();
  m.rail = pair.rail();
  m.memory = pair.memory();
  m.test = pair.test();
  m.ok = pair.ok();
  m.error = pair.error();
  m.control_plane = pair.control_plane();
  // The receiver's figure is the bandwidth (what arrived); latency is the client's.
  m.result = pair.client_result();
  if (IsBandwidthTest(pair.test()) && bidirectional) {
    const auto& a = pair.client_result().bandwidth();
    const auto& b = pair.server_result().bandwidth();
    *m.result.mutable_bandwidth() = a.avg_gbps() <= b.avg_gbps() ? a : b;
  } else if (IsBandwidthTest(pair.test()) && pair.server_result().bandwidth().avg_gbps() > 0) {
    *m.result.mutable_bandwidth() = pair.server_result().bandwidth();
  }
  m.line_rate_gbps = pair.line_rate_gbps();
  // Before any figure is compared: NaN compares false with everything and
  // inf passes every floor, and the choice of end above would skip either.
  if (auto bad = FindNonFinite(pair.client_result())) {
    m.invalid = NonFiniteSentence(pair.client(), bad->field, bad->value);
  } else if (auto bad_server = FindNonFinite(pair.server_result())) {
    m.invalid = NonFiniteSentence(pair.server(), bad_server->field, bad_server->value);
  }
  return m;
}

v1::Finding JudgeCell(const plan::Plan& plan, const v1::PairResult& pair, uint32_t format) {
  v1::Finding verdict =
      pairwise::JudgePair(plan.pairwise, MeasurementOf(pair, plan.pairwise.bidirectional));
  if (format >= 4) verdict = pairwise::WithCounterVerdict(plan.pairwise, pair, std::move(verdict));
  v1::PairResult keyed = pair;
  *keyed.mutable_verdict() = verdict;
  verdict.set_key(PairVerdictKey(keyed));
  if (pair.ok() &&
      (verdict.status() == v1::Finding::pass || verdict.status() == v1::Finding::fail)) {
    verdict.set_has_value(true);
    verdict.set_value(pair.value());
    verdict.set_unit(pair.unit());
    verdict.set_threshold(pair.threshold());
  }
  return verdict;
}

bool CellFails(const v1::Finding& verdict) {
  return verdict.status() == v1::Finding::fail && verdict.severity() != v1::Finding::warning;
}

std::string LosslessLabel(const v1::PairResult& pair) {
  std::string label = pair.client();
  if (!pair.rail().empty()) absl::StrAppend(&label, "/", pair.rail());
  absl::StrAppend(&label, "->", pair.server(), " ", pair.test(), " ", pair.memory());
  return label;
}

std::vector<pairwise::LosslessEnd> LosslessEnds(const plan::Plan& plan,
                                                const v1::PairResult& pair) {
  // read_bw moves the data from the server's memory to the client.
  const bool client_sends = plan.pairwise.bidirectional || pair.test() != "read_bw";
  const bool server_sends = plan.pairwise.bidirectional || pair.test() == "read_bw";
  return {
      {pair.client(), pair.rail(), &pair.client_counters(), client_sends, server_sends},
      {pair.server(), ServerRail(plan, pair), &pair.server_counters(), server_sends, client_sends}};
}

LosslessCells JudgeLosslessCells(const plan::Plan& plan, const std::vector<v1::PairResult>& pairs) {
  LosslessCells cells;
  if (!pairwise::LosslessJudged(plan)) return cells;
  std::string first_reason;
  bool any_cell = false;
  for (const v1::PairResult& pair : pairs) {
    if (!pair.retest_of().empty() || !IsBandwidthTest(pair.test())) continue;
    any_cell = true;
    if (!pair.ok()) continue;  // not measured: its verdict already says why
    if (pair.engine() == "tcp") {
      if (first_reason.empty()) {
        first_reason = absl::StrCat("the tcp engine's traffic is not RDMA (", LosslessLabel(pair),
                                    "): only the verbs engine's tests travel on the RoCE "
                                    "priority");
      }
      continue;
    }
    pairwise::LosslessJudgement judgement =
        pairwise::JudgeLossless(plan, LosslessLabel(pair), LosslessEnds(plan, pair));
    if (judgement.judged) ++cells.judged;
    if (!judgement.judged && first_reason.empty()) first_reason = judgement.not_judged_reason;
    for (auto& finding : judgement.findings) {
      if (pair.has_carried()) *finding.mutable_carried() = pair.carried();
      cells.findings.push_back(std::move(finding));
    }
  }
  if (any_cell && cells.judged == 0) {
    cells.findings.push_back(pairwise::LosslessNotJudged(
        first_reason.empty() ? "no bandwidth test completed" : first_reason));
  }
  return cells;
}

MatrixJudgement JudgeMatrix(const plan::Plan& plan, std::vector<v1::PairResult>& pairs,
                            const std::vector<v1::Finding>& inventory_checks, uint32_t format) {
  MatrixJudgement judgement;
  std::vector<pairwise::PairMeasurement> measurements;
  std::vector<v1::Finding> verdicts;
  for (v1::PairResult& pair : pairs) {
    *pair.mutable_verdict() = JudgeCell(plan, pair, format);
    if (pair.has_carried()) *pair.mutable_verdict()->mutable_carried() = pair.carried();
    measurements.push_back(MeasurementOf(pair, plan.pairwise.bidirectional));
    // Localisation looks for what breaks pairs: a warning-only cell passed.
    v1::Finding for_localisation = pair.verdict();
    if (for_localisation.status() == v1::Finding::fail && !CellFails(for_localisation)) {
      for_localisation.set_status(v1::Finding::pass);
    }
    verdicts.push_back(std::move(for_localisation));
    if (pair.retest_of().empty()) {
      judgement.checks.push_back(pair.verdict());
      if (CellFails(pair.verdict())) ++judgement.failing;
    }
  }

  // GPUDirect: cuda against host on the same pair, rail and test.
  for (size_t i = 0; i < pairs.size(); ++i) {
    const v1::PairResult& cuda = pairs[i];
    if (!cuda.retest_of().empty() || !absl::StartsWith(cuda.memory(), "cuda") ||
        !IsBandwidthTest(cuda.test())) {
      continue;
    }
    for (size_t j = 0; j < pairs.size(); ++j) {
      const v1::PairResult& host = pairs[j];
      if (host.retest_of().empty() && host.memory() == "host" && host.client() == cuda.client() &&
          host.server() == cuda.server() && host.rail() == cuda.rail() &&
          host.test() == cuda.test()) {
        v1::Finding finding = pairwise::JudgeGpuDirect(measurements[j], measurements[i]);
        finding.set_key(absl::StrCat(finding.id(), "@", cuda.client(),
                                     cuda.rail().empty() ? "" : "/" + cuda.rail(), "->",
                                     cuda.server(), " ", cuda.test(),
                                     // one finding per GPU since format 4 (cuda:N)
                                     cuda.memory() == "cuda" ? "" : " " + cuda.memory()));
        judgement.checks.push_back(std::move(finding));
      }
    }
  }

  if (format >= kLosslessRulesFormat) {
    for (auto& finding : JudgeLosslessCells(plan, pairs).findings) {
      judgement.checks.push_back(std::move(finding));
    }
  }

  for (const v1::PairResult& pair : pairs) {
    if (format < kPathMtuRulesFormat || !pair.retest_of().empty()) continue;
    v1::Finding finding = checks::JudgePathMtu(plan, pair, inventory_checks);
    finding.set_key(absl::StrCat(finding.id(), "@", LosslessLabel(pair)));
    if (pair.has_carried()) *finding.mutable_carried() = pair.carried();
    judgement.checks.push_back(std::move(finding));
  }

  for (const auto& suspect : pairwise::Localise(measurements, verdicts)) {
    v1::Suspect out;
    out.set_node(suspect.node);
    out.set_rail(suspect.rail);
    out.set_failing_pairs(suspect.failing_pairs);
    out.set_total_pairs(suspect.total_pairs);
    out.set_reason(suspect.reason);
    out.set_side(suspect.side);
    for (auto& finding : pairwise::TriageFindings(inventory_checks, suspect.node)) {
      *out.add_inventory_findings() = std::move(finding);
    }
    judgement.suspects.push_back(std::move(out));
  }
  return judgement;
}

}  // namespace clustercert::controller
