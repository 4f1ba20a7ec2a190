#include "controller/pairwise/pair_verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/counter_deltas.h"
#include "controller/checks/finding_builder.h"
#include "controller/pairwise/link_ber.h"

namespace clustercert::controller::pairwise {
namespace {

// A threshold compared at "exactly 80 %" must not flip on the last bit of a
// product like 0.8 x 200.
constexpr double kRelativeSlack = 1e-9;

constexpr char kTriageOrder[] =
    "check in this order MTU, PFC, the cable/transceiver, the NIC's PCIe gen/lanes, NUMA "
    "placement";

// 92.4, 159.98, 0.048726, 1011.3: five significant digits (so a pair just
// under a floor does not print as the floor), never an exponent.
std::string FormatValue(double value) {
  if (value == 0) return "0";
  if (std::fabs(value) >= 100000) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.5g", value);
}

// Fixed decimals without trailing zeros: 1.50 -> "1.5", 2.00 -> "2".
std::string FormatFixed(double value, int decimals) {
  std::string text = absl::StrFormat("%.*f", decimals, value);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

// Percentages are truncated to a tenth, so a pair just under the floor never
// reads as exactly at it (79.99 % shows as 79.9 %, not 80 %).
std::string FormatPercent(double fraction) {
  const double tenths = std::floor(fraction * 1000 + 1e-6);
  return FormatFixed(tenths / 10, 1);
}

std::string Endpoint(const std::string& node, const std::string& rail) {
  return rail.empty() ? node : absl::StrCat(node, " ", rail);
}

// "node1 mlx5_0 -> node3 mlx5_0 write_bw"
std::string PairSubject(const PairMeasurement& m) {
  return absl::StrCat(Endpoint(m.client, m.rail), " -> ", Endpoint(m.server, m.rail), " ", m.test);
}

// "node1 mlx5_0 -> node3 mlx5_0 write_bw host"
std::string Subject(const PairMeasurement& m) {
  std::string subject = PairSubject(m);
  if (!m.memory.empty()) absl::StrAppend(&subject, " ", m.memory);
  return subject;
}

v1::Finding Make(absl::string_view id, const PairMeasurement& m, v1::Finding::Status status,
                 checks::Severity severity) {
  v1::Finding finding;
  finding.set_id(std::string(id));
  finding.set_node(m.client);
  finding.set_device(m.rail);
  finding.set_status(status);
  finding.set_severity(severity);
  return finding;
}

void Fill(v1::Finding& finding, std::string observed, std::string expected, std::string message,
          std::string remedy = {}) {
  finding.set_observed(std::move(observed));
  finding.set_expected(std::move(expected));
  finding.set_message(std::move(message));
  finding.set_remedy(std::move(remedy));
}

std::string ErrorText(const PairMeasurement& m) {
  return m.error.empty() ? std::string("the test did not complete") : m.error;
}

constexpr char kBandwidthId[] = "pairwise.bandwidth";

// A test the control plane kept from running: unknown, never a fail, so
// the link is neither passed nor blamed and localisation leaves it out.
v1::Finding NotMeasured(absl::string_view id, const PairMeasurement& m, std::string expected) {
  v1::Finding finding = Make(id, m, checks::kUnknown, v1::Finding::error);
  Fill(finding, absl::StrCat("not measured: ", ErrorText(m)), std::move(expected),
       absl::StrCat(Subject(m), ": not measured, the control plane failed: ", ErrorText(m), "."),
       "This is the management side, not the fabric: check that the node-agent named is "
       "running and not overloaded (systemctl status clustercert-agent, its log), that the "
       "management network reaches it, and that the controller has file descriptors to spare "
       "(ulimit -n); a plan for a large cluster may need a longer agents.call_timeout_s. Then "
       "re-run the pairs that were not measured.");
  return finding;
}

// A measurement an end reported a NaN or an infinity in: unknown, never a
// pass (inf clears every floor) nor a fail (NaN is no figure to blame a link
// with); nullopt when every figure is finite.
std::optional<v1::Finding> InvalidMeasurement(absl::string_view id, const PairMeasurement& m,
                                              std::string expected) {
  if (m.invalid.empty()) return std::nullopt;
  v1::Finding finding = Make(id, m, checks::kUnknown, v1::Finding::error);
  Fill(finding, absl::StrCat("invalid: ", m.invalid), std::move(expected),
       absl::StrCat(Subject(m), ": ", m.invalid, "."),
       "No node-agent reports NaN or infinity for a test it measured: re-run the pair, and if "
       "it repeats, check the node-agent's version and log on the node named.");
  return finding;
}

// A failed test, no bandwidth figures or no line rate: nothing to hold
// against the floor. nullopt when the measurement can be judged.
std::optional<v1::Finding> CannotJudgeBandwidth(const plan::Pairwise& plan,
                                                const PairMeasurement& m) {
  const double fraction = plan.min_fraction_of_line_rate;
  const std::string subject = Subject(m);
  if (!m.ok && m.control_plane) {
    return NotMeasured(kBandwidthId, m,
                       absl::StrCat(">= ", FormatPercent(fraction), " % of line rate"));
  }
  if (!m.ok) {
    v1::Finding finding = Make(kBandwidthId, m, checks::kFail, v1::Finding::error);
    Fill(finding, absl::StrCat("error: ", ErrorText(m)),
         absl::StrCat(">= ", FormatPercent(fraction), " % of line rate"),
         absl::StrCat(subject, ": the bandwidth test failed: ", ErrorText(m), "."),
         absl::StrCat("A pair that cannot connect or stalls often has an MTU mismatch on the path "
                      "(hosts at 9000, a switch port or bridge at 1500); ",
                      kTriageOrder, "."));
    return finding;
  }
  if (std::optional<v1::Finding> invalid = InvalidMeasurement(
          kBandwidthId, m, absl::StrCat(">= ", FormatPercent(fraction), " % of line rate"))) {
    return invalid;
  }
  if (!m.result.has_bandwidth()) {
    v1::Finding finding = Make(kBandwidthId, m, checks::kUnknown, v1::Finding::error);
    Fill(finding, "unknown: the node-agent returned no bandwidth figures",
         absl::StrCat(">= ", FormatPercent(fraction), " % of line rate"),
         absl::StrCat(subject,
                      ": bandwidth is unknown (the node-agent returned no bandwidth "
                      "figures)."),
         "Re-run the pairwise phase with a node-agent that reports bandwidth; an unknown never "
         "counts as a pass.");
    return finding;
  }
  if (m.line_rate_gbps <= 0) {
    const std::string measured =
        absl::StrCat(FormatValue(m.result.bandwidth().avg_gbps()), " Gb/s");
    v1::Finding finding = Make(kBandwidthId, m, checks::kSkipped, v1::Finding::error);
    Fill(finding, measured, "",
         absl::StrCat(subject, ": ", measured, "; no line rate to compare with."),
         "Set fabric.link_rate_gbps in the plan, or let the inventory read the port rate, to "
         "judge pair bandwidth.");
    return finding;
  }
  return std::nullopt;
}

// The measured bandwidth against the plan's share of the line rate.
v1::Finding JudgeAgainstLineRate(const plan::Pairwise& plan, const PairMeasurement& m) {
  const double fraction = plan.min_fraction_of_line_rate;
  const double gbps = m.result.bandwidth().avg_gbps();
  const std::string measured = absl::StrCat(FormatValue(gbps), " Gb/s");
  const double line = m.line_rate_gbps;
  const double floor_gbps = fraction * line;
  const std::string line_text = absl::StrCat(FormatValue(line), " Gb/s");
  const std::string observed =
      absl::StrCat(measured, " (", FormatPercent(gbps / line), " % of ", line_text, ")");
  const std::string expected = absl::StrCat(">= ", FormatValue(floor_gbps), " Gb/s (",
                                            FormatPercent(fraction), " % of ", line_text, ")");
  const std::string message =
      absl::StrCat(Subject(m), ": ", measured, ", ", FormatPercent(gbps / line), " % of ",
                   line_text, " (plan floor ", FormatPercent(fraction), " %).");
  if (gbps >= floor_gbps * (1 - kRelativeSlack)) {
    v1::Finding finding = Make(kBandwidthId, m, checks::kPass, v1::Finding::error);
    Fill(finding, observed, expected, message);
    return finding;
  }
  v1::Finding finding = Make(kBandwidthId, m, checks::kFail, v1::Finding::error);
  const std::string fabric_fault =
      absl::StrCat("More than ", FormatPercent(1 - fraction),
                   " % under line rate is a fabric "
                   "fault: ",
                   kTriageOrder,
                   "; the node or rail the failing pairs share is named by the pairwise "
                   "localisation.");
  std::string remedy = fabric_fault;
  if (gbps <= 0) {
    remedy = absl::StrCat(
        "No data moved: a path MTU mismatch (hosts at 9000, a switch port or bridge at 1500) "
        "does exactly this. ",
        fabric_fault);
  }
  Fill(finding, observed, expected, message, remedy);
  return finding;
}

v1::Finding JudgeBandwidth(const plan::Pairwise& plan, const PairMeasurement& m) {
  if (std::optional<v1::Finding> unjudged = CannotJudgeBandwidth(plan, m)) {
    return *std::move(unjudged);
  }
  return JudgeAgainstLineRate(plan, m);
}

v1::Finding JudgeLatency(const plan::Pairwise& plan, const PairMeasurement& m) {
  constexpr char kId[] = "pairwise.latency";
  const std::string subject = Subject(m);
  const std::string bound = absl::StrCat(FormatValue(plan.max_latency_us), " us");
  const std::string expected = absl::StrCat("typical <= ", bound);
  if (!m.ok && m.control_plane) return NotMeasured(kId, m, expected);
  if (!m.ok) {
    v1::Finding finding = Make(kId, m, checks::kFail, v1::Finding::error);
    Fill(finding, absl::StrCat("error: ", ErrorText(m)), expected,
         absl::StrCat(subject, ": the latency test failed: ", ErrorText(m), "."),
         absl::StrCat("A pair that cannot connect or stalls often has an MTU mismatch on the path "
                      "(hosts at 9000, a switch port or bridge at 1500); ",
                      kTriageOrder, "."));
    return finding;
  }
  if (std::optional<v1::Finding> invalid = InvalidMeasurement(kId, m, expected)) {
    return *std::move(invalid);
  }
  if (plan.max_latency_us <= 0) {
    v1::Finding finding = Make(kId, m, checks::kSkipped, v1::Finding::error);
    finding.set_message(absl::StrCat(subject, ": the plan sets no latency bound."));
    return finding;
  }
  if (!m.result.has_latency()) {
    v1::Finding finding = Make(kId, m, checks::kUnknown, v1::Finding::error);
    Fill(finding, "unknown: the node-agent returned no latency figures", expected,
         absl::StrCat(subject,
                      ": latency is unknown (the node-agent returned no latency "
                      "figures)."),
         "Re-run the pairwise phase with a node-agent that reports latency; an unknown never "
         "counts as a pass.");
    return finding;
  }
  const v1::LatencyStats& latency = m.result.latency();
  const std::string observed = absl::StrCat("typical ", FormatValue(latency.typical_us()),
                                            " us, p99 ", FormatValue(latency.p99_us()), " us");
  const std::string message =
      absl::StrCat(subject, ": typical ", FormatValue(latency.typical_us()), " us (p99 ",
                   FormatValue(latency.p99_us()), " us), plan max ", bound, ".");
  if (latency.typical_us() <= plan.max_latency_us * (1 + kRelativeSlack)) {
    v1::Finding finding = Make(kId, m, checks::kPass, v1::Finding::error);
    Fill(finding, observed, expected, message);
    return finding;
  }
  v1::Finding finding = Make(kId, m, checks::kFail, v1::Finding::error);
  Fill(finding, observed, expected, message,
       absl::StrCat("Latency over the bound is a broken path (RoCE through one switch above 5 us "
                    "is broken; NDR in one rack is under 1 us): ",
                    kTriageOrder, "; pause storms from PFC show as latency first."));
  return finding;
}

// What one cell's counters say, gathered over both ends.
struct CounterTrouble {
  std::vector<std::string> link_errors;  // "node3 mlx5_0 symbol_error +3"
  std::vector<std::string> link_ends;    // "node3 mlx5_0", each once
  std::vector<std::string> retries;      // "node1 mlx5_0 out_of_sequence +500 (5 per GB)"
  std::vector<std::string> retry_ends;
  std::vector<std::string> unjudged;  // "node3 mlx5_0 symbol_error: went backwards ..."
  // Receiving ports over pairwise.max_raw_ber: the sentence and the remedy.
  std::vector<std::string> raw_ber;
  std::vector<std::string> raw_ber_remedies;
};

// The cell's LinkBer entries (format 8) over plan.max_raw_ber. Any post-FEC
// error is a link error counter already (CollectEnd).
void CollectRawBer(const plan::Pairwise& plan, const v1::PairResult& pair,
                   CounterTrouble& trouble) {
  for (const v1::LinkBer& ber : pair.ber()) {
    if (!RawBerTooHigh(ber, plan.max_raw_ber)) continue;
    trouble.raw_ber.push_back(RawBerSentence(ber, plan.max_raw_ber));
    trouble.raw_ber_remedies.push_back(RawBerRemedy(ber));
  }
}

void AddOnce(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Bytes a BandwidthStats says moved; double, so garbage cannot overflow.
double BytesMoved(const v1::BandwidthStats& bandwidth) {
  return static_cast<double>(bandwidth.message_bytes()) *
         static_cast<double>(bandwidth.iterations());
}

// GB (10^9 bytes, as Gb/s is decimal) the cell's test moved: each side
// reports the direction it measured, so a bidirectional test moved both and
// a one-way test moved the larger of the two reports (the same flow).
double GigabytesMoved(const plan::Pairwise& plan, const v1::PairResult& pair) {
  const double client = BytesMoved(pair.client_result().bandwidth());
  const double server = BytesMoved(pair.server_result().bandwidth());
  const bool both_ways = plan.bidirectional && absl::EndsWith(pair.test(), "_bw");
  return (both_ways ? client + server : std::max(client, server)) / 1e9;
}

void CollectEnd(const plan::Pairwise& plan, const std::string& end,
                const google::protobuf::RepeatedPtrField<v1::CounterDelta>& deltas,
                double judged_gb, CounterTrouble& trouble) {
  // "not read after the test" on every counter of a failed read is one
  // sentence per note, not one per counter.
  std::map<std::string, std::vector<std::string>> names_by_note;
  std::vector<std::string> note_order;
  for (const v1::CounterDelta& delta : deltas) {
    const counters::CounterRole role = counters::RoleOf(delta.source(), delta.name());
    if (role == counters::CounterRole::kInformational) continue;
    if (delta.delta() == 0) {
      if (delta.note().empty()) continue;
      if (names_by_note.count(delta.note()) == 0) note_order.push_back(delta.note());
      names_by_note[delta.note()].push_back(delta.name());
      continue;
    }
    std::string change = absl::StrCat(end, " ", delta.name(), " +", delta.delta());
    if (role == counters::CounterRole::kLinkError) {
      if (!delta.note().empty()) absl::StrAppend(&change, " (", delta.note(), ")");
      trouble.link_errors.push_back(std::move(change));
      AddOnce(trouble.link_ends, end);
      continue;
    }
    const double per_gb = static_cast<double>(delta.delta()) / judged_gb;
    if (per_gb <= plan.max_retries_per_gb * (1 + kRelativeSlack)) continue;
    absl::StrAppend(&change, " (", FormatValue(per_gb), " per GB)");
    trouble.retries.push_back(std::move(change));
    AddOnce(trouble.retry_ends, end);
  }
  for (const std::string& note : note_order) {
    trouble.unjudged.push_back(
        absl::StrCat(end, " ", absl::StrJoin(names_by_note[note], ", "), ": ", note));
  }
}

std::string AndList(const std::vector<std::string>& items) {
  if (items.size() <= 1) return absl::StrJoin(items, "");
  return absl::StrCat(absl::StrJoin(std::vector<std::string>(items.begin(), items.end() - 1), ", "),
                      " and ", items.back());
}

void AppendPart(std::string& text, const std::string& part, absl::string_view separator) {
  if (part.empty()) return;
  if (text.empty()) {
    text = part;
  } else {
    absl::StrAppend(&text, separator, part);
  }
}

// Appends each trouble to the verdict's observed, expected, message and
// remedy (the counter remedies first: they name the end to fix).
void AppendCounterText(const plan::Pairwise& plan, double moved_gb, const CounterTrouble& trouble,
                       v1::Finding& verdict) {
  std::string observed = verdict.observed();
  std::string expected = verdict.expected();
  std::string message = verdict.message();
  std::string remedy;
  if (!trouble.link_errors.empty()) {
    AppendPart(observed, absl::StrJoin(trouble.link_errors, ", "), "; ");
    AppendPart(expected, "no link error counter rises", "; ");
    AppendPart(message,
               absl::StrCat("Link error counters rose during the test: ",
                            absl::StrJoin(trouble.link_errors, ", "),
                            "; a link-level error fails the cell even at line rate."),
               " ");
    remedy = absl::StrCat("Reseat or replace the cable/transceiver on ", AndList(trouble.link_ends),
                          " (check `ethtool -m` / mlxlink), then re-run.");
  }
  if (!trouble.raw_ber.empty()) {
    AppendPart(observed, absl::StrJoin(trouble.raw_ber, "; "), "; ");
    AppendPart(expected, absl::StrCat("raw BER <= ", FormatRate(plan.max_raw_ber)), "; ");
    AppendPart(message, absl::StrCat(absl::StrJoin(trouble.raw_ber, "; "), "."), " ");
    AppendPart(remedy, absl::StrJoin(trouble.raw_ber_remedies, " "), " ");
  }
  if (!trouble.retries.empty()) {
    const std::string limit = absl::StrCat(FormatValue(plan.max_retries_per_gb), " per GB");
    const std::string basis =
        moved_gb >= kMinJudgedGigabytes
            ? absl::StrCat(FormatValue(moved_gb), " GB moved")
            : absl::StrCat("under ", FormatValue(kMinJudgedGigabytes), " GB moved, judged per ",
                           FormatValue(kMinJudgedGigabytes), " GB");
    AppendPart(observed, absl::StrJoin(trouble.retries, ", "), "; ");
    AppendPart(expected, absl::StrCat("retries <= ", limit, " moved"), "; ");
    AppendPart(message,
               absl::StrCat("Retransmissions over the plan's ", limit, " (", basis,
                            "): ", absl::StrJoin(trouble.retries, ", "), "."),
               " ");
    AppendPart(remedy,
               absl::StrCat("Check PFC on the RDMA priority for ", AndList(trouble.retry_ends),
                            trouble.retry_ends.size() > 1 ? " and their switch ports"
                                                          : " and its switch port",
                            " (drops force go-back-N retransmits), then the cable, then re-run."),
               " ");
  }
  if (!trouble.unjudged.empty()) {
    AppendPart(message,
               absl::StrCat("Counters not judged: ", absl::StrJoin(trouble.unjudged, "; "), "."),
               " ");
  }
  if (!remedy.empty()) {
    AppendPart(remedy, verdict.remedy(), " ");
    verdict.set_remedy(std::move(remedy));
  }
  verdict.set_observed(std::move(observed));
  verdict.set_expected(std::move(expected));
  verdict.set_message(std::move(message));
}

}  // namespace

v1::Finding WithCounterVerdict(const plan::Pairwise& plan, const v1::PairResult& pair,
                               v1::Finding verdict) {
  const double moved_gb = GigabytesMoved(plan, pair);
  const double judged_gb = std::max(moved_gb, kMinJudgedGigabytes);
  CounterTrouble trouble;
  CollectEnd(plan, Endpoint(pair.client(), pair.rail()), pair.client_counters(), judged_gb,
             trouble);
  CollectEnd(plan, Endpoint(pair.server(), pair.rail()), pair.server_counters(), judged_gb,
             trouble);
  CollectRawBer(plan, pair, trouble);
  if (trouble.link_errors.empty() && trouble.retries.empty() && trouble.unjudged.empty() &&
      trouble.raw_ber.empty()) {
    return verdict;
  }
  AppendCounterText(plan, moved_gb, trouble, verdict);
  if (!trouble.link_errors.empty() || !trouble.raw_ber.empty()) {
    verdict.set_status(checks::kFail);
    verdict.set_severity(v1::Finding::error);
  } else if (!trouble.retries.empty() && verdict.status() == checks::kPass) {
    verdict.set_status(checks::kFail);
    verdict.set_severity(v1::Finding::warning);
  }
  return verdict;
}

v1::Finding JudgePair(const plan::Pairwise& plan, const PairMeasurement& measurement) {
  if (absl::EndsWith(measurement.test, "_bw")) return JudgeBandwidth(plan, measurement);
  if (absl::EndsWith(measurement.test, "_lat")) return JudgeLatency(plan, measurement);
  v1::Finding finding = Make("pairwise.test", measurement, checks::kSkipped, v1::Finding::error);
  finding.set_observed(measurement.test);
  finding.set_message(absl::StrCat(Subject(measurement),
                                   ": not a bandwidth (*_bw) or latency "
                                   "(*_lat) test, so there is no threshold to judge it by."));
  return finding;
}

namespace {

constexpr char kGpuDirectId[] = "pairwise.gpudirect";
constexpr char kGpuDirectNotInPath[] =
    "GPUDirect not in the path: check nvidia_peermem (lsmod | grep nvidia_peermem, "
    "/sys/module/nvidia_peermem/version) or DMA-BUF support, and GPU/NIC NUMA placement "
    "(nvidia-smi topo -m: the GPU should sit under the NIC's PCIe switch, not across the CPU "
    "interconnect).";

// Unknown when `host` is not `cuda`'s pair or gives no bandwidth to judge it
// against; nullopt when the two can be compared.
std::optional<v1::Finding> CannotCompare(const PairMeasurement& host, const PairMeasurement& cuda,
                                         const std::string& subject, const std::string& expected) {
  if (host.client != cuda.client || host.server != cuda.server || host.rail != cuda.rail ||
      host.test != cuda.test) {
    v1::Finding finding = Make(kGpuDirectId, cuda, checks::kUnknown, v1::Finding::error);
    Fill(finding, "unknown: host and cuda measurements of different pairs", expected,
         absl::StrCat(subject, ": cannot compare cuda memory with ", PairSubject(host),
                      " host memory: not the same pair and test."),
         "Compare cuda and host memory on the same client, server, rail and test.");
    return finding;
  }
  // A failed test's figures are not judged (its failure is).
  const bool host_invalid = host.ok && !host.invalid.empty();
  if (host_invalid || (cuda.ok && !cuda.invalid.empty())) {
    const std::string& why = host_invalid ? host.invalid : cuda.invalid;
    v1::Finding finding = Make(kGpuDirectId, cuda, checks::kUnknown, v1::Finding::error);
    Fill(finding, absl::StrCat("invalid: ", why), expected,
         absl::StrCat(subject, ": GPUDirect cannot be judged: ", why, "."),
         "Re-run the pair: no node-agent reports NaN or infinity for a test it measured.");
    return finding;
  }
  std::string no_baseline;
  if (!host.ok) {
    no_baseline = absl::StrCat("the host-memory test failed: ", ErrorText(host));
  } else if (!host.result.has_bandwidth() || host.result.bandwidth().avg_gbps() <= 0) {
    no_baseline = "the host-memory test moved no data";
  }
  if (no_baseline.empty()) return std::nullopt;
  v1::Finding finding = Make(kGpuDirectId, cuda, checks::kUnknown, v1::Finding::error);
  Fill(finding, absl::StrCat("unknown: ", no_baseline), expected,
       absl::StrCat(subject, ": GPUDirect cannot be judged: ", no_baseline, "."),
       "Fix the pair's host-memory bandwidth first (see pairwise.bandwidth); GPUDirect is "
       "judged against it.");
  return finding;
}

// A cuda run that moved data, against host memory's `host_gbps`: a pass, data
// through host memory (not GPUDirect), or GPUDirect slower than host memory.
v1::Finding JudgeCudaBandwidth(const PairMeasurement& cuda, double host_gbps,
                               const std::string& host_text, const std::string& subject,
                               const std::string& expected) {
  std::string cuda_label = "cuda";
  if (!cuda.result.memory_path().empty()) {
    cuda_label = absl::StrCat("cuda (", cuda.result.memory_path(), ")");
  }
  const double cuda_gbps = cuda.result.has_bandwidth() ? cuda.result.bandwidth().avg_gbps() : 0;
  const double slowdown =
      cuda_gbps > 0 ? host_gbps / cuda_gbps : std::numeric_limits<double>::infinity();
  const std::string slowdown_text = std::isinf(slowdown)
                                        ? std::string("no cuda data moved")
                                        : absl::StrCat(FormatFixed(slowdown, 2), "x slower");
  const std::string observed =
      absl::StrCat("cuda ", FormatValue(cuda_gbps), " Gb/s, ", host_text, " (",
                   cuda_gbps >= host_gbps ? std::string("not slower") : slowdown_text, ")");
  const std::string ratio_text = absl::StrCat(
      cuda_label, " ", FormatValue(cuda_gbps), " Gb/s is ", FormatPercent(cuda_gbps / host_gbps),
      " % of host memory's ", FormatValue(host_gbps), " Gb/s");

  if (cuda_gbps >= kGpuDirectPassFraction * host_gbps * (1 - kRelativeSlack)) {
    v1::Finding finding = Make(kGpuDirectId, cuda, checks::kPass, v1::Finding::error);
    Fill(finding, observed, expected, absl::StrCat(subject, ": ", ratio_text, "."));
    return finding;
  }
  if (slowdown >= kGpuDirectViaHostSlowdown * (1 - kRelativeSlack)) {
    v1::Finding finding = Make(kGpuDirectId, cuda, checks::kFail, v1::Finding::error);
    Fill(finding, observed, expected,
         absl::StrCat(subject, ": ", ratio_text, " (", slowdown_text,
                      "): the data goes through host memory, not GPUDirect."),
         kGpuDirectNotInPath);
    return finding;
  }
  v1::Finding finding = Make(kGpuDirectId, cuda, checks::kFail, v1::Finding::warning);
  Fill(finding, observed, expected,
       absl::StrCat(subject, ": ", ratio_text, " (", slowdown_text,
                    "): GPUDirect is slower than host memory by more than a few %."),
       "Check the GPU/NIC placement (nvidia-smi topo -m: PIX or PXB is best, PHB acceptable, "
       "NODE/SYS cross the host bridge or the CPU interconnect), both devices' PCIe gen/lanes, "
       "and that the test used the GPU nearest the NIC.");
  return finding;
}

}  // namespace

v1::Finding JudgeGpuDirect(const PairMeasurement& host, const PairMeasurement& cuda) {
  const std::string subject = PairSubject(cuda);
  const std::string expected =
      absl::StrCat("cuda >= ", FormatPercent(kGpuDirectPassFraction), " % of host bandwidth");
  if (std::optional<v1::Finding> unjudged = CannotCompare(host, cuda, subject, expected)) {
    return *std::move(unjudged);
  }

  const double host_gbps = host.result.bandwidth().avg_gbps();
  const std::string host_text = absl::StrCat("host ", FormatValue(host_gbps), " Gb/s");
  if (!cuda.ok) {
    v1::Finding finding = Make(kGpuDirectId, cuda, checks::kFail, v1::Finding::error);
    Fill(finding, absl::StrCat("error: ", ErrorText(cuda), "; ", host_text), expected,
         absl::StrCat(subject, ": the cuda-memory test failed (", ErrorText(cuda),
                      ") while host memory ran at ", FormatValue(host_gbps), " Gb/s."),
         kGpuDirectNotInPath);
    return finding;
  }
  return JudgeCudaBandwidth(cuda, host_gbps, host_text, subject, expected);
}

}  // namespace clustercert::controller::pairwise
