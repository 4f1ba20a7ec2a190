#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The certificate as one self-contained HTML5 page for people: the verdict
// and why, the run's provenance (plan, times, tool, signature, baseline), the
// failing findings with their remedies, where the failing pairs point, a
// heatmap and a value table per pair matrix (above kMaxNodesForFullMatrix
// nodes a per-node summary and every failing cell instead, pair_summary.h),
// latency figures, a busbw chart per collective scope, the phases, what was
// skipped, and each node's inventory (above kMaxNodesForPerNodeDetail nodes
// checks counted per check id, skipped tests grouped and each distinct
// inventory once, html_large_cluster.h). Inline CSS and SVG only: no script, no
// fonts, nothing fetched; the one link out of the page, only in a per-node
// summary, is the relative one to pairs.csv beside it. So it can be attached
// to a ticket or opened on an air-gapped host. Every text from the
// certificate is HTML-escaped.
std::string RenderHtmlReport(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
