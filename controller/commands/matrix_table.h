#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// Renders the pairwise cells as one client x server matrix per test, rail and
// memory kind (value, '!' after a failing cell, ERR for a test that did not
// run, '.' where no test was scheduled), then the suspects with the inventory
// findings of each suspect node in triage order. A matrix of more than
// report::kMaxNodesForFullMatrix nodes would print N^2 cells (22 MB at 1,024
// nodes), so it is summarised instead: the kTerminalSummaryRows worst nodes
// with their cells as client and as server, the first kTerminalSummaryRows
// failing cells, and how many more of each are in `csv_path` (the pairs.csv
// written beside the reports; empty when it was not written, and the text
// then points at the certificate).
std::string RenderPairMatrices(const std::vector<std::string>& node_names,
                               const std::vector<v1::PairResult>& pairs,
                               const std::vector<v1::Suspect>& suspects, bool color,
                               const std::string& csv_path = "");

// Rows of each list a per-node summary prints before "... and K more".
inline constexpr size_t kTerminalSummaryRows = 20;

}  // namespace clustercert::controller
