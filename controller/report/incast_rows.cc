#include "controller/report/incast_rows.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/pairwise/incast_verdict.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {

std::string RoundLabelOf(const std::string& key) {
  const size_t at = key.find('@');
  if (at == std::string::npos) return "";
  std::string label = key.substr(at + 1);
  const size_t hash = label.rfind('#');
  if (hash != std::string::npos && hash + 1 < label.size()) {
    bool digits = true;
    for (size_t i = hash + 1; i < label.size(); ++i) {
      digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(label[i]));
    }
    if (digits) label.resize(hash);
  }
  return label;
}

namespace {

// Higher is worse.
int Rank(v1::Finding::Status status, v1::Finding::Severity severity) {
  switch (status) {
    case v1::Finding::fail:
      return severity == v1::Finding::warning ? 2 : 4;
    case v1::Finding::unknown:
      return 3;
    case v1::Finding::skipped:
      return 1;
    default:
      return 0;
  }
}

const char* RankWord(int rank) {
  switch (rank) {
    case 4:
      return "FAIL";
    case 3:
      return "UNKNOWN";
    case 2:
      return "WARN";
    case 1:
      return "SKIP";
    default:
      return "pass";
  }
}

IncastRow RowOf(const v1::IncastResult& round) {
  IncastRow row;
  row.round = &round;
  row.label = pairwise::IncastLabel(round);
  std::vector<std::string> senders;
  std::vector<std::string> rates;
  for (const auto& sender : round.senders()) {
    senders.push_back(sender.node());
    rates.push_back(
        absl::StrCat(sender.node(), " ", sender.ok() ? FormatNumber(sender.gbps()) : "ERR"));
  }
  row.senders = absl::StrJoin(senders, ", ");
  row.per_sender = absl::StrJoin(rates, ", ");
  row.aggregate = round.error().empty() ? FormatNumber(round.aggregate_gbps()) : "ERR";
  row.line_rate = round.line_rate_gbps() > 0 ? FormatNumber(round.line_rate_gbps()) : "unknown";
  row.fairness = absl::StrFormat("%.2f", round.fairness());
  return row;
}

}  // namespace

std::vector<IncastRow> IncastRows(const v1::Certificate& certificate) {
  std::vector<IncastRow> rows;
  rows.reserve(static_cast<size_t>(certificate.incast_size()));
  std::map<std::string, std::vector<size_t>> by_label;
  for (const auto& round : certificate.incast()) {
    rows.push_back(RowOf(round));
    by_label[rows.back().label].push_back(rows.size() - 1);
  }
  for (const auto& check : certificate.checks()) {
    auto found = by_label.find(RoundLabelOf(KeyOf(check)));
    if (found == by_label.end()) continue;
    for (size_t row : found->second) rows[row].findings.push_back(&check);
  }
  for (IncastRow& row : rows) {
    int worst = -1;
    std::vector<std::string> not_passing;
    for (const v1::Finding* finding : row.findings) {
      const int rank = Rank(finding->status(), finding->severity());
      const std::string text = absl::StrCat(RankWord(rank), " ", finding->id());
      if (rank > 0 &&
          std::find(not_passing.begin(), not_passing.end(), text) == not_passing.end()) {
        not_passing.push_back(text);
      }
      if (rank > worst) {
        worst = rank;
        row.status = finding->status();
        row.severity = finding->severity();
      }
    }
    if (worst < 0) {
      row.verdict = "UNKNOWN: no verdict recorded";
    } else if (worst == 0) {
      row.verdict = "pass";
    } else {
      row.verdict = absl::StrJoin(not_passing, "; ");
    }
  }
  return rows;
}

std::set<std::string> IncastLabels(const v1::Certificate& certificate) {
  std::set<std::string> labels;
  for (const auto& round : certificate.incast()) labels.insert(pairwise::IncastLabel(round));
  return labels;
}

}  // namespace clustercert::controller::report
