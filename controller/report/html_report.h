#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The certificate as one self-contained HTML5 page for people: the verdict
// and why, the run's provenance (plan, times, tool, signature, baseline), the
// failing findings with their remedies, where the failing pairs point, a
// heatmap and a value table per pair matrix, latency figures, a busbw chart
// per collective scope, the phases, what was skipped, and each node's
// inventory. Inline CSS and SVG only: no script, no fonts, no links to
// anything outside the file, so it can be attached to a ticket or opened on
// an air-gapped host. Every text from the certificate is HTML-escaped.
std::string RenderHtmlReport(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
