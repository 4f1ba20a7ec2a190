#include "controller/pairwise/lossless_verdict.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/counter_deltas.h"

namespace clustercert::controller::pairwise {
namespace {

constexpr char kPriorityId[] = "lossless.priority";
constexpr char kPauseId[] = "lossless.pause";
constexpr char kDropsId[] = "lossless.drops";
constexpr int kPriorities = 8;  // 802.1p

// Truncated to a tenth, so a share just under the floor never reads as the
// floor itself (94.99 % shows as 94.9 %).
std::string FormatPercent(double fraction) {
  const double tenths = std::floor(fraction * 1000 + 1e-6);
  std::string text = absl::StrFormat("%.1f", tenths / 10);
  if (text.size() > 2 && text.substr(text.size() - 2) == ".0") text.resize(text.size() - 2);
  return text;
}

// Decimal units, as perftest and the Gb/s figures: 11.6 GB, 850 MB.
std::string FormatBytes(uint64_t bytes) {
  const auto value = static_cast<double>(bytes);
  if (value >= 1e9) return absl::StrFormat("%.3g GB", value / 1e9);
  if (value >= 1e6) return absl::StrFormat("%.3g MB", value / 1e6);
  if (value >= 1e3) return absl::StrFormat("%.3g kB", value / 1e3);
  return absl::StrCat(bytes, " B");
}

std::string EndName(const LosslessEnd& end) {
  return end.device.empty() ? end.node : absl::StrCat(end.node, " ", end.device);
}

// A counter that rose, for the messages: "tx_prio0_pause +1520".
struct Rise {
  std::string name;
  uint64_t delta = 0;
  int priority = -1;  // pause: the priority, -1 link-level
};

// What one end's deltas say about the lossless chain.
struct EndCounters {
  std::array<uint64_t, kPriorities> tx_bytes{};
  std::array<uint64_t, kPriorities> rx_bytes{};
  bool has_tx_bytes = false;
  bool has_rx_bytes = false;
  std::vector<Rise> wrong_pauses;  // pause frames not on the planned priority
  uint64_t planned_pauses = 0;     // pause frames on it (PFC doing its work)
  std::vector<Rise> drops;
};

EndCounters Summarise(const LosslessEnd& end, int planned) {
  EndCounters counters;
  if (end.deltas == nullptr) return counters;
  for (const v1::CounterDelta& delta : *end.deltas) {
    if (counters::IsDropCounter(delta.source(), delta.name())) {
      if (delta.delta() > 0) counters.drops.push_back({delta.name(), delta.delta()});
      continue;
    }
    if (delta.name() == "rx_pause_ctrl_phy" || delta.name() == "tx_pause_ctrl_phy") {
      if (delta.delta() > 0) counters.wrong_pauses.push_back({delta.name(), delta.delta(), -1});
      continue;
    }
    auto parsed = counters::ParsePriorityCounter(delta.name());
    if (!parsed.has_value()) continue;
    if (parsed->suffix == "bytes") {
      const bool tx = parsed->direction == "tx";
      (tx ? counters.has_tx_bytes : counters.has_rx_bytes) = true;
      (tx ? counters.tx_bytes : counters.rx_bytes)[static_cast<size_t>(parsed->priority)] +=
          delta.delta();
    } else if (parsed->suffix == "pause" && delta.delta() > 0) {
      if (parsed->priority == planned) {
        counters.planned_pauses += delta.delta();
      } else {
        counters.wrong_pauses.push_back({delta.name(), delta.delta(), parsed->priority});
      }
    }
  }
  return counters;
}

// One direction of one end the priority check looks at: what an end sent,
// or what it received.
struct PriorityView {
  const LosslessEnd* end = nullptr;
  bool sent = false;
  std::array<uint64_t, kPriorities> bytes{};
  uint64_t total = 0;
  double share = 0;  // of total, on the planned priority
};

// "97.8 % of the 11.6 GB sent left on priority 0, 2.2 % on priority 3 (the
// plan's fabric.roce.pfc_priority)": the priorities that carried bytes, most
// first, with the planned one always named.
std::string Breakdown(const PriorityView& view, int planned) {
  std::vector<int> order;
  for (int p = 0; p < kPriorities; ++p) {
    if (view.bytes[static_cast<size_t>(p)] > 0 || p == planned) order.push_back(p);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return view.bytes[static_cast<size_t>(a)] > view.bytes[static_cast<size_t>(b)];
  });
  std::string text = absl::StrCat(EndName(*view.end), ": ");
  for (size_t i = 0; i < order.size(); ++i) {
    const int p = order[i];
    const double share =
        static_cast<double>(view.bytes[static_cast<size_t>(p)]) / static_cast<double>(view.total);
    const std::string where =
        absl::StrCat("priority ", p, p == planned ? " (the plan's fabric.roce.pfc_priority)" : "");
    if (i == 0) {
      absl::StrAppend(&text, FormatPercent(share), " % of the ", FormatBytes(view.total),
                      view.sent ? " sent left on " : " received arrived on ", where);
    } else {
      absl::StrAppend(&text, ", ", FormatPercent(share), " % on ", where);
    }
  }
  return text;
}

v1::Finding Make(const char* id, const std::string& test_label, const LosslessEnd& end,
                 v1::Finding::Status status) {
  v1::Finding finding;
  finding.set_id(id);
  finding.set_node(end.node);
  finding.set_device(end.device);
  finding.set_status(status);
  finding.set_severity(v1::Finding::error);
  finding.set_key(absl::StrCat(id, "@", test_label));
  return finding;
}

std::string PfcVector(int planned) {
  std::vector<int> enabled(kPriorities, 0);
  enabled[static_cast<size_t>(planned)] = 1;
  return absl::StrJoin(enabled, ",");
}

v1::Finding JudgePriority(const plan::Plan& plan, const std::string& test_label,
                          const std::vector<PriorityView>& views) {
  const int planned = plan.fabric.roce.pfc_priority;
  const PriorityView* worst = &views.front();
  for (const PriorityView& view : views) {
    if (view.share < worst->share) worst = &view;
  }
  const bool pass = worst->share >= kMinPlannedPriorityShare;
  v1::Finding finding =
      Make(kPriorityId, test_label, *worst->end, pass ? v1::Finding::pass : v1::Finding::fail);
  finding.set_observed(absl::StrCat(FormatPercent(worst->share), " % on priority ", planned, " (",
                                    EndName(*worst->end), worst->sent ? " sent " : " received ",
                                    FormatBytes(worst->total), ")"));
  finding.set_expected(
      absl::StrCat(">= ", FormatPercent(kMinPlannedPriorityShare), " % on priority ", planned));
  finding.set_has_value(true);
  finding.set_value(worst->share * 100);
  finding.set_unit("%");
  finding.set_threshold(kMinPlannedPriorityShare * 100);
  if (pass) {
    std::vector<std::string> parts;
    parts.reserve(views.size());
    for (const PriorityView& view : views) {
      parts.push_back(absl::StrCat(FormatPercent(view.share), " % of the ", FormatBytes(view.total),
                                   " ", EndName(*view.end), view.sent ? " sent" : " received"));
    }
    finding.set_message(absl::StrCat(test_label, ": ", absl::StrJoin(parts, " and "),
                                     " travelled on priority ", planned,
                                     " (the plan's fabric.roce.pfc_priority)."));
    return finding;
  }
  std::vector<std::string> failing;
  for (const PriorityView& view : views) {
    if (view.share < kMinPlannedPriorityShare) failing.push_back(Breakdown(view, planned));
  }
  finding.set_message(absl::StrCat(test_label, ": ", absl::StrJoin(failing, "; "), "; at least ",
                                   FormatPercent(kMinPlannedPriorityShare),
                                   " % must travel on priority ", planned, "."));
  const int dscp = plan.fabric.roce.dscp;
  finding.set_remedy(absl::StrCat(
      "The RDMA traffic is not on the lossless priority, so PFC does not protect it. In the "
      "seed's order: on the NIC, trust DSCP and map DSCP ",
      dscp, " to priority ", planned, " (mlnx_qos -i <", worst->end->device,
      "'s netdev> --trust dscp; `dcb app show dev <netdev> dscp-prio` must list ", dscp, ":",
      planned, "); make the application send traffic class ",
      plan::RoceTrafficClass(plan.fabric.roce), " (DSCP ", dscp,
      ", fabric.roce.dscp); then map DSCP ", dscp, " to the lossless queue of priority ", planned,
      " on every switch port of the path."));
  return finding;
}

std::string RiseText(const LosslessEnd& end, const std::vector<Rise>& rises, bool name_priority) {
  std::vector<std::string> parts;
  for (const Rise& rise : rises) {
    std::string text = absl::StrCat(rise.name, " +", rise.delta);
    if (name_priority) {
      absl::StrAppend(&text, rise.priority < 0 ? " (link-level 802.3x pause)"
                                               : absl::StrCat(" (priority ", rise.priority, ")"));
    }
    parts.push_back(std::move(text));
  }
  return absl::StrCat(EndName(end), " ", absl::StrJoin(parts, ", "));
}

std::optional<v1::Finding> JudgePause(const plan::Plan& plan, const std::string& test_label,
                                      const std::vector<LosslessEnd>& ends,
                                      const std::vector<EndCounters>& counters, bool judged) {
  const int planned = plan.fabric.roce.pfc_priority;
  const LosslessEnd* first = nullptr;
  std::vector<std::string> seen;
  uint64_t planned_pauses = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    planned_pauses += counters[i].planned_pauses;
    if (counters[i].wrong_pauses.empty()) continue;
    if (first == nullptr) first = &ends[i];
    seen.push_back(RiseText(ends[i], counters[i].wrong_pauses, true));
  }
  const std::string expected = absl::StrCat("pause frames on priority ", planned, " only");
  if (first == nullptr) {
    if (!judged) return std::nullopt;
    v1::Finding finding = Make(kPauseId, test_label, ends.front(), v1::Finding::pass);
    finding.set_observed(
        absl::StrCat(planned_pauses, " on priority ", planned, ", none elsewhere"));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(test_label, ": no pause frames on a priority other than ",
                                     planned, " at either end (", planned_pauses, " on priority ",
                                     planned, ")."));
    return finding;
  }
  v1::Finding finding = Make(kPauseId, test_label, *first, v1::Finding::fail);
  finding.set_observed(absl::StrJoin(seen, "; "));
  finding.set_expected(expected);
  finding.set_message(absl::StrCat(test_label,
                                   ": pause frames rose on a priority other than the plan's ",
                                   planned, ": ", absl::StrJoin(seen, "; "),
                                   ": flow control acts on the wrong traffic, so PFC is on for "
                                   "the wrong priority."));
  finding.set_remedy(absl::StrCat(
      "Enable PFC on priority ", planned, " only, on the NIC (mlnx_qos -i <netdev> --pfc ",
      PfcVector(planned), "; `dcb pfc show dev <netdev>` must read pfc-enabled ", planned,
      ") and on every switch port of the path, and turn link-level flow control off "
      "(ethtool -A <netdev> rx off tx off) where 802.3x pause rose."));
  return finding;
}

std::optional<v1::Finding> JudgeDrops(const plan::Plan& plan, const std::string& test_label,
                                      const std::vector<LosslessEnd>& ends,
                                      const std::vector<EndCounters>& counters, bool judged) {
  const int planned = plan.fabric.roce.pfc_priority;
  const LosslessEnd* first = nullptr;
  std::vector<std::string> seen;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (counters[i].drops.empty()) continue;
    if (first == nullptr) first = &ends[i];
    seen.push_back(RiseText(ends[i], counters[i].drops, false));
  }
  const std::string expected = "no drop counter rising";
  if (first == nullptr) {
    if (!judged) return std::nullopt;
    v1::Finding finding = Make(kDropsId, test_label, ends.front(), v1::Finding::pass);
    finding.set_observed("no drop counter rose");
    finding.set_expected(expected);
    finding.set_message(
        absl::StrCat(test_label, ": no drop counter rose at either end of a lossless fabric."));
    return finding;
  }
  v1::Finding finding = Make(kDropsId, test_label, *first, v1::Finding::fail);
  finding.set_observed(absl::StrJoin(seen, "; "));
  finding.set_expected(expected);
  finding.set_message(absl::StrCat(
      test_label, ": packets were dropped on a lossless fabric: ", absl::StrJoin(seen, "; "),
      ": PFC is not honoured end to end, or the buffer headroom "
      "is too small."));
  finding.set_remedy(absl::StrCat(
      "Check PFC on priority ", planned,
      " end to end (the NIC: mlnx_qos -i <netdev>; every switch port of the path) and the "
      "receive buffer headroom for priority ",
      planned,
      " on the NIC (mlnx_qos --buffer_size) and the switch (sized for the cable length); "
      "rx_out_of_buffer, dev_out_of_buffer, out_of_buffer and outbound_pci_buffer_overflow "
      "mean the receiving host fell behind instead: check its PCIe link and NUMA placement."));
  return finding;
}

}  // namespace

bool LosslessJudged(const plan::Plan& plan) {
  return plan.fabric.type == plan::FabricType::kRoce && plan.fabric.roce.lossless;
}

LosslessJudgement JudgeLossless(const plan::Plan& plan, const std::string& test_label,
                                const std::vector<LosslessEnd>& ends) {
  LosslessJudgement judgement;
  if (!LosslessJudged(plan)) return judgement;
  if (ends.empty()) {
    judgement.not_judged_reason = absl::StrCat("no counters were recorded for ", test_label);
    return judgement;
  }
  const int planned = plan.fabric.roce.pfc_priority;
  if (planned < 0 || planned >= kPriorities) {  // the plan parser allows 0..7 only
    judgement.not_judged_reason =
        absl::StrCat("fabric.roce.pfc_priority ", planned, " is not an 802.1p priority (0..7)");
    return judgement;
  }
  std::vector<EndCounters> counters;
  counters.reserve(ends.size());
  for (const LosslessEnd& end : ends) counters.push_back(Summarise(end, planned));

  std::vector<PriorityView> views;
  for (size_t i = 0; i < ends.size() && judgement.not_judged_reason.empty(); ++i) {
    for (const bool sent : {true, false}) {
      if (!(sent ? ends[i].sends : ends[i].receives)) continue;
      const bool has = sent ? counters[i].has_tx_bytes : counters[i].has_rx_bytes;
      const char* name = sent ? "tx_prio<N>_bytes" : "rx_prio<N>_bytes";
      if (!has) {
        judgement.not_judged_reason =
            absl::StrCat("no per-priority byte counters on ", EndName(ends[i]), " (its port ",
                         "counters carry no ", name, ")");
        break;
      }
      PriorityView view;
      view.end = &ends[i];
      view.sent = sent;
      view.bytes = sent ? counters[i].tx_bytes : counters[i].rx_bytes;
      for (uint64_t bytes : view.bytes) view.total += bytes;
      if (view.total == 0) {
        judgement.not_judged_reason =
            absl::StrCat("the per-priority byte counters of ", EndName(ends[i]), " counted no ",
                         sent ? "sent" : "received", " bytes during ", test_label);
        break;
      }
      view.share = static_cast<double>(view.bytes[static_cast<size_t>(planned)]) /
                   static_cast<double>(view.total);
      views.push_back(view);
    }
  }
  if (views.empty() && judgement.not_judged_reason.empty()) {
    judgement.not_judged_reason =
        absl::StrCat("no end of ", test_label, " sends or receives its data");
  }
  judgement.judged = judgement.not_judged_reason.empty();
  if (judgement.judged) judgement.findings.push_back(JudgePriority(plan, test_label, views));
  if (auto pause = JudgePause(plan, test_label, ends, counters, judgement.judged)) {
    judgement.findings.push_back(*std::move(pause));
  }
  if (auto drops = JudgeDrops(plan, test_label, ends, counters, judgement.judged)) {
    judgement.findings.push_back(*std::move(drops));
  }
  return judgement;
}

v1::Finding LosslessNotJudged(const std::string& reason) {
  v1::Finding finding;
  finding.set_id(kPriorityId);
  finding.set_status(v1::Finding::skipped);
  finding.set_severity(v1::Finding::error);
  finding.set_key(kPriorityId);
  finding.set_observed(reason);
  finding.set_expected("per-priority byte counters (mlx5 ethtool rx/tx_prio<N>_bytes)");
  finding.set_message(absl::StrCat(
      "skipped: ", reason,
      ": no test could show that the RDMA traffic travelled on the plan's PFC priority, "
      "paused only there and lost nothing."));
  finding.set_remedy(
      "Run the pairwise phase on NICs whose ethtool statistics carry per-priority counters "
      "(mlx5: rx/tx_prio<N>_bytes, _pause, rx_prio<N>_discards) with the verbs engine; on a "
      "fabric that is not lossless (soft-RoCE, a switch without DCB) set "
      "fabric.roce.lossless: false.");
  return finding;
}

}  // namespace clustercert::controller::pairwise
