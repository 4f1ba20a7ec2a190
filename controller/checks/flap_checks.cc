#include "controller/checks/flap_checks.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counter_deltas.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller::checks {
namespace {

constexpr char kId[] = "port.flap";
constexpr char kExpected[] = "no link-down during the run";
constexpr char kFlapCounters[] = "carrier_changes, link_downed or link_down_events_phy";

// How many times the link went down, from each counter's own unit: the
// carrier counts a loss and a return, the others count losses.
uint64_t TimesDown(const v1::CounterDelta& delta) {
  if (delta.name() == counters::kCarrierChanges) return (delta.delta() + 1) / 2;
  return delta.delta();
}

struct FlapEvidence {
  std::vector<std::string> rises;     // "carrier_changes +2"
  std::vector<std::string> steady;    // "link_downed +0"
  std::vector<std::string> unusable;  // "carrier_changes went backwards ..."
  uint64_t times_down = 0;
};

FlapEvidence Gather(const v1::LinkFlaps& flaps) {
  FlapEvidence evidence;
  for (const v1::CounterDelta& delta : flaps.counters()) {
    const std::string change = absl::StrCat(delta.name(), " +", delta.delta());
    if (delta.delta() > 0) {
      evidence.rises.push_back(change);
      evidence.times_down = std::max(evidence.times_down, TimesDown(delta));
    } else if (absl::StartsWith(delta.note(), "not read")) {
      // Read on one side only (an older agent, a counter the driver added):
      // the other counters still judge.
      continue;
    } else if (!delta.note().empty()) {
      // Went backwards (a reset) or saturated: what happened is hidden.
      evidence.unusable.push_back(absl::StrCat(delta.name(), " ", delta.note()));
    } else {
      evidence.steady.push_back(change);
    }
  }
  return evidence;
}

v1::Finding Unknown(const FindingBuilder& builder, const std::string& reason,
                    const std::string& remedy) {
  return builder.Unknown(MissingBecause(reason), "link-down count over the run", kExpected, remedy);
}

}  // namespace

bool IsFlapCounter(const std::string& source, const std::string& name) {
  return (source == counters::kSysfsSource && name == counters::kCarrierChanges) ||
         (source == "counters" && name == "link_downed") ||
         (source == "ethtool" && name == "link_down_events_phy");
}

v1::LinkFlaps FlapsOver(const std::string& node, const std::string& rail, const std::string& netdev,
                        const FlapRead& first, const FlapRead& last) {
  v1::LinkFlaps flaps;
  flaps.set_node(node);
  flaps.set_rail(rail);
  flaps.set_netdev(netdev);
  if (!first.error.empty() || !last.error.empty()) {
    std::vector<std::string> errors;
    if (!first.error.empty()) errors.push_back(absl::StrCat("after the inventory: ", first.error));
    if (!last.error.empty()) errors.push_back(absl::StrCat("after the last phase: ", last.error));
    flaps.set_error(absl::StrCat("the counter read failed ", absl::StrJoin(errors, "; ")));
    return flaps;
  }
  for (v1::CounterDelta& delta : counters::DiffCounters(first.counters, last.counters)) {
    if (IsFlapCounter(delta.source(), delta.name())) *flaps.add_counters() = std::move(delta);
  }
  return flaps;
}

v1::Finding JudgeFlaps(const v1::LinkFlaps& flaps) {
  const FindingBuilder builder(kId, v1::Finding::error, flaps.node(), flaps.rail());
  if (!flaps.error().empty()) {
    return Unknown(builder, flaps.error(),
                   "Check that the node-agent answers ReadPortCounters for this port (its log), "
                   "then re-run; an unknown never counts as a pass.");
  }
  const FlapEvidence evidence = Gather(flaps);
  if (!evidence.rises.empty()) {
    const std::string rises = absl::StrJoin(evidence.rises, ", ");
    return builder.Fail(
        rises, kExpected,
        absl::StrCat(builder.subject(), " lost its link ", evidence.times_down,
                     evidence.times_down == 1 ? " time" : " times", " during the run (", rises,
                     "): check the cable and the switch port's log."),
        absl::StrCat("Check the cable/transceiver of ", builder.subject(),
                     " (ethtool -m, mlxlink) and the switch port's log for link-down events at "
                     "the run's time; reseat or replace what flaps, then re-run."));
  }
  if (!evidence.unusable.empty()) {
    return Unknown(builder, absl::StrJoin(evidence.unusable, "; "),
                   "A counter reset between the reads (driver reload, counters cleared) hides "
                   "any flap: keep the counters untouched during a run and re-run.");
  }
  if (flaps.counters().empty()) {
    // Neither read held any: a captured tree (--sysfs-root; its files never
    // move, so no flap can happen in it) or a driver without them. Nothing
    // can be watched, which is a skip with its reason, never a pass.
    return builder.Skipped(absl::StrCat(
        builder.subject(), " has no link-down counter (", kFlapCounters,
        "): no flap can be watched on it (a captured tree, an agent before issue 36 on "
        "fabric.type ethernet, or a driver without them)"));
  }
  if (evidence.steady.empty()) {
    return Unknown(builder,
                   absl::StrCat("no link-down counter (", kFlapCounters,
                                ") was read both after the inventory and after the last phase"),
                   "Run a node-agent that reads carrier_changes (issue 36 or later) as root with "
                   "the host's /sys, then re-run; an unknown never counts as a pass.");
  }
  const std::string steady = absl::StrJoin(evidence.steady, ", ");
  return builder.Pass(
      steady, kExpected,
      absl::StrCat(builder.subject(), " kept its link through the run (", steady, ")."));
}

std::vector<v1::Finding> JudgeAllFlaps(
    const google::protobuf::RepeatedPtrField<v1::LinkFlaps>& flaps) {
  std::vector<v1::Finding> findings;
  findings.reserve(flaps.size());
  for (const v1::LinkFlaps& port : flaps) findings.push_back(JudgeFlaps(port));
  return findings;
}

}  // namespace clustercert::controller::checks
