#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// Small builders for the HTML report's markup. Text goes in through Text()
// and is always escaped; Html() is only for markup these builders made.

struct HtmlCell {
  std::string html;
  std::string css_class;
};

HtmlCell Text(absl::string_view text, absl::string_view css_class = "");
HtmlCell Html(std::string html, absl::string_view css_class = "");

// <table class=css_class><thead>headers</thead><tbody>rows</tbody></table>;
// header texts are escaped.
std::string HtmlTable(const std::vector<std::string>& headers,
                      const std::vector<std::vector<HtmlCell>>& rows,
                      absl::string_view css_class = "");

// A two-column table of label/value rows; rows with an empty value are left
// out.
std::string KeyValueTable(const std::vector<std::pair<std::string, std::string>>& rows);

// <span class="badge STATUS">LABEL</span>: pass, fail, unknown, skipped,
// warning... LABEL defaults to the status in capitals.
std::string Badge(absl::string_view status, absl::string_view label = "");

// The badge class and label for a finding's status and severity (a failing
// warning is "warn", not "fail").
std::string FindingBadge(v1::Finding::Status status, v1::Finding::Severity severity);

// A fragment id from free text: letters, digits, '-' and '_' kept, others
// replaced by '-'.
std::string Anchor(absl::string_view text);

}  // namespace clustercert::controller::report
