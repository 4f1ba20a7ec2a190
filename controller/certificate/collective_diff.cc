#include "controller/certificate/collective_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/certificate/diff_support.h"
#include "controller/collectives/collective_verdicts.h"

namespace clustercert::controller {
namespace {

std::string SweepLabel(const v1::CollectiveSweep& sweep) {
  return absl::StrCat(sweep.backend(), " ", sweep.transport(), ", ", sweep.ranks(), " ranks");
}

std::string SweepError(const v1::CollectiveSweep& sweep) {
  std::string error = sweep.error();
  if (!sweep.rank_errors().empty()) {
    absl::StrAppend(&error, error.empty() ? "" : "; ", sweep.rank_errors(0));
  }
  return ClipText(error);
}

std::vector<std::string> SweepNodes(const v1::CollectiveSweep& sweep) {
  return {sweep.nodes().begin(), sweep.nodes().end()};
}

// #wrong of a row, out-of-place and in-place (-1, not checked, counts 0).
int64_t WrongCount(const v1::CollectiveRow& row) {
  return std::max<int64_t>(0, row.oop_wrong()) +
         (row.has_in_place() ? std::max<int64_t>(0, row.ip_wrong()) : 0);
}

void DiffSweepRows(const std::string& scope, const v1::CollectiveSweep& o,
                   const v1::CollectiveSweep& n, double noise, std::vector<DiffEntry>* entries) {
  std::map<int64_t, const v1::CollectiveRow*> old_rows;
  for (const auto& row : o.rows()) old_rows.emplace(row.bytes(), &row);
  const v1::CollectiveRow* worst_old = nullptr;
  const v1::CollectiveRow* worst_new = nullptr;
  double worst = 0;
  int beyond = 0, compared = 0;
  int wrong_sizes = 0;
  std::string first_wrong;
  for (const auto& row : n.rows()) {
    auto it = old_rows.find(row.bytes());
    const v1::CollectiveRow* old_row = it == old_rows.end() ? nullptr : it->second;
    const int64_t wrong = WrongCount(row);
    const int64_t was_wrong = old_row == nullptr ? 0 : WrongCount(*old_row);
    if (wrong > 0 && was_wrong == 0) {
      if (wrong_sizes++ == 0) {
        first_wrong = absl::StrCat(row.bytes(), " B: ", was_wrong, " -> ", wrong);
      }
    }
    if (old_row == nullptr || old_row->oop_busbw_gbytes() <= 0) continue;
    const double change = row.oop_busbw_gbytes() / old_row->oop_busbw_gbytes() - 1;
    ++compared;
    if (change < -noise) ++beyond;
    if (worst_old == nullptr || change < worst) {
      worst = change;
      worst_old = old_row;
      worst_new = &row;
    }
  }
  if (wrong_sizes > 0) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kSweepWrong, scope, "wrong", "0",
                                    absl::StrCat(wrong_sizes), SweepNodes(n));
    entry.regression = true;
    entry.text = absl::StrCat(scope, " #wrong at ", wrong_sizes, " size(s) (first ", first_wrong,
                              "): the reduction returned wrong data: check GPU memory (dcgmi "
                              "diag) and the NICs' counters");
    entries->push_back(std::move(entry));
  }
  if (worst_old != nullptr && worst < -noise) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kSweepSizes, scope, "oop_busbw_gbytes",
                                    FormatDiffValue(worst_old->oop_busbw_gbytes()),
                                    FormatDiffValue(worst_new->oop_busbw_gbytes()), SweepNodes(n));
    SetDiffNumbers(entry, worst_old->oop_busbw_gbytes(), worst_new->oop_busbw_gbytes(), "GB/s");
    entry.text = absl::StrCat(scope, " per-size busbw: worst at ", worst_new->bytes(), " B ",
                              FormatDiffValue(worst_old->oop_busbw_gbytes()), " -> ",
                              FormatDiffValue(worst_new->oop_busbw_gbytes()), " GB/s (",
                              ChangePercent(worst), "); ", beyond, " of ", compared,
                              " size(s) fell beyond the band");
    entries->push_back(std::move(entry));
  }
}

void DiffSweep(const std::string& scope, const v1::CollectiveSweep& o, const v1::CollectiveSweep& n,
               double noise, std::vector<DiffEntry>* entries) {
  const std::vector<std::string> nodes = SweepNodes(n);
  auto ok_text = [](const v1::CollectiveSweep& s) { return s.ok() ? "ok" : "failed"; };
  if (o.ok() != n.ok() || (!o.ok() && !n.ok())) {
    const DiffKind kind = o.ok() ? DiffKind::kSweepFailed
                                 : (n.ok() ? DiffKind::kSweepFixed : DiffKind::kSweepStillFailing);
    DiffEntry entry = MakeDiffEntry(kind, scope, "ok", ok_text(o), ok_text(n), nodes);
    entry.regression = kind == DiffKind::kSweepFailed;
    entry.improvement = kind == DiffKind::kSweepFixed;
    if (kind == DiffKind::kSweepFailed) {
      entry.text = absl::StrCat(scope, " sweep ok -> failed: ", SweepError(n));
    } else if (kind == DiffKind::kSweepFixed) {
      entry.text = absl::StrCat(scope, " sweep failed -> ok (",
                                FormatDiffValue(n.large_busbw_gbytes()), " GB/s)");
    } else {
      entry.text = absl::StrCat(scope, " sweep still failing: ", SweepError(n));
    }
    entries->push_back(std::move(entry));
  }
  DiffSweepRows(scope, o, n, noise, entries);
  if (o.ok() && n.ok() && o.large_busbw_gbytes() > 0) {
    const double change = n.large_busbw_gbytes() / o.large_busbw_gbytes() - 1;
    if (std::fabs(change) > noise) {
      DiffEntry entry = MakeDiffEntry(DiffKind::kSweepBusbw, scope, "large_busbw_gbytes",
                                      FormatDiffValue(o.large_busbw_gbytes()),
                                      FormatDiffValue(n.large_busbw_gbytes()), nodes);
      SetDiffNumbers(entry, o.large_busbw_gbytes(), n.large_busbw_gbytes(), "GB/s");
      entry.regression = change < 0;
      entry.improvement = change > 0;
      entry.text = absl::StrCat(
          scope, " large-message busbw ", FormatDiffValue(o.large_busbw_gbytes()), " -> ",
          FormatDiffValue(n.large_busbw_gbytes()), " GB/s (", ChangePercent(change), ")");
      entries->push_back(std::move(entry));
    }
  }
  const std::string old_transport = absl::StrCat(
      o.transport(), o.nccl_transport().network().empty() ? "" : " ", o.nccl_transport().network());
  const std::string new_transport = absl::StrCat(
      n.transport(), n.nccl_transport().network().empty() ? "" : " ", n.nccl_transport().network());
  if (old_transport != new_transport) {
    DiffEntry entry = MakeDiffEntry(DiffKind::kSweepTransport, scope, "transport", old_transport,
                                    new_transport, nodes);
    entry.text = absl::StrCat(scope, " transport ", old_transport, " -> ", new_transport);
    entries->push_back(std::move(entry));
  }
}

}  // namespace

void DiffCollectiveSweeps(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                          double noise, std::vector<DiffEntry>* entries) {
  MatchByKey(
      old_cert.collectives(), new_cert.collectives(),
      // A 1-node sweep runs on every node: the node is part of its identity.
      [](const v1::CollectiveSweep& s) { return SweepName(s); },
      [&](const std::string& scope, const v1::CollectiveSweep* o, const v1::CollectiveSweep* n) {
        if (o != nullptr && n != nullptr) return DiffSweep(scope, *o, *n, noise, entries);
        // A sweep on one side only is listed; a failing NEW one is judged by
        // its collectives.* findings.
        const v1::CollectiveSweep& only = o != nullptr ? *o : *n;
        DiffEntry entry = MakeDiffEntry(
            o != nullptr ? DiffKind::kSweepOnlyOld : DiffKind::kSweepOnlyNew, scope, "",
            o != nullptr ? FormatDiffValue(o->large_busbw_gbytes()) : "",
            n != nullptr ? FormatDiffValue(n->large_busbw_gbytes()) : "", SweepNodes(only));
        entry.text = absl::StrCat(
            scope, " sweep only in ", o != nullptr ? "OLD" : "NEW", " (", SweepLabel(only), ", ",
            only.ok() ? absl::StrCat(FormatDiffValue(only.large_busbw_gbytes()), " GB/s")
                      : "failed",
            ")");
        entries->push_back(std::move(entry));
      });
}

}  // namespace clustercert::controller
