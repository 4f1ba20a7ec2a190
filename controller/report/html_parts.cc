#include "controller/report/html_parts.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {

HtmlCell Text(absl::string_view text, absl::string_view css_class) {
  return {HtmlEscape(text), std::string(css_class)};
}

HtmlCell Html(std::string html, absl::string_view css_class) {
  return {std::move(html), std::string(css_class)};
}

std::string HtmlTable(const std::vector<std::string>& headers,
                      const std::vector<std::vector<HtmlCell>>& rows, absl::string_view css_class) {
  std::string out = css_class.empty()
                        ? std::string("<table>")
                        : absl::StrCat("<table class=\"", HtmlEscape(css_class), "\">");
  out += "<thead><tr>";
  for (const auto& header : headers) absl::StrAppend(&out, "<th>", HtmlEscape(header), "</th>");
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& cell : row) {
      if (cell.css_class.empty()) {
        absl::StrAppend(&out, "<td>", cell.html, "</td>");
      } else {
        absl::StrAppend(&out, "<td class=\"", HtmlEscape(cell.css_class), "\">", cell.html,
                        "</td>");
      }
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

std::string KeyValueTable(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<table class=\"kv\"><tbody>\n";
  for (const auto& [label, value] : rows) {
    if (value.empty()) continue;
    absl::StrAppend(&out, "<tr><th>", HtmlEscape(label), "</th><td>", HtmlEscape(value),
                    "</td></tr>\n");
  }
  out += "</tbody></table>\n";
  return out;
}

std::string Badge(absl::string_view status, absl::string_view label) {
  const std::string text = label.empty() ? absl::AsciiStrToUpper(status) : std::string(label);
  return absl::StrCat("<span class=\"badge ", Anchor(status), "\">", HtmlEscape(text), "</span>");
}

std::string FindingBadge(v1::Finding::Status status, v1::Finding::Severity severity) {
  if (status == v1::Finding::fail) {
    return severity == v1::Finding::warning ? Badge("warn") : Badge("fail");
  }
  if (status == v1::Finding::unknown) return Badge("unknown");
  if (status == v1::Finding::skipped) return Badge("skipped", "SKIP");
  if (status == v1::Finding::pass) return Badge("pass");
  return Badge("unknown", "?");
}

std::string Anchor(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += (std::isalnum(byte) || c == '-' || c == '_') ? c : '-';
  }
  return out;
}

}  // namespace clustercert::controller::report
