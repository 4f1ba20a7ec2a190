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

// Renders the three reports and writes DIR/report.html, DIR/report.md and
// DIR/junit.xml (creating DIR), each through a .partial file renamed into
// place so a reader never sees half a report. Returns the three paths. An
// error names the path, the reason and the fix; files written before it
// stay.
absl::StatusOr<std::vector<std::string>> WriteReports(const v1::Certificate& certificate,
                                                      const std::string& dir);

}  // namespace clustercert::controller::report
