#pragma once

// Parser for nccl-tests' output (the external launcher): the '#' header
// lines, one data line per size, and the closing
// "# Avg bus bandwidth    : 12.3456" line. It reads every published layout:
// before v2.13 (no root column, an "error" column, a blank redop in alltoall
// and no redop column in all_gather), v2.13 and later (redop, root, #wrong;
// "Group" in the device lines), "N/A" where the check is off (-c 0), one
// node or many. Tables from ../shared/realworld are asserted in
// tests/unit/realworld.

#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_row.h"

namespace clustercert::sweep {

struct NcclTestsRun {
  std::vector<SweepRow> rows;
  std::optional<double> average_busbw_gbps;  // "# Avg bus bandwidth"
  int64_t out_of_bounds = 0;                 // "# Out of bounds values : N OK|FAILED"
  int ranks = 0;                    // from "#  Rank  N Group ..." device lines; 0 when absent
  int nodes = 0;                    // distinct hosts ("on HOST") of those lines; 0 when absent
  std::vector<std::string> errors;  // data lines that did not parse, with the line
};

NcclTestsRun ParseNcclTestsOutput(const std::string& text);

// The mean bus bandwidth of `rows` as nccl-tests takes its average: every
// out-of-place and in-place busbw, zero-byte rows included. nullopt when
// there is no row. Against "# Avg bus bandwidth" it differs only by the
// table's rounding (busbw printed to 0.01).
std::optional<double> MeanBusBandwidthGbps(const std::vector<SweepRow>& rows);

}  // namespace clustercert::sweep
