#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/report/pair_matrices.h"

namespace clustercert::controller::report {

// A large pair matrix read node by node instead of cell by cell. A client x
// server heatmap or table grows with N^2 while a ring or k-batch run measures
// a few cells per node, so at 1,024 nodes report.html reached 375 MB of
// mostly "not scheduled" squares and no browser opened it. Above
// kMaxNodesForFullMatrix every report (HTML, Markdown, terminal) shows one
// row per node (its cells as client and as server, the failing ones and the
// worst one with its partner), then every failing cell in full; the whole
// matrix is in the CSV beside the reports (pair_csv.h). Both are linear in
// cells.

// Why 32: up to 32 nodes a heatmap (1,024 squares of 14 px and more) fits a
// screen and stays readable, a matrix of that size is a few hundred KB of
// HTML even with every cell measured, and the existing small-cluster reports
// (lab and loopback certificates, 2-16 nodes) stay exactly as they were.
// From 64 nodes the squares either shrink below reading size or scroll off
// the page, and eight matrices (2 tests x 2 rails x 2 memory kinds) already
// weigh 6 MB, so the per-node view is the readable one anyway.
inline constexpr size_t kMaxNodesForFullMatrix = 32;

// Above the same number of nodes the reports stop listing every node's
// checks, inventory and skipped tests one by one (large_cluster.h): at 1,024
// nodes those listings made report.html 17 MB and the terminal 6 MB, almost
// all of it passing checks and inventories that read the same on every node.
// The same threshold so that one cluster gets one layout: either everything
// per node or everything summarised.
inline constexpr size_t kMaxNodesForPerNodeDetail = kMaxNodesForFullMatrix;

// True when the reports show `matrix` per node (more than
// kMaxNodesForFullMatrix rows and columns).
bool ShownPerNode(const PairMatrix& matrix);

// Failing as every report counts it: the verdict failed or the test did not
// run to the end.
bool IsFailingCell(const v1::PairResult& pair);

// One cell with the ratio the reports judge it by (CellScale::ratio).
struct ScaledCell {
  const v1::PairResult* pair = nullptr;
  std::optional<double> ratio;
};

// One node's cells in one role (as client, or as server).
struct RoleSummary {
  int cells = 0;
  int failing = 0;
  ScaledCell worst;  // pair is null when cells == 0
};

struct NodeSummary {
  std::string node;
  RoleSummary as_client;
  RoleSummary as_server;
};

struct MatrixSummary {
  std::vector<NodeSummary> nodes;          // nodes with a cell, worst first
  std::vector<std::string> without_cells;  // the matrix's nodes with no cell, in node order
  std::vector<ScaledCell> failing;         // every failing cell, by client then server
};

// One pass over the matrix's cells: no work per (client, server) pair that
// was not measured. `certificate` supplies line rates that only the
// inventory records (an empty one is fine: the ratio then comes from the
// pair's own fields and verdict). Nodes sort by failing cells (most first),
// then by their worst cell (failing, then unknown, then the lowest fraction
// of line rate or the highest fraction of the latency bound), then in the
// matrix's node order.
MatrixSummary SummariseMatrix(const PairMatrix& matrix, const v1::Certificate& certificate);

// True when `a` is a worse cell than `b` by the order above.
bool WorseCell(const ScaledCell& a, const ScaledCell& b, PairKind kind);

// "12.3 Gb/s (62 %)": the value, its unit and its ratio as a percentage when
// known; "ERR" for a test that did not run to the end. Raw text: each sink
// escapes it.
std::string CellValueText(const ScaledCell& cell);

// What the ratio is a fraction of: "line rate" or "bound".
std::string RatioBasis(PairKind kind);

// Why a cell failed: the error of a test that did not run to the end, else
// the verdict's message (which names the value and the floor or bound), else
// what the verdict observed and expected. Raw text.
std::string CellDetailText(const v1::PairResult& pair);

}  // namespace clustercert::controller::report
