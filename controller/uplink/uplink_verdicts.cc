#include "controller/uplink/uplink_verdicts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/non_finite.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller::uplink {
namespace {

using checks::FindingBuilder;
using checks::Severity;

// How the agent's tcp flows begin the error of a target that does not read.
constexpr absl::string_view kNotReadMarker = "the target read ";

// "1 flow 0.05 Gb/s, 8 flows 0.4 Gb/s (each 0.05)".
std::string FlowFigures(const std::vector<const v1::UplinkThroughput*>& runs) {
  std::vector<std::string> parts;
  for (const v1::UplinkThroughput* run : runs) {
    if (!run->ok()) continue;
    std::string part = absl::StrCat(run->flows(), run->flows() == 1 ? " flow " : " flows ",
                                    GbpsText(run->aggregate_gbps()));
    if (run->flows() > 1 && run->flow_gbps_size() > 0) {
      absl::StrAppend(&part, " (per flow ", absl::StrFormat("%.3g", run->min_flow_gbps()), "-",
                      absl::StrFormat("%.3g", run->max_flow_gbps()), ")");
    }
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, ", ");
}

v1::Finding ThroughputFinding(const std::vector<const v1::UplinkThroughput*>& runs) {
  const v1::UplinkThroughput& first = *runs.front();
  FindingBuilder builder("uplink.throughput", v1::Finding::error, first.node(), first.target());
  const std::string where =
      absl::StrCat(first.node(), " to ", first.target(), " (", first.target_type(), ")");
  // inf Gb/s clears any need and NaN none: neither is a measurement (a
  // failed run's figures are not judged, its failure is).
  for (const v1::UplinkThroughput* run : runs) {
    if (auto bad = run->ok() ? FindNonFinite(*run) : std::nullopt) {
      return builder.Unknown(
          checks::MissingBecause(NonFiniteSentence(run->node(), bad->field, bad->value)),
          "throughput",
          first.need_gbps() > 0 ? absl::StrCat(">= ", GbpsText(first.need_gbps()))
                                : std::string("reachable"));
    }
  }
  std::vector<std::string> failures;
  const v1::UplinkThroughput* best = nullptr;
  const v1::UplinkThroughput* single = nullptr;
  for (const v1::UplinkThroughput* run : runs) {
    if (!run->ok()) {
      failures.push_back(absl::StrCat(run->flows(), " flow(s): ", run->error()));
      continue;
    }
    if (best == nullptr || run->aggregate_gbps() > best->aggregate_gbps()) best = run;
    if (run->flows() == 1) single = run;
  }
  const double need = first.need_gbps();
  const std::string expected =
      need > 0 ? absl::StrCat(">= ", GbpsText(need), " (the node's share of the ingest)")
               : std::string("reachable");
  if (!failures.empty()) {
    // The agent's tcp flows count what the target acknowledged; one that
    // accepts and does not read ends its run with "the target read N bytes
    // in T s" (agent/uplink/tcp_send_flows.cc): reached, but not a sink.
    const bool not_read = std::any_of(failures.begin(), failures.end(), [](const std::string& f) {
      return absl::StrContains(f, kNotReadMarker);
    });
    v1::Finding finding = builder.Fail(
        not_read ? "not read by the target" : "unreachable", expected,
        absl::StrCat(where, " did not complete: ", absl::StrJoin(failures, "; "), "."),
        not_read
            ? absl::StrCat("Run a sink at ", first.target(),
                           " that reads and discards every connection at once (`socat -u "
                           "TCP-LISTEN:PORT,fork,reuseaddr /dev/null`, a storage node's discard "
                           "service; OpenBSD's `nc -lk` reads one connection at a time): a "
                           "listener that only accepts takes its kernel buffers' worth and no "
                           "more, which is not throughput. If it does read, check the path from ",
                           first.node(), " for a link that stops carrying data.")
            : absl::StrCat("Check the path from ", first.node(), " to ", first.target(),
                           ": the route and cable to the storage network, the switch port, a "
                           "firewall, and that the target serves (node-agent running, HTTP "
                           "server up, object present); the management plane still answers, so "
                           "the outage is on the data/storage side."));
    finding.set_has_value(false);
    return finding;
  }
  std::string figures = FlowFigures(runs);
  if (single != nullptr && best != nullptr && best != single && single->aggregate_gbps() > 0) {
    absl::StrAppend(&figures, "; ", best->flows(), " flows reach ",
                    absl::StrFormat("%.1f", best->aggregate_gbps() / single->aggregate_gbps()),
                    "x one flow");
  }
  v1::Finding finding;
  if (best->aggregate_gbps() <= 0) {
    // Without a required rate "reachable" is the bar, and a receiver that
    // counted nothing is no evidence the path carries data.
    finding = builder.Fail(
        GbpsText(0), expected,
        absl::StrCat(where, " moved no data: the receiving side reported ", best->bytes(),
                     " bytes in ", absl::StrFormat("%.3g", best->seconds()), " s, 0 Gb/s."),
        absl::StrCat("Check the path from ", first.node(), " to ", first.target(),
                     " for a link that connects but carries no data (MTU mismatch, a "
                     "firewall dropping data but not handshakes) and that the sink reads."));
  } else if (need > 0 && best->aggregate_gbps() < need) {
    finding = builder.Fail(
        GbpsText(best->aggregate_gbps()), expected,
        absl::StrCat(where, " moves at most ", GbpsText(best->aggregate_gbps()), " (", figures,
                     "), below the ", GbpsText(need), " this node's GPUs read."),
        "Raise the path to storage (uplink, storage server NIC, switch port speed) or stage the "
        "dataset on local NVMe; if one flow is far below the aggregate, the dataloader must open "
        "parallel flows (DALI, WebDataset and MosaicML Streaming do by design).");
  } else {
    std::string message = absl::StrCat(where, ": ", figures, ".");
    if (single != nullptr && best != single) {
      absl::StrAppend(&message,
                      " One TCP flow uses one NIC and one path; parallel flows are what reach the "
                      "aggregate, so the dataloader must open several.");
    }
    finding = builder.Pass(GbpsText(best->aggregate_gbps()), expected, message);
  }
  finding.set_has_value(true);
  finding.set_value(best->aggregate_gbps());
  finding.set_unit("Gb/s");
  finding.set_threshold(need);
  return finding;
}

}  // namespace

std::string GbpsText(double gbps) { return absl::StrFormat("%.3g Gb/s", gbps); }

v1::Finding SizingFinding(const v1::UplinkSizing& sizing) {
  FindingBuilder builder("uplink.sizing", v1::Finding::error, "");
  const std::string expected =
      absl::StrCat("required ingest <= capacity ", GbpsText(sizing.capacity_gbps()));
  if (sizing.verdict() == v1::UplinkSizing::unknown) {
    const bool no_rate = sizing.required_gbps() <= 0;
    v1::Finding finding;
    finding.set_id("uplink.sizing");
    finding.set_severity(v1::Finding::error);
    finding.set_status(v1::Finding::unknown);
    finding.set_observed(no_rate ? "unknown: no read rate" : "unknown: no capacity");
    finding.set_expected(expected);
    finding.set_message(no_rate ? "The uplink cannot be sized: the plan's uplink.workload gives "
                                  "no read rate (or counts no GPUs)."
                                : "The uplink cannot be sized: the plan gives no "
                                  "uplink.capacity_gbps.");
    finding.set_remedy(no_rate ? "Add uplink.workload.profile (image-video, llm-pretrain, "
                                 "fine-tune), ingest_gbytes_per_gpu or cluster_ingest_gbps, and "
                                 "the GPUs (gpus_per_node or each node's gpus)."
                               : "Add uplink.capacity_gbps: the uplink's line rate in Gb/s "
                                 "(e.g. 25 for one 25 GbE link).");
    return finding;
  }
  const std::string observed =
      absl::StrCat(GbpsText(sizing.required_gbps()), " (",
                   absl::StrFormat("%.3g", sizing.required_gbytes_s()), " GB/s) needed");
  std::string message = absl::StrCat("The workload reads ", sizing.arithmetic(),
                                     " against an uplink of ", GbpsText(sizing.capacity_gbps()),
                                     ": ", absl::StrFormat("%.0f", sizing.utilisation() * 100),
                                     "% used, headroom ", GbpsText(sizing.headroom_gbps()), ".");
  if (!sizing.basis().empty()) absl::StrAppend(&message, " ", sizing.basis());
  for (const std::string& advice : sizing.advice()) absl::StrAppend(&message, " ", advice);
  v1::Finding finding;
  if (sizing.verdict() == v1::UplinkSizing::undersized) {
    finding = builder.Fail(observed, expected, message,
                           sizing.advice_size() > 0 ? sizing.advice(0) : std::string());
  } else {
    finding = builder.Pass(observed, expected, message);
  }
  finding.set_has_value(true);
  finding.set_value(sizing.required_gbps());
  finding.set_unit("Gb/s");
  finding.set_threshold(sizing.capacity_gbps());
  return finding;
}

std::vector<v1::Finding> ThroughputFindings(const v1::Uplink& uplink) {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const v1::UplinkThroughput*>> runs;
  for (const v1::UplinkThroughput& run : uplink.throughput()) {
    auto key = std::make_pair(run.node(), run.target());
    if (runs.count(key) == 0) order.push_back(key);
    runs[key].push_back(&run);
  }
  std::vector<v1::Finding> findings;
  for (const auto& key : order) findings.push_back(ThroughputFinding(runs[key]));
  return findings;
}

std::vector<v1::Finding> JudgeUplink(const v1::Uplink& uplink) {
  std::vector<v1::Finding> findings;
  findings.push_back(SizingFinding(uplink.sizing()));
  for (auto& finding : ThroughputFindings(uplink)) findings.push_back(std::move(finding));
  return findings;
}

}  // namespace clustercert::controller::uplink
