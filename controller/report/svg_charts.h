#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "controller/report/pair_matrices.h"

namespace clustercert::controller::report {

// Inline SVG for the HTML report: a heatmap per pair matrix and a busbw
// line chart per collective sweep. No xmlns, fonts or links: the SVG lives
// inside the HTML document and needs nothing from outside it.

// Colours the heatmap and its legend share.
inline constexpr char kFailColor[] = "#d7301f";
inline constexpr char kUnknownColor[] = "#b0b0b0";
inline constexpr char kSkippedColor[] = "#dcdcdc";
inline constexpr char kNotScheduledColor[] = "#f4f4f4";
inline constexpr char kDiagonalColor[] = "#e2e2e2";

// A passing cell's colour: t = 0 at the plan's floor (amber), 1 at line rate
// or zero latency (green).
std::string PassColor(double t);

// The colour of one cell from its status and scale.
std::string CellColor(const v1::PairResult& pair, const CellScale& scale);

// The hover text of one cell: value, scale, status, the verdict's message.
std::string CellTitle(const v1::PairResult& pair, const CellScale& scale);

// <svg class="heatmap">: client rows x server columns; every measured cell
// a <rect data-cell> with a <title>; the diagonal and unscheduled cells are
// plain rects without data-cell. Failing cells are red with a heavy border
// and a cross.
std::string HeatmapSvg(const PairMatrix& matrix, const v1::Certificate& certificate);

// <svg class="busbw-chart">: busbw (GB/s) against message size on a log2
// axis, out-of-place and in-place series, the plan's floor when it has one
// and the size from which the "large" figure is taken. Empty when the sweep
// has no rows.
std::string BusbwChartSvg(const v1::CollectiveSweep& sweep);

}  // namespace clustercert::controller::report
