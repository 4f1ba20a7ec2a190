#include "controller/certificate/certificate_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/certificate/collective_diff.h"
#include "controller/certificate/diff_support.h"
#include "controller/certificate/inventory_diff.h"
#include "controller/certificate/result_keys.h"
#include "controller/certificate/uplink_diff.h"
#include "controller/checks/status_text.h"

namespace clustercert::controller {
namespace {

bool IsFailing(v1::Finding::Status status) {
  return status == v1::Finding::fail || status == v1::Finding::unknown;
}

// fail > unknown > skipped > pass: the status a key shows when several
// checks share it (pairwise.gpudirect of one client over several servers).
int StatusRank(v1::Finding::Status status) {
  if (status == v1::Finding::fail) return 3;
  if (status == v1::Finding::unknown) return 2;
  if (status == v1::Finding::skipped) return 1;
  return 0;
}

// ---- findings ----------------------------------------------------------

struct KeyedFindings {
  std::vector<std::string> order;
  std::map<std::string, const v1::Finding*> by_key;
};

// Every check by its stable key, pair verdicts left out: they are the pairs
// section's, and FindingKey alone cannot tell two servers apart.
KeyedFindings CollectFindings(const v1::Certificate& cert) {
  std::set<std::string> verdicts;
  for (const auto& pair : cert.pairs()) verdicts.insert(pair.verdict().SerializeAsString());
  KeyedFindings keyed;
  for (const auto* list : {&cert.checks(), &cert.findings()}) {
    for (const v1::Finding& finding : *list) {
      if (verdicts.count(finding.SerializeAsString()) != 0) continue;
      const std::string key = FindingKey(finding);
      auto [it, inserted] = keyed.by_key.emplace(key, &finding);
      if (inserted) {
        keyed.order.push_back(key);
      } else if (StatusRank(finding.status()) > StatusRank(it->second->status())) {
        it->second = &finding;
      }
    }
  }
  return keyed;
}

std::vector<std::string> NodesOf(const v1::Finding& finding) {
  if (finding.node().empty()) return {};
  return {finding.node()};
}

void DiffFinding(const std::string& key, const v1::Finding* o, const v1::Finding* n,
                 std::vector<DiffEntry>* entries) {
  const bool old_failing = o != nullptr && IsFailing(o->status());
  const bool new_failing = n != nullptr && IsFailing(n->status());
  const std::string old_status = o == nullptr ? "" : checks::StatusText(o->status());
  const std::string new_status = n == nullptr ? "" : checks::StatusText(n->status());
  if (new_failing && !old_failing) {
    DiffEntry entry =
        MakeDiffEntry(DiffKind::kFindingAdded, key, "status", old_status, new_status, NodesOf(*n));
    entry.regression = n->severity() != v1::Finding::warning;
    entry.text = absl::StrCat(key, " (", checks::StatusText(n->severity()),
                              "): ", o == nullptr ? "absent" : old_status, " -> ", new_status, ": ",
                              ClipText(n->message()));
    entries->push_back(std::move(entry));
  } else if (old_failing && !new_failing) {
    DiffEntry entry =
        MakeDiffEntry(DiffKind::kFindingFixed, key, "status", old_status, new_status, NodesOf(*o));
    entry.improvement = n != nullptr && n->status() == v1::Finding::pass;
    entry.text = absl::StrCat(key, ": ", old_status, " -> ",
                              n == nullptr ? "absent (NEW did not evaluate it)" : new_status);
    if (n != nullptr && n->status() == v1::Finding::skipped)
      absl::StrAppend(&entry.text, ": ", n->message());
    entries->push_back(std::move(entry));
  } else if (old_failing && new_failing) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kFindingStillFailing, key, "status", old_status,
                                    new_status, NodesOf(*n));
    entry.text = absl::StrCat(key, " (", checks::StatusText(n->severity()), "): still ", new_status,
                              ": ", ClipText(n->message()));
    entries->push_back(std::move(entry));
  }
}

void DiffFindings(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                  std::vector<DiffEntry>* entries) {
  if (old_cert.verdict() != new_cert.verdict()) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kVerdictChanged, "verdict", "verdict",
                                    old_cert.verdict(), new_cert.verdict(), {});
    entry.regression = old_cert.verdict() == "certified";
    entry.improvement = new_cert.verdict() == "certified";
    entry.text = absl::StrCat("verdict ", old_cert.verdict(), " -> ", new_cert.verdict());
    if (new_cert.verdict_reasons_size() > 0) {
      std::vector<std::string> reasons(new_cert.verdict_reasons().begin(),
                                       new_cert.verdict_reasons().end());
      absl::StrAppend(&entry.text, " (", absl::StrJoin(reasons, "; "), ")");
    }
    entries->push_back(std::move(entry));
  }
  MatchByKey(
      old_cert.phases(), new_cert.phases(), [](const v1::PhaseResult& p) { return p.name(); },
      [&](const std::string& name, const v1::PhaseResult* o, const v1::PhaseResult* n) {
        const std::string old_status = o == nullptr ? "absent" : checks::StatusText(o->status());
        const std::string new_status = n == nullptr ? "absent" : checks::StatusText(n->status());
        if (old_status == new_status) return;
        DiffEntry entry =
            MakeDiffEntry(DiffKind::kPhaseChanged, name, "status", old_status, new_status, {});
        entry.text = absl::StrCat("phase ", name, ": ", old_status, " -> ", new_status);
        if (n != nullptr && !n->detail().empty())
          absl::StrAppend(&entry.text, " (", n->detail(), ")");
        entries->push_back(std::move(entry));
      });

  const KeyedFindings old_findings = CollectFindings(old_cert);
  const KeyedFindings new_findings = CollectFindings(new_cert);
  auto lookup = [](const KeyedFindings& keyed, const std::string& key) -> const v1::Finding* {
    auto it = keyed.by_key.find(key);
    return it == keyed.by_key.end() ? nullptr : it->second;
  };
  for (const std::string& key : old_findings.order) {
    DiffFinding(key, lookup(old_findings, key), lookup(new_findings, key), entries);
  }
  for (const std::string& key : new_findings.order) {
    if (old_findings.by_key.count(key) == 0) {
      DiffFinding(key, nullptr, lookup(new_findings, key), entries);
    }
  }
}

// ---- pairs -------------------------------------------------------------

bool IsBandwidth(const v1::PairResult& pair) { return absl::EndsWith(pair.test(), "_bw"); }
bool IsLatency(const v1::PairResult& pair) { return absl::EndsWith(pair.test(), "_lat"); }

bool PairFailing(const v1::PairResult& pair) {
  return !pair.ok() || IsFailing(pair.verdict().status());
}

std::string CellValue(const v1::PairResult& pair) {
  return absl::StrCat(FormatDiffValue(pair.value()), " ", pair.unit());
}

// "0.04658 -> 0.084513 Gb/s"
std::string CellChange(const v1::PairResult& o, const v1::PairResult& n) {
  return absl::StrCat(FormatDiffValue(o.value()), " -> ", CellValue(n));
}

// Why a failing cell fails, in its own words.
std::string WhyFailing(const v1::PairResult& pair) {
  if (!pair.ok()) return absl::StrCat("failed: ", ClipText(pair.error(), 160));
  std::string why = absl::StrCat("verdict ", checks::StatusText(pair.verdict().status()), ": ",
                                 pair.verdict().observed());
  if (!pair.verdict().expected().empty()) {
    absl::StrAppend(&why, " (expected ", pair.verdict().expected(), ")");
  }
  return why;
}

void DiffPair(const std::string& key, const v1::PairResult& o, const v1::PairResult& n,
              double noise, std::vector<DiffEntry>* entries) {
  const std::vector<std::string> nodes = {n.client(), n.server()};
  const bool old_failing = PairFailing(o);
  const bool new_failing = PairFailing(n);
  const std::string field = o.ok() != n.ok() ? "ok" : "verdict";
  auto state = [](const v1::PairResult& p) {
    return p.ok() ? checks::StatusText(p.verdict().status()) : std::string("failed");
  };
  if (!old_failing && new_failing) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kPairFailed, key, field, state(o), state(n), nodes);
    SetDiffNumbers(entry, o.value(), n.value(), n.unit());
    entry.regression = !n.ok() || n.verdict().severity() != v1::Finding::warning;
    entry.text = n.ok() ? absl::StrCat(key, ": ", CellChange(o, n), ", ", WhyFailing(n))
                        : absl::StrCat(key, ": ok -> failed (was ", CellValue(o),
                                       "): ", ClipText(n.error(), 160));
    entries->push_back(std::move(entry));
    return;
  }
  if (old_failing && !new_failing) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kPairFixed, key, field, state(o), state(n), nodes);
    SetDiffNumbers(entry, o.value(), n.value(), n.unit());
    entry.improvement = true;
    entry.text =
        absl::StrCat(key, ": ", o.ok() ? checks::StatusText(o.verdict().status()) : "failed",
                     " -> ok, ", CellValue(n));
    entries->push_back(std::move(entry));
    return;
  }
  if (old_failing && new_failing) {
    DiffEntry entry =
        MakeDiffEntry(DiffKind::kPairStillFailing, key, field, state(o), state(n), nodes);
    entry.text = absl::StrCat(key, ": still ", WhyFailing(n));
    entries->push_back(std::move(entry));
    return;
  }
  if (o.value() <= 0 || (!IsBandwidth(o) && !IsLatency(o))) return;
  const double change = n.value() / o.value() - 1;
  if (std::fabs(change) <= noise) return;
  const bool bandwidth = IsBandwidth(o);
  DiffEntry entry =
      MakeDiffEntry(bandwidth ? DiffKind::kPairBandwidth : DiffKind::kPairLatency, key, "value",
                    FormatDiffValue(o.value()), FormatDiffValue(n.value()), nodes);
  SetDiffNumbers(entry, o.value(), n.value(), n.unit());
  // Less bandwidth, or more latency, than OLD beyond the band.
  entry.regression = bandwidth ? change < 0 : change > 0;
  entry.improvement = !entry.regression;
  entry.text = absl::StrCat(key, ": ", CellChange(o, n), " (", ChangePercent(change), ")");
  entries->push_back(std::move(entry));
}

void DiffPairs(const v1::Certificate& old_cert, const v1::Certificate& new_cert, double noise,
               std::vector<DiffEntry>* entries) {
  // Retests re-check a failing cell with another partner; they have no
  // counterpart to compare with, so only the main matrix is matched.
  MatchByKey(
      old_cert.pairs(), new_cert.pairs(),
      [](const v1::PairResult& p) { return p.retest_of().empty() ? PairKey(p) : std::string(); },
      [&](const std::string& key, const v1::PairResult* o, const v1::PairResult* n) {
        if (o != nullptr && n != nullptr) return DiffPair(key, *o, *n, noise, entries);
        const v1::PairResult& only = o != nullptr ? *o : *n;
        DiffEntry entry =
            MakeDiffEntry(o != nullptr ? DiffKind::kPairOnlyOld : DiffKind::kPairOnlyNew, key, "",
                          o != nullptr ? CellValue(*o) : "", n != nullptr ? CellValue(*n) : "",
                          {only.client(), only.server()});
        if (o != nullptr) {
          entry.text = absl::StrCat(key, ": only in OLD (", CellValue(*o), "); NEW did not run it");
        } else if (PairFailing(*n)) {
          // Its verdict is not in the findings section, so the cell carries it.
          entry.regression = !n->ok() || n->verdict().severity() != v1::Finding::warning;
          entry.text = absl::StrCat(key, ": only in NEW, ", WhyFailing(*n));
        } else {
          entry.text = absl::StrCat(key, ": only in NEW (", CellValue(*n), ")");
        }
        entries->push_back(std::move(entry));
      });
}

// ---- summary -----------------------------------------------------------

void DiffSuspects(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                  std::vector<DiffEntry>* entries) {
  MatchByKey(
      old_cert.suspects(), new_cert.suspects(),
      [](const v1::Suspect& s) {
        return s.rail().empty() ? (s.node().empty() ? "fabric" : s.node())
                                : absl::StrCat(s.node(), "/", s.rail());
      },
      [&](const std::string& key, const v1::Suspect* o, const v1::Suspect* n) {
        if (o != nullptr && n != nullptr) return;
        const v1::Suspect& only = o != nullptr ? *o : *n;
        DiffEntry entry =
            MakeDiffEntry(o != nullptr ? DiffKind::kSuspectRemoved : DiffKind::kSuspectAdded, key,
                          "", o != nullptr ? "suspect" : "", n != nullptr ? "suspect" : "",
                          only.node().empty() ? std::vector<std::string>{}
                                              : std::vector<std::string>{only.node()});
        entry.improvement = o != nullptr;
        entry.text = absl::StrCat(o != nullptr ? "no longer a suspect: " : "suspect in NEW: ", key,
                                  ": ", only.reason());
        entries->push_back(std::move(entry));
      });
}

bool IsPairSection(DiffKind kind) { return SectionOf(kind) == DiffSection::kPairs; }

// The hosts in more than half of the regressed pairs (both ends of a lone
// one): a bad NIC, cable or switch port shows on every pair that crosses it.
void ImplicateHosts(CertificateDiff& diff) {
  std::map<std::string, int> counts;
  int total = 0;
  for (const DiffEntry& entry : diff.entries) {
    if (!entry.regression || !IsPairSection(entry.kind)) continue;
    ++total;
    for (const std::string& node : std::set<std::string>(entry.nodes.begin(), entry.nodes.end())) {
      ++counts[node];
    }
  }
  diff.regressed_pairs = total;
  for (const auto& [node, count] : counts) {
    if (2 * count > total) diff.hosts.push_back({node, count, total});
  }
  std::stable_sort(diff.hosts.begin(), diff.hosts.end(),
                   [](const HostImplication& a, const HostImplication& b) {
                     return a.regressed_pairs > b.regressed_pairs;
                   });
}

// What regressed on `host`, without repeating the host: "rxe0 port 1
// rate_gbps", "port.rate@node3/rxe0:1", "not in NEW".
std::string RegressionWhat(const DiffEntry& entry, const std::string& host) {
  if (entry.kind == DiffKind::kNodeRemoved) return "not in NEW";
  if (entry.kind == DiffKind::kNodeReachability) return "unreachable";
  if (SectionOf(entry.kind) == DiffSection::kFindings) return entry.subject;
  std::string what = entry.subject;
  if (what == host) {
    what.clear();
  } else if (absl::StartsWith(what, host + " ")) {
    what = what.substr(host.size() + 1);
  }
  if (!entry.field.empty()) absl::StrAppend(&what, what.empty() ? "" : " ", entry.field);
  return what;
}

}  // namespace

// One case per kind, no default: -Wswitch flags a new DiffKind left without its name.
const char* DiffKindName(DiffKind kind) {
  switch (kind) {
    case DiffKind::kNodeAdded:
      return "node_added";
    case DiffKind::kNodeRemoved:
      return "node_removed";
    case DiffKind::kNodeReachability:
      return "node_reachability";
    case DiffKind::kComponentAdded:
      return "component_added";
    case DiffKind::kComponentRemoved:
      return "component_removed";
    case DiffKind::kIdentityChanged:
      return "identity_changed";
    case DiffKind::kFirmwareChanged:
      return "firmware_changed";
    case DiffKind::kLinkChanged:
      return "link_changed";
    case DiffKind::kPcieChanged:
      return "pcie_changed";
    case DiffKind::kSoftwareChanged:
      return "software_changed";
    case DiffKind::kConfigChanged:
      return "config_changed";
    case DiffKind::kVerdictChanged:
      return "verdict_changed";
    case DiffKind::kPhaseChanged:
      return "phase_changed";
    case DiffKind::kFindingAdded:
      return "finding_added";
    case DiffKind::kFindingFixed:
      return "finding_fixed";
    case DiffKind::kFindingStillFailing:
      return "finding_still_failing";
    case DiffKind::kPairFailed:
      return "pair_failed";
    case DiffKind::kPairFixed:
      return "pair_fixed";
    case DiffKind::kPairStillFailing:
      return "pair_still_failing";
    case DiffKind::kPairBandwidth:
      return "pair_bandwidth";
    case DiffKind::kPairLatency:
      return "pair_latency";
    case DiffKind::kPairOnlyOld:
      return "pair_only_old";
    case DiffKind::kPairOnlyNew:
      return "pair_only_new";
    case DiffKind::kSweepFailed:
      return "sweep_failed";
    case DiffKind::kSweepFixed:
      return "sweep_fixed";
    case DiffKind::kSweepStillFailing:
      return "sweep_still_failing";
    case DiffKind::kSweepBusbw:
      return "sweep_busbw";
    case DiffKind::kSweepSizes:
      return "sweep_sizes";
    case DiffKind::kSweepWrong:
      return "sweep_wrong";
    case DiffKind::kSweepTransport:
      return "sweep_transport";
    case DiffKind::kSweepOnlyOld:
      return "sweep_only_old";
    case DiffKind::kSweepOnlyNew:
      return "sweep_only_new";
    case DiffKind::kUplinkSizing:
      return "uplink_sizing";
    case DiffKind::kUplinkRunFailed:
      return "uplink_run_failed";
    case DiffKind::kUplinkRunFixed:
      return "uplink_run_fixed";
    case DiffKind::kUplinkThroughput:
      return "uplink_throughput";
    case DiffKind::kSuspectAdded:
      return "suspect_added";
    case DiffKind::kSuspectRemoved:
      return "suspect_removed";
  }
  return "unknown";
}

const char* DiffSectionName(DiffSection section) {
  switch (section) {
    case DiffSection::kInventory:
      return "inventory";
    case DiffSection::kFindings:
      return "findings";
    case DiffSection::kPairs:
      return "pairs";
    case DiffSection::kCollectives:
      return "collectives";
    case DiffSection::kUplink:
      return "uplink";
    case DiffSection::kSummary:
      return "summary";
  }
  return "unknown";
}

DiffSection SectionOf(DiffKind kind) {
  if (kind <= DiffKind::kConfigChanged) return DiffSection::kInventory;
  if (kind <= DiffKind::kFindingStillFailing) return DiffSection::kFindings;
  if (kind <= DiffKind::kPairOnlyNew) return DiffSection::kPairs;
  if (kind <= DiffKind::kSweepOnlyNew) return DiffSection::kCollectives;
  if (kind <= DiffKind::kUplinkThroughput) return DiffSection::kUplink;
  return DiffSection::kSummary;
}

std::string FormatDiffValue(double value) {
  if (value == 0) return "0";
  if (std::fabs(value) >= 100000) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.5g", value);
}

bool CertificateDiff::regressed() const { return regression_count() > 0; }

int CertificateDiff::regression_count() const {
  return static_cast<int>(std::count_if(entries.begin(), entries.end(),
                                        [](const DiffEntry& e) { return e.regression; }));
}

std::string CertificateDiff::Summary() const {
  const int count = regression_count();
  if (count == 0) return "no regression";
  std::vector<std::string> parts;
  for (const HostImplication& host : hosts) {
    parts.push_back(absl::StrCat(host.node, " is in ", host.regressed_pairs, " of ",
                                 host.total_regressed_pairs, " regressed pairs"));
  }
  if (regressed_pairs > 0 && hosts.empty()) {
    std::set<std::string> spread;
    for (const DiffEntry& entry : entries) {
      if (entry.regression && IsPairSection(entry.kind))
        spread.insert(entry.nodes.begin(), entry.nodes.end());
    }
    parts.push_back(absl::StrCat(regressed_pairs, " regressed pairs over ",
                                 absl::StrJoin(spread, ", "),
                                 ", no host in most of them (a switch or the fabric?)"));
  }
  // Other regressions: by host where they have one, else by subject.
  std::map<std::string, std::vector<std::string>> by_host;
  std::vector<std::string> host_order;
  for (const DiffEntry& entry : entries) {
    if (!entry.regression || IsPairSection(entry.kind)) continue;
    if (entry.kind == DiffKind::kVerdictChanged) {
      parts.push_back(absl::StrCat("verdict ", entry.old_value, " -> ", entry.new_value));
      continue;
    }
    const DiffSection section = SectionOf(entry.kind);
    if (section == DiffSection::kCollectives) {
      parts.push_back(absl::StrCat("sweep ", entry.subject, " ", entry.field));
      continue;
    }
    if (entry.nodes.empty()) {
      parts.push_back(entry.subject);
      continue;
    }
    const std::string& host = entry.nodes.front();
    std::string what = RegressionWhat(entry, host);
    if (by_host.find(host) == by_host.end()) host_order.push_back(host);
    by_host[host].push_back(std::move(what));
  }
  for (const std::string& host : host_order) {
    parts.push_back(absl::StrCat(host, ": ", absl::StrJoin(by_host[host], ", ")));
  }
  return absl::StrCat(count, " regression(s): ", absl::StrJoin(parts, "; "));
}

CertificateDiff DiffCertificates(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                                 const DiffOptions& options) {
  CertificateDiff diff;
  diff.old_side = {old_cert.cluster(), old_cert.plan_sha256(), old_cert.started_at(),
                   old_cert.verdict()};
  diff.new_side = {new_cert.cluster(), new_cert.plan_sha256(), new_cert.started_at(),
                   new_cert.verdict()};
  diff.noise_fraction = options.noise_fraction;
  if (old_cert.cluster() != new_cert.cluster()) {
    diff.warnings.push_back(absl::StrCat("the clusters differ: OLD is '", old_cert.cluster(),
                                         "', NEW is '", new_cert.cluster(),
                                         "'; nodes are matched by name"));
  }
  if (old_cert.plan_sha256() != new_cert.plan_sha256()) {
    diff.warnings.push_back(absl::StrCat(
        "the plans differ: thresholds may not be comparable (OLD plan_sha256 ",
        old_cert.plan_sha256().substr(0, 12), ", NEW ", new_cert.plan_sha256().substr(0, 12), ")"));
  }
  DiffNodeInventories(old_cert, new_cert, &diff.entries);
  DiffFindings(old_cert, new_cert, &diff.entries);
  DiffPairs(old_cert, new_cert, options.noise_fraction, &diff.entries);
  DiffCollectiveSweeps(old_cert, new_cert, options.noise_fraction, &diff.entries);
  DiffUplink(old_cert, new_cert, options.noise_fraction, &diff.entries);
  DiffSuspects(old_cert, new_cert, &diff.entries);
  ImplicateHosts(diff);
  return diff;
}

}  // namespace clustercert::controller
