#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "controller/report/pair_matrices.h"

namespace clustercert::controller::report {

// report.html's view of one pair matrix too large for a heatmap
// (pair_summary.h): a line that links the CSV beside the report (the only
// link out of the page, and a file the operator already has), every failing
// cell in full (client, server, rail, memory, value, status, why), then one
// row per node, worst first, with its cells as client and as server. Linear
// in cells; unscheduled cells are not drawn at all. Every text from the
// certificate is HTML-escaped.
std::string PairSummaryHtml(const PairMatrix& matrix, const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
