#include "controller/report/html_incast.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/report/html_parts.h"
#include "controller/report/incast_rows.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {

std::string IncastSectionHtml(const v1::Certificate& c) {
  if (c.incast().empty()) return "";
  std::vector<std::vector<HtmlCell>> rows;
  for (const IncastRow& row : IncastRows(c)) {
    const v1::IncastResult& round = *row.round;
    std::string detail = row.verdict;
    if (!round.error().empty()) absl::StrAppend(&detail, "; ", round.error());
    for (const auto& sender : round.senders()) {
      if (!sender.ok() && !sender.error().empty()) {
        absl::StrAppend(&detail, "; ", sender.error());
      }
    }
    if (IsCarried(round.carried())) absl::StrAppend(&detail, "; ", CarriedText(round.carried()));
    rows.push_back(
        {Text(round.receiver()), Text(round.rail(), "mono"), Text(row.senders),
         Text(row.per_sender, "num"), Text(row.aggregate, "num"), Text(row.line_rate, "num"),
         Text(row.fairness, "num"),
         Html(row.findings.empty() ? Badge("unknown") : FindingBadge(row.status, row.severity)),
         Text(detail)});
  }
  return absl::StrCat(
      "<section id=\"incast\">\n<h2>Incast</h2>\n",
      "<p>k senders write to one receiver at once, each receiver in turn: the receiver's port "
      "is the congestion point, so PFC, ECN and DCQCN have to engage. The aggregate is judged "
      "against the receiver's line rate, the fairness is the slowest sender over the "
      "fastest.</p>\n",
      HtmlTable({"receiver", "rail", "senders", "per sender Gb/s", "aggregate Gb/s",
                 "line rate Gb/s", "fairness", "verdict", "detail"},
                rows, "compact"),
      "</section>\n");
}

}  // namespace clustercert::controller::report
