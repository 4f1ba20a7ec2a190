#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The file names WriteReports uses, in the order it returns them.
inline constexpr char kHtmlReportName[] = "report.html";
inline constexpr char kMarkdownReportName[] = "report.md";
inline constexpr char kJunitReportName[] = "junit.xml";
// Every pair cell (pair_csv.h); report.html and report.md link to it by this
// name, so it must sit beside them.
inline constexpr char kPairCsvName[] = "pairs.csv";
// The certificate as Prometheus metrics (prometheus_metrics.h), for
// node_exporter's textfile collector, which reads files named *.prom.
inline constexpr char kPrometheusName[] = "clustercert.prom";

// Renders the three reports, the pair CSV and the metrics and writes
// DIR/report.html, DIR/report.md, DIR/junit.xml, DIR/pairs.csv and
// DIR/clustercert.prom (creating DIR; the CSV is only its header when no pair
// ran), each through a .partial file renamed into place so a reader (a
// textfile collector included) never sees half a file. Returns the five paths. An
// error names the path, the reason and the fix; files written before it
// stay.
absl::StatusOr<std::vector<std::string>> WriteReports(const v1::Certificate& certificate,
                                                      const std::string& dir);

}  // namespace clustercert::controller::report
