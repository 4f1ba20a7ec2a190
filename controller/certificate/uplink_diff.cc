#include "controller/certificate/uplink_diff.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "controller/certificate/diff_support.h"
#include "controller/checks/status_text.h"

namespace clustercert::controller {
namespace {

std::string RunKey(const v1::UplinkThroughput& run) {
  return absl::StrCat(run.node(), " -> ", run.target(), " ", run.flows(),
                      run.flows() == 1 ? " flow" : " flows");
}

void DiffSizing(const v1::UplinkSizing& o, const v1::UplinkSizing& n,
                std::vector<DiffEntry>* entries) {
  if (o.verdict() == n.verdict() && o.required_gbps() == n.required_gbps() &&
      o.capacity_gbps() == n.capacity_gbps()) {
    return;
  }
  DiffEntry entry =
      MakeDiffEntry(DiffKind::kUplinkSizing, "uplink sizing", "verdict",
                    checks::StatusText(o.verdict()), checks::StatusText(n.verdict()), {});
  SetDiffNumbers(entry, o.required_gbps(), n.required_gbps(), "Gb/s");
  entry.regression =
      o.verdict() == v1::UplinkSizing::fits && n.verdict() == v1::UplinkSizing::undersized;
  entry.improvement =
      o.verdict() == v1::UplinkSizing::undersized && n.verdict() == v1::UplinkSizing::fits;
  entry.text = absl::StrCat(
      "uplink sizing ", checks::StatusText(o.verdict()), " -> ", checks::StatusText(n.verdict()),
      " (", FormatDiffValue(o.required_gbps()), " of ", FormatDiffValue(o.capacity_gbps()),
      " Gb/s -> ", FormatDiffValue(n.required_gbps()), " of ", FormatDiffValue(n.capacity_gbps()),
      " Gb/s)");
  entries->push_back(std::move(entry));
}

void DiffRun(const std::string& key, const v1::UplinkThroughput& o, const v1::UplinkThroughput& n,
             double noise, std::vector<DiffEntry>* entries) {
  if (o.ok() != n.ok()) {
    DiffEntry entry = MakeDiffEntry(n.ok() ? DiffKind::kUplinkRunFixed : DiffKind::kUplinkRunFailed,
                                    key, "ok", o.ok() ? "ok" : ClipText(o.error()),
                                    n.ok() ? "ok" : ClipText(n.error()), {n.node()});
    entry.regression = !n.ok();
    entry.improvement = n.ok();
    entry.text = n.ok() ? absl::StrCat(key, " completes again (",
                                       FormatDiffValue(n.aggregate_gbps()), " Gb/s)")
                        : absl::StrCat(key, " no longer completes: ", ClipText(n.error()));
    entries->push_back(std::move(entry));
    return;
  }
  if (!o.ok() || o.aggregate_gbps() <= 0) return;
  const double change = n.aggregate_gbps() / o.aggregate_gbps() - 1;
  if (change >= -noise && change <= noise) return;
  DiffEntry entry = MakeDiffEntry(DiffKind::kUplinkThroughput, key, "aggregate_gbps",
                                  FormatDiffValue(o.aggregate_gbps()),
                                  FormatDiffValue(n.aggregate_gbps()), {n.node()});
  SetDiffNumbers(entry, o.aggregate_gbps(), n.aggregate_gbps(), "Gb/s");
  entry.regression = change < -noise;
  entry.improvement = change > noise;
  entry.text =
      absl::StrCat(key, " ", FormatDiffValue(o.aggregate_gbps()), " -> ",
                   FormatDiffValue(n.aggregate_gbps()), " Gb/s (", ChangePercent(change), ")");
  entries->push_back(std::move(entry));
}

}  // namespace

void DiffUplink(const v1::Certificate& old_cert, const v1::Certificate& new_cert, double noise,
                std::vector<DiffEntry>* entries) {
  if (old_cert.has_uplink() && new_cert.has_uplink()) {
    DiffSizing(old_cert.uplink().sizing(), new_cert.uplink().sizing(), entries);
  }
  MatchByKey(
      old_cert.uplink().throughput(), new_cert.uplink().throughput(), RunKey,
      [&](const std::string& key, const v1::UplinkThroughput* o, const v1::UplinkThroughput* n) {
        if (o != nullptr && n != nullptr) DiffRun(key, *o, *n, noise, entries);
      });
}

}  // namespace clustercert::controller
