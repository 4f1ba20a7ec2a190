#include "controller/report/pair_summary.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

// 0 failing, 1 unknown, 2 anything else (pass, skipped).
int Rank(const v1::PairResult& pair) {
  if (IsFailingCell(pair)) return 0;
  return CellStatus(pair) == v1::Finding::unknown ? 1 : 2;
}

void Add(RoleSummary& role, const ScaledCell& cell, PairKind kind) {
  ++role.cells;
  if (IsFailingCell(*cell.pair)) ++role.failing;
  if (role.worst.pair == nullptr || WorseCell(cell, role.worst, kind)) role.worst = cell;
}

// The worse of a node's two worst cells; pair is null when it has none.
ScaledCell WorstOf(const NodeSummary& node, PairKind kind) {
  const ScaledCell& client = node.as_client.worst;
  const ScaledCell& server = node.as_server.worst;
  if (client.pair == nullptr) return server;
  if (server.pair == nullptr) return client;
  return WorseCell(server, client, kind) ? server : client;
}

// Worst first: more failing cells, then the worse worst cell; stable_sort
// keeps the matrix's node order among equals.
void SortWorstFirst(std::vector<NodeSummary>& nodes, PairKind kind) {
  std::stable_sort(nodes.begin(), nodes.end(), [kind](const NodeSummary& a, const NodeSummary& b) {
    const int failing_a = a.as_client.failing + a.as_server.failing;
    const int failing_b = b.as_client.failing + b.as_server.failing;
    if (failing_a != failing_b) return failing_a > failing_b;
    return WorseCell(WorstOf(a, kind), WorstOf(b, kind), kind);
  });
}

}  // namespace

bool ShownPerNode(const PairMatrix& matrix) { return matrix.nodes.size() > kMaxNodesForFullMatrix; }

bool IsFailingCell(const v1::PairResult& pair) {
  return CellStatus(pair) == v1::Finding::fail || !pair.ok();
}

bool WorseCell(const ScaledCell& a, const ScaledCell& b, PairKind kind) {
  if (a.pair == nullptr || b.pair == nullptr) return a.pair != nullptr && b.pair == nullptr;
  if (Rank(*a.pair) != Rank(*b.pair)) return Rank(*a.pair) < Rank(*b.pair);
  if (a.pair->ok() != b.pair->ok()) return !a.pair->ok();
  if (!a.pair->ok()) return false;  // neither ran: equal
  // Ratios compare cells judged against different line rates; values are
  // the fallback when either lacks one.
  const bool ratios = a.ratio.has_value() && b.ratio.has_value();
  const double x = ratios ? *a.ratio : a.pair->value();
  const double y = ratios ? *b.ratio : b.pair->value();
  return kind == PairKind::kLatency ? x > y : x < y;
}

MatrixSummary SummariseMatrix(const PairMatrix& matrix, const v1::Certificate& certificate) {
  std::map<std::string, NodeSummary> by_node;
  MatrixSummary out;
  for (const auto& [ends, pair] : matrix.cells) {
    const ScaledCell cell{pair, ScaleOf(*pair, certificate).ratio};
    Add(by_node[ends.first].as_client, cell, matrix.kind);
    Add(by_node[ends.second].as_server, cell, matrix.kind);
    if (IsFailingCell(*pair)) out.failing.push_back(cell);
  }
  for (const auto& name : matrix.nodes) {
    auto it = by_node.find(name);
    if (it == by_node.end()) {
      out.without_cells.push_back(name);
      continue;
    }
    it->second.node = name;
    out.nodes.push_back(std::move(it->second));
  }
  SortWorstFirst(out.nodes, matrix.kind);
  return out;
}

std::string CellValueText(const ScaledCell& cell) {
  if (cell.pair == nullptr) return "";
  if (!cell.pair->ok()) return "ERR";
  std::string text = absl::StrCat(FormatNumber(cell.pair->value()), " ", cell.pair->unit());
  if (cell.ratio) absl::StrAppend(&text, " (", ShortNumber(*cell.ratio * 100), " %)");
  return text;
}

std::string RatioBasis(PairKind kind) { return kind == PairKind::kLatency ? "bound" : "line rate"; }

std::string CellDetailText(const v1::PairResult& pair) {
  const v1::Finding& verdict = pair.verdict();
  if (!pair.ok() && !pair.error().empty()) return pair.error();
  if (!verdict.message().empty()) return verdict.message();
  if (!pair.ok()) return "the test did not run to the end";
  return absl::StrCat("observed ", verdict.observed(), "; expected ", verdict.expected());
}

}  // namespace clustercert::controller::report
