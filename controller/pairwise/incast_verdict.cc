#include "controller/pairwise/incast_verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/non_finite.h"
#include "controller/pairwise/dcqcn_verdict.h"
#include "controller/pairwise/lossless_verdict.h"

namespace clustercert::controller::pairwise {
namespace {

constexpr char kBandwidthId[] = "incast.bandwidth";
constexpr char kFairnessId[] = "incast.fairness";

// A floor compared at exactly 90 % must not flip on the last bit of 0.9 x 100.
constexpr double kRelativeSlack = 1e-9;

// 91.2, 30.4, 0.0487: three significant digits, no exponent below 1000.
std::string FormatGbps(double value) {
  if (value == 0) return "0";
  if (std::fabs(value) >= 1000) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.3g", value);
}

// Truncated to a tenth so a figure just under a floor never reads as it.
std::string FormatPercent(double fraction) {
  const double tenths = std::floor(fraction * 1000 + 1e-6);
  std::string text = absl::StrFormat("%.1f", tenths / 10);
  if (text.size() > 2 && text.substr(text.size() - 2) == ".0") text.resize(text.size() - 2);
  return text;
}

std::string FormatFairness(double fairness) {
  return absl::StrFormat("%.2f", std::floor(fairness * 100 + 1e-6) / 100);
}

std::string Endpoint(const std::string& node, const std::string& rail) {
  return rail.empty() ? node : absl::StrCat(node, " ", rail);
}

// "incast into node2 mlx5_0 from node1, node3, node4"
std::string Subject(const v1::IncastResult& round) {
  std::vector<std::string> senders;
  senders.reserve(static_cast<size_t>(round.senders_size()));
  for (const auto& sender : round.senders()) senders.push_back(sender.node());
  std::string subject = absl::StrCat("incast into ", Endpoint(round.receiver(), round.rail()));
  if (!senders.empty()) absl::StrAppend(&subject, " from ", absl::StrJoin(senders, ", "));
  return subject;
}

v1::Finding Make(const char* id, const v1::IncastResult& round, v1::Finding::Status status) {
  v1::Finding finding;
  finding.set_id(id);
  finding.set_node(round.receiver());
  finding.set_device(round.rail());
  finding.set_status(status);
  finding.set_severity(v1::Finding::error);
  finding.set_key(absl::StrCat(id, "@", IncastLabel(round)));
  return finding;
}

// "node3 failed (the QP timed out)" for each sender that did not finish.
std::vector<std::string> FailedSenders(const v1::IncastResult& round, bool* all_control_plane) {
  std::vector<std::string> failed;
  *all_control_plane = true;
  for (const auto& sender : round.senders()) {
    if (sender.ok()) continue;
    if (!sender.control_plane()) *all_control_plane = false;
    failed.push_back(absl::StrCat(sender.node(), " failed (",
                                  sender.error().empty() ? "no error recorded" : sender.error(),
                                  ")"));
  }
  return failed;
}

// Unknown when a sender that finished reported a NaN or infinite figure:
// the sums and the fairness made of it are no measurement. nullopt when all
// are finite.
std::optional<v1::Finding> InvalidRound(const char* id, const v1::IncastResult& round,
                                        const std::string& expected) {
  for (const auto& sender : round.senders()) {
    if (!sender.ok()) continue;
    std::optional<NonFiniteField> bad = FindNonFinite(sender);
    if (!bad) continue;
    const std::string why = NonFiniteSentence(sender.node(), bad->field, bad->value);
    v1::Finding finding = Make(id, round, v1::Finding::unknown);
    finding.set_observed(absl::StrCat("invalid: ", why));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(Subject(round), ": ", why, "."));
    finding.set_remedy(
        "Re-run the pairwise phase: no node-agent reports NaN or infinity for a test it "
        "measured.");
    return finding;
  }
  return std::nullopt;
}

// "3 x ~30.4 Gb/s = 91.2 Gb/s"
std::string AggregateText(const v1::IncastResult& round) {
  int ok = 0;
  for (const auto& sender : round.senders()) ok += sender.ok() ? 1 : 0;
  const double mean = ok == 0 ? 0 : round.aggregate_gbps() / ok;
  return absl::StrCat(ok, " x ~", FormatGbps(mean), " Gb/s = ", FormatGbps(round.aggregate_gbps()),
                      " Gb/s");
}

v1::Finding JudgeBandwidth(const plan::Plan& plan, const v1::IncastResult& round) {
  const double fraction = plan.pairwise.incast.min_fraction_of_line_rate;
  const double line = round.line_rate_gbps();
  const std::string subject = Subject(round);
  const std::string expected =
      line > 0 ? absl::StrCat(">= ", FormatGbps(fraction * line), " Gb/s (",
                              FormatPercent(fraction), " % of ", FormatGbps(line), " Gb/s)")
               : absl::StrCat(">= ", FormatPercent(fraction), " % of line rate");
  const std::string congestion_fix = absl::StrCat(
      "A receiver that cannot take k senders at line rate is a congestion fault: check, in the "
      "seed's order, PFC on priority ",
      plan.fabric.roce.pfc_priority,
      " end to end, the NIC's trust and DSCP map, ECN thresholds and DCQCN (the lossless.* "
      "findings of this round say which), then the receiver's port rate and PCIe link.");
  if (!round.error().empty()) {
    v1::Finding finding = Make(kBandwidthId, round, v1::Finding::fail);
    finding.set_observed(absl::StrCat("error: ", round.error()));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": the round could not run: ", round.error(), "."));
    finding.set_remedy(
        "Make every end of the round reachable (agent running, management network up) and "
        "re-run the pairwise phase.");
    return finding;
  }
  if (round.senders_size() == 0) {
    v1::Finding finding = Make(kBandwidthId, round, v1::Finding::fail);
    finding.set_observed("no sender");
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": the round had no sender."));
    finding.set_remedy(
        "An incast round needs at least one other node on the receiver's rail: check the plan's "
        "nodes and rails.");
    return finding;
  }
  bool all_control_plane = true;
  const std::vector<std::string> failed = FailedSenders(round, &all_control_plane);
  if (!failed.empty()) {
    const v1::Finding::Status status = all_control_plane ? v1::Finding::unknown : v1::Finding::fail;
    v1::Finding finding = Make(kBandwidthId, round, status);
    finding.set_observed(absl::StrCat(AggregateText(round), "; ", absl::StrJoin(failed, ", ")));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": ", absl::StrJoin(failed, ", "), "; the others ",
                                     AggregateText(round), "."));
    finding.set_remedy(
        all_control_plane
            ? "The control plane failed, not the fabric (an agent unanswered or busy): re-run "
              "the pairwise phase; an unknown never counts as a pass."
            : absl::StrCat("A sender that fails under incast while its pair cells pass points "
                           "at loss under congestion (retries exhausted). ",
                           congestion_fix));
    return finding;
  }
  if (std::optional<v1::Finding> invalid = InvalidRound(kBandwidthId, round, expected)) {
    return *std::move(invalid);
  }
  if (line <= 0) {
    v1::Finding finding = Make(kBandwidthId, round, v1::Finding::skipped);
    finding.set_observed(AggregateText(round));
    finding.set_expected(expected);
    finding.set_message(
        absl::StrCat(subject, ": ", AggregateText(round), "; no line rate to compare with."));
    finding.set_remedy(
        "Set fabric.link_rate_gbps in the plan, or let the inventory read the receiver's port "
        "rate, to judge incast bandwidth.");
    return finding;
  }
  const double floor_gbps = fraction * line;
  const bool pass = round.aggregate_gbps() >= floor_gbps * (1 - kRelativeSlack);
  v1::Finding finding = Make(kBandwidthId, round, pass ? v1::Finding::pass : v1::Finding::fail);
  const double share = round.aggregate_gbps() / line;
  finding.set_observed(absl::StrCat(FormatGbps(round.aggregate_gbps()), " Gb/s (",
                                    FormatPercent(share), " % of ", FormatGbps(line), " Gb/s)"));
  finding.set_expected(expected);
  finding.set_message(absl::StrCat(subject, ": ", AggregateText(round), " of ", FormatGbps(line),
                                   " Gb/s (", FormatPercent(share), " %, plan floor ",
                                   FormatPercent(fraction), " %)."));
  finding.set_has_value(true);
  finding.set_value(round.aggregate_gbps());
  finding.set_unit("Gb/s");
  finding.set_threshold(floor_gbps);
  if (!pass) finding.set_remedy(congestion_fix);
  return finding;
}

v1::Finding JudgeFairness(const plan::Plan& plan, const v1::IncastResult& round) {
  const double floor = plan.pairwise.incast.min_fairness;
  const std::string subject = Subject(round);
  const std::string expected = absl::StrCat(">= ", FormatFairness(floor), " (slowest / fastest)");
  bool ran = false;
  for (const auto& sender : round.senders()) ran = ran || sender.ok();
  if (!round.error().empty() || !ran) {
    v1::Finding finding = Make(kFairnessId, round, v1::Finding::unknown);
    finding.set_observed(round.error().empty() ? "unknown: no sender ran"
                                               : absl::StrCat("unknown: ", round.error()));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(subject, ": fairness is unknown (",
                                     round.error().empty() ? "no sender ran" : round.error(),
                                     ")."));
    finding.set_remedy(
        "Re-run the pairwise phase once the round's senders run (see incast.bandwidth for why "
        "they did not); an unknown never counts as a pass.");
    return finding;
  }
  if (std::optional<v1::Finding> invalid = InvalidRound(kFairnessId, round, expected)) {
    return *std::move(invalid);
  }
  const v1::IncastSender* slowest = nullptr;
  const v1::IncastSender* fastest = nullptr;
  auto gbps = [](const v1::IncastSender& s) { return s.ok() ? s.gbps() : 0.0; };
  for (const auto& sender : round.senders()) {
    if (slowest == nullptr || gbps(sender) < gbps(*slowest)) slowest = &sender;
    if (fastest == nullptr || gbps(sender) > gbps(*fastest)) fastest = &sender;
  }
  const bool pass = round.fairness() >= floor * (1 - kRelativeSlack);
  v1::Finding finding = Make(kFairnessId, round, pass ? v1::Finding::pass : v1::Finding::fail);
  finding.set_observed(absl::StrCat(FormatFairness(round.fairness()), " (", slowest->node(), " ",
                                    FormatGbps(gbps(*slowest)), " Gb/s, ", fastest->node(), " ",
                                    FormatGbps(gbps(*fastest)), " Gb/s)"));
  finding.set_expected(expected);
  finding.set_message(absl::StrCat(
      subject, ": slowest ", slowest->node(), " at ", FormatGbps(gbps(*slowest)), " Gb/s, fastest ",
      fastest->node(), " at ", FormatGbps(gbps(*fastest)), " Gb/s: fairness ",
      FormatFairness(round.fairness()), " (plan floor ", FormatFairness(floor), ")."));
  finding.set_has_value(true);
  finding.set_value(round.fairness());
  finding.set_threshold(floor);
  if (!pass) {
    finding.set_remedy(absl::StrCat(
        "The receiver's port is not shared fairly: check ECN marking and DCQCN on every NIC "
        "(fabric.roce.ecn) and PFC on priority ",
        plan.fabric.roce.pfc_priority, " end to end, then ", slowest->node(),
        "'s own path (its pair cells on this rail)."));
  }
  return finding;
}

}  // namespace

void SummarizeIncast(v1::IncastResult& round) {
  double aggregate = 0;
  double slowest = std::numeric_limits<double>::infinity();
  double fastest = 0;
  for (const auto& sender : round.senders()) {
    const double gbps = sender.ok() ? sender.gbps() : 0.0;
    aggregate += gbps;
    slowest = std::min(slowest, gbps);
    fastest = std::max(fastest, gbps);
  }
  round.set_aggregate_gbps(aggregate);
  round.set_fairness(fastest > 0 ? slowest / fastest : 0.0);
}

std::string IncastLabel(const v1::IncastResult& round) {
  return absl::StrCat("incast->", round.receiver(), round.rail().empty() ? "" : "/", round.rail(),
                      " ", round.test());
}

std::vector<v1::Finding> JudgeIncast(const plan::Plan& plan, const v1::IncastResult& round) {
  std::vector<v1::Finding> findings;
  findings.push_back(JudgeBandwidth(plan, round));
  findings.push_back(JudgeFairness(plan, round));
  if (round.engine() != "tcp") {
    // Incast's data flows into the receiver, whatever the test.
    std::vector<LosslessEnd> ends;
    ends.push_back({round.receiver(), round.rail(), &round.receiver_counters(), false, true});
    for (const auto& sender : round.senders()) {
      ends.push_back({sender.node(), sender.rail(), &sender.counters(), true, false});
    }
    for (auto& finding : JudgeLossless(plan, IncastLabel(round), ends).findings) {
      findings.push_back(std::move(finding));
    }
  }
  for (auto& finding : JudgeDcqcn(plan, round)) findings.push_back(std::move(finding));
  if (round.has_carried()) {
    for (auto& finding : findings) *finding.mutable_carried() = round.carried();
  }
  return findings;
}

}  // namespace clustercert::controller::pairwise
