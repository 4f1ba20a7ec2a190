#include "controller/pairwise/dcqcn_verdict.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counter_deltas.h"
#include "controller/pairwise/incast_verdict.h"

namespace clustercert::controller::pairwise {
namespace {

constexpr char kDcqcnId[] = "incast.dcqcn";
constexpr char kCnpIgnoredId[] = "incast.cnp_ignored";
constexpr char kEcnMarked[] = "np_ecn_marked_roce_packets";
constexpr char kCnpSent[] = "np_cnp_sent";
constexpr char kCnpHandled[] = "rp_cnp_handled";
constexpr char kCnpIgnored[] = "rp_cnp_ignored";

constexpr char kNotEngaged[] =
    "DCQCN is not engaged: PFC alone is throttling; check ECN on the switch queue and the NIC's "
    "DCQCN enablement";

// One end's counters as recorded: name -> delta, for the names it has.
struct End {
  std::string node;
  std::string device;
  std::map<std::string, uint64_t> dcqcn;
  std::vector<std::string> pauses;  // "tx_prio3_pause +1520"
};

std::string EndName(const End& end) {
  return end.device.empty() ? end.node : absl::StrCat(end.node, " ", end.device);
}

bool IsPauseCounter(const std::string& name) {
  if (name == "rx_pause_ctrl_phy" || name == "tx_pause_ctrl_phy") return true;
  auto parsed = counters::ParsePriorityCounter(name);
  return parsed.has_value() && parsed->suffix == "pause";
}

End Collect(const std::string& node, const std::string& device,
            const google::protobuf::RepeatedPtrField<v1::CounterDelta>& deltas) {
  End end{node, device, {}, {}};
  for (const v1::CounterDelta& delta : deltas) {
    if (IsDcqcnCounter(delta.name())) {
      // Recorded on one side only (a note): no delta to judge.
      if (delta.note().empty() || delta.delta() > 0) end.dcqcn[delta.name()] += delta.delta();
    } else if (IsPauseCounter(delta.name()) && delta.delta() > 0) {
      end.pauses.push_back(absl::StrCat(delta.name(), " +", delta.delta()));
    }
  }
  return end;
}

// "node2 mlx5_0 has no np_cnp_sent", for the first end missing a counter it needs.
std::string Missing(const End& end, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (end.dcqcn.count(name) == 0) {
      return absl::StrCat(EndName(end), " recorded no ", name,
                          " (its port's hw_counters have none: soft-RoCE and non-mlx5 NICs keep "
                          "no DCQCN counters)");
    }
  }
  return "";
}

v1::Finding Make(const char* id, const v1::IncastResult& round, const End& about,
                 v1::Finding::Status status) {
  v1::Finding finding;
  finding.set_id(id);
  finding.set_node(about.node);
  finding.set_device(about.device);
  finding.set_status(status);
  finding.set_severity(v1::Finding::warning);
  finding.set_key(absl::StrCat(id, "@", IncastLabel(round)));
  return finding;
}

v1::Finding Skipped(const char* id, const v1::IncastResult& round, const End& about,
                    const std::string& reason, const std::string& expected) {
  v1::Finding finding = Make(id, round, about, v1::Finding::skipped);
  finding.set_observed(reason);
  finding.set_expected(expected);
  finding.set_message(absl::StrCat("skipped: ", IncastLabel(round), ": ", reason, "."));
  return finding;
}

std::string SenderSum(const std::vector<End>& senders, const char* name, uint64_t* total) {
  std::vector<std::string> parts;
  *total = 0;
  for (const End& sender : senders) {
    const uint64_t value = sender.dcqcn.at(name);
    *total += value;
    parts.push_back(absl::StrCat(sender.node, " +", value));
  }
  return absl::StrCat(name, " ", absl::StrJoin(parts, ", "));
}

std::string RoceEcnPath(const plan::Plan& plan, const char* point) {
  return absl::StrCat("/sys/class/net/<netdev>/ecn/", point, "/enable/",
                      plan.fabric.roce.pfc_priority);
}

v1::Finding JudgeEngaged(const plan::Plan& plan, const v1::IncastResult& round, const End& receiver,
                         const std::vector<End>& senders) {
  const std::string expected =
      "under congestion, ECN marks and CNPs rise (DCQCN), not pause frames alone";
  std::string missing = Missing(receiver, {kEcnMarked, kCnpSent});
  for (const End& sender : senders) {
    if (missing.empty()) missing = Missing(sender, {kCnpHandled});
  }
  if (!missing.empty()) return Skipped(kDcqcnId, round, receiver, missing, expected);
  const uint64_t marked = receiver.dcqcn.at(kEcnMarked);
  const uint64_t sent = receiver.dcqcn.at(kCnpSent);
  uint64_t handled = 0;
  const std::string handled_text = SenderSum(senders, kCnpHandled, &handled);
  const std::string counts = absl::StrCat(EndName(receiver), " ", kEcnMarked, " +", marked, ", ",
                                          kCnpSent, " +", sent, "; senders ", handled_text);
  std::vector<const End*> ends = {&receiver};
  for (const End& sender : senders) ends.push_back(&sender);
  std::vector<std::string> pauses;
  const End* paused = nullptr;
  for (const End* end : ends) {
    if (end->pauses.empty()) continue;
    if (paused == nullptr) paused = end;
    pauses.push_back(absl::StrCat(EndName(*end), " ", absl::StrJoin(end->pauses, ", ")));
  }
  const std::string pause_text = absl::StrJoin(pauses, "; ");
  if (marked == 0 && sent == 0 && handled == 0) {
    if (paused == nullptr) {
      return Skipped(kDcqcnId, round, receiver,
                     absl::StrCat("neither a pause frame nor an ECN mark rose (", counts,
                                  "): the round did not congest the port, so DCQCN's reaction "
                                  "was not exercised"),
                     expected);
    }
    v1::Finding finding = Make(kDcqcnId, round, *paused, v1::Finding::fail);
    finding.set_observed(absl::StrCat("pause frames: ", pause_text, "; ", counts));
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(IncastLabel(round), ": ", kNotEngaged,
                                     " (pause frames: ", pause_text, "; ", counts, ")."));
    finding.set_remedy(absl::StrCat(
        "In the seed's order (MTU, then PFC, then ECN): mark ECN on the lossless queue of "
        "priority ",
        plan.fabric.roce.pfc_priority,
        " on every switch port of the path (a threshold below the PFC XOFF point), and enable "
        "DCQCN on each NIC for that priority: the notification point (",
        RoceEcnPath(plan, "roce_np"), " = 1) on the receiver and the reaction point (",
        RoceEcnPath(plan, "roce_rp"),
        " = 1) on the senders; ConnectX-6/7 firmware has it on by default, so a 0 there was set "
        "by hand or by a tuning script."));
    return finding;
  }
  if (marked > 0 && sent == 0) {
    v1::Finding finding = Make(kDcqcnId, round, receiver, v1::Finding::fail);
    finding.set_observed(counts);
    finding.set_expected(expected);
    finding.set_message(absl::StrCat(
        IncastLabel(round), ": ", EndName(receiver), " received ", marked,
        " ECN-marked RoCE packets and sent no CNP: its DCQCN notification point is off, so the "
        "senders never hear of the congestion (",
        counts, ")."));
    finding.set_remedy(absl::StrCat("Enable the notification point on ", EndName(receiver),
                                    ": echo 1 > ", RoceEcnPath(plan, "roce_np"),
                                    " (MLNX_OFED/DOCA), or its firmware setting with mlxconfig."));
    return finding;
  }
  v1::Finding finding = Make(kDcqcnId, round, receiver, v1::Finding::pass);
  finding.set_observed(pause_text.empty() ? counts
                                          : absl::StrCat(counts, "; pause frames: ", pause_text));
  finding.set_expected(expected);
  finding.set_message(absl::StrCat(IncastLabel(round), ": DCQCN reacted to the congestion (",
                                   finding.observed(), ")."));
  return finding;
}

v1::Finding JudgeIgnored(const plan::Plan& plan, const v1::IncastResult& round, const End& receiver,
                         const std::vector<End>& senders) {
  const std::string expected = absl::StrCat(kCnpIgnored, " +0 on every sender");
  std::string missing;
  for (const End& sender : senders) {
    if (missing.empty()) missing = Missing(sender, {kCnpIgnored});
  }
  if (!missing.empty()) return Skipped(kCnpIgnoredId, round, receiver, missing, expected);
  uint64_t ignored = 0;
  const std::string text = SenderSum(senders, kCnpIgnored, &ignored);
  if (ignored == 0) {
    v1::Finding finding = Make(kCnpIgnoredId, round, receiver, v1::Finding::pass);
    finding.set_observed(text);
    finding.set_expected(expected);
    finding.set_message(
        absl::StrCat(IncastLabel(round), ": no sender ignored a CNP (", text, ")."));
    return finding;
  }
  const End* first = nullptr;
  std::vector<std::string> names;
  for (const End& sender : senders) {
    if (sender.dcqcn.at(kCnpIgnored) == 0) continue;
    if (first == nullptr) first = &sender;
    names.push_back(EndName(sender));
  }
  v1::Finding finding = Make(kCnpIgnoredId, round, *first, v1::Finding::fail);
  finding.set_observed(text);
  finding.set_expected(expected);
  finding.set_has_value(true);
  finding.set_value(static_cast<double>(ignored));
  finding.set_unit("CNPs");
  finding.set_message(absl::StrCat(
      IncastLabel(round), ": ", absl::StrJoin(names, ", "), " ignored congestion notifications (",
      text,
      "): its DCQCN reaction point received CNPs and did not slow down, so the congestion "
      "falls to PFC."));
  finding.set_remedy(absl::StrCat(
      "Enable the reaction point on ", absl::StrJoin(names, ", "), " for priority ",
      plan.fabric.roce.pfc_priority, ": echo 1 > ", RoceEcnPath(plan, "roce_rp"),
      " (MLNX_OFED/DOCA; the priority must be the one the RDMA traffic is sent on), or the "
      "firmware's congestion-control priority mask with mlxconfig; NVIDIA's mlx5 counter notes "
      "say rp_cnp_ignored should not rise when RoCE congestion control is enabled."));
  return finding;
}

}  // namespace

bool IsDcqcnCounter(const std::string& name) {
  return name == kEcnMarked || name == kCnpSent || name == kCnpHandled || name == kCnpIgnored;
}

std::vector<v1::Finding> JudgeDcqcn(const plan::Plan& plan, const v1::IncastResult& round) {
  std::vector<v1::Finding> findings;
  if (plan.fabric.type != plan::FabricType::kRoce || !plan.fabric.roce.ecn) return findings;
  if (round.engine() == "tcp") return findings;
  const End receiver = Collect(round.receiver(), round.rail(), round.receiver_counters());
  bool ran = round.error().empty();
  if (ran) {
    ran = false;
    for (const auto& sender : round.senders()) ran = ran || sender.ok();
  }
  if (!ran) {
    const std::string why = round.error().empty() ? "no sender ran" : round.error();
    for (const char* id : {kDcqcnId, kCnpIgnoredId}) {
      v1::Finding finding = Make(id, round, receiver, v1::Finding::unknown);
      finding.set_observed(absl::StrCat("unknown: ", why));
      finding.set_message(absl::StrCat(IncastLabel(round), ": DCQCN is unknown (", why, ")."));
      finding.set_remedy(
          "Re-run the pairwise phase once the round's senders run (incast.bandwidth says why "
          "they did not).");
      findings.push_back(std::move(finding));
    }
    return findings;
  }
  std::vector<End> senders;
  for (const auto& sender : round.senders()) {
    if (sender.ok()) senders.push_back(Collect(sender.node(), sender.rail(), sender.counters()));
  }
  findings.push_back(JudgeEngaged(plan, round, receiver, senders));
  findings.push_back(JudgeIgnored(plan, round, receiver, senders));
  return findings;
}

}  // namespace clustercert::controller::pairwise
