#pragma once

// Parser for nccl-tests' all_reduce_perf output (the external launcher):
// the '#' header lines, one data line per size, and the closing
// "# Avg bus bandwidth    : 12.3456" line.

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
  std::vector<std::string> errors;  // data lines that did not parse, with the line
};

NcclTestsRun ParseNcclTestsOutput(const std::string& text);

}  // namespace clustercert::sweep
