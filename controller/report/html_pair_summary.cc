#include "controller/report/html_pair_summary.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/report/html_parts.h"
#include "controller/report/pair_summary.h"
#include "controller/report/report_files.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

HtmlCell Count(int n, bool bad) { return Text(absl::StrCat(n), bad && n > 0 ? "num fail" : "num"); }

HtmlCell Partner(const ScaledCell& worst, bool as_client) {
  if (worst.pair == nullptr) return Text("");
  return Text(as_client ? worst.pair->server() : worst.pair->client());
}

// The four cells of one role: how many, how many failing, the worst and
// its partner.
void AppendRole(const RoleSummary& role, bool as_client, std::vector<HtmlCell>& row) {
  const bool worst_fails = role.worst.pair != nullptr && IsFailingCell(*role.worst.pair);
  row.push_back(Count(role.cells, false));
  row.push_back(Count(role.failing, true));
  row.push_back(Text(CellValueText(role.worst), worst_fails ? "num fail" : "num"));
  row.push_back(Partner(role.worst, as_client));
}

std::string NodeTable(const PairMatrix& m, const MatrixSummary& summary) {
  const std::string basis = RatioBasis(m.kind);
  std::vector<std::vector<HtmlCell>> rows;
  rows.reserve(summary.nodes.size());
  for (const auto& node : summary.nodes) {
    std::vector<HtmlCell> row = {Text(node.node, "mono")};
    AppendRole(node.as_client, /*as_client=*/true, row);
    AppendRole(node.as_server, /*as_client=*/false, row);
    rows.push_back(std::move(row));
  }
  return HtmlTable(
      {"node", "cells as client", "failing", "worst as client (% of " + basis + ")", "its server",
       "cells as server", "failing", "worst as server (% of " + basis + ")", "its client"},
      rows, "compact");
}

std::string FailingTable(const MatrixSummary& summary) {
  std::vector<std::vector<HtmlCell>> rows;
  rows.reserve(summary.failing.size());
  for (const auto& cell : summary.failing) {
    const v1::PairResult& p = *cell.pair;
    std::string status = FindingBadge(CellStatus(p), p.verdict().severity());
    if (IsCarried(p.carried())) {
      absl::StrAppend(&status, " ", Badge("carried", CarriedText(p.carried())));
    }
    rows.push_back({Text(p.client(), "mono"), Text(p.server(), "mono"), Text(p.rail()),
                    Text(p.memory()), Text(CellValueText(cell), "num fail"), Html(status),
                    Text(CellDetailText(p))});
  }
  return HtmlTable({"client", "server", "rail", "memory", "value", "status", "why"}, rows,
                   "compact");
}

}  // namespace

std::string PairSummaryHtml(const PairMatrix& m, const v1::Certificate& certificate) {
  const MatrixSummary summary = SummariseMatrix(m, certificate);
  std::string out = absl::StrCat(
      "<p class=\"muted\">", m.nodes.size(), " nodes: more than ", kMaxNodesForFullMatrix,
      ", so this matrix is shown per node instead of as a client \xC3\x97 server heatmap. "
      "Every cell, with its value, ratio and status, is in <a href=\"",
      kPairCsvName, "\">", kPairCsvName, "</a> beside this report.</p>\n");
  if (summary.failing.empty()) {
    out += "<p>No cell failed.</p>\n";
  } else {
    absl::StrAppend(&out, "<p>", summary.failing.size(),
                    " failing cell(s), in full:</p>\n<div class=\"scroll\">", FailingTable(summary),
                    "</div>\n");
  }
  absl::StrAppend(&out, "<details open><summary>per node, worst first (", summary.nodes.size(),
                  " node(s) with a cell)</summary>\n<div class=\"scroll\">", NodeTable(m, summary),
                  "</div></details>\n");
  if (!summary.without_cells.empty()) {
    absl::StrAppend(&out, "<p class=\"muted\">", summary.without_cells.size(),
                    " node(s) have no cell in this matrix: ",
                    HtmlEscape(absl::StrJoin(summary.without_cells, ", ")), "</p>\n");
  }
  return out;
}

}  // namespace clustercert::controller::report
