#include "controller/report/pair_csv.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/text_escape.h"
#include "controller/checks/status_text.h"
#include "controller/report/pair_matrices.h"
#include "controller/report/pair_summary.h"
#include "controller/report/report_text.h"
#include "sweep/numbers.h"

namespace clustercert::controller::report {
namespace {

constexpr char kLineEnd[] = "\r\n";  // RFC 4180's record separator

// Why a cell that did not pass did not; empty for a pass, whose verdict
// only restates the value.
std::string Detail(const v1::PairResult& pair) {
  if (pair.ok() && CellStatus(pair) == v1::Finding::pass) return "";
  return CellDetailText(pair);
}

std::string Row(const v1::PairResult& pair, const v1::Certificate& certificate) {
  const CellScale scale = ScaleOf(pair, certificate);
  const std::vector<std::string> fields = {
      CsvField(pair.test()),
      CsvField(pair.rail()),
      CsvField(pair.memory()),
      CsvField(pair.client()),
      CsvField(pair.server()),
      pair.ok() ? sweep::ShortestText(pair.value()) : "",
      CsvField(pair.unit()),
      scale.ratio ? absl::StrFormat("%.6g", *scale.ratio) : "",
      scale.reference > 0 ? sweep::ShortestText(scale.reference) : "",
      checks::StatusText(CellStatus(pair)),
      absl::StrCat(pair.round()),
      CsvField(pair.retest_of()),
      IsCarried(pair.carried()) ? CsvField(pair.carried().from_started_at()) : "",
      CsvField(pair.gpu()),
      CsvField(pair.server_gpu()),
      CsvField(Detail(pair)),
  };
  return absl::StrCat(absl::StrJoin(fields, ","), kLineEnd);
}

}  // namespace

std::string CsvField(absl::string_view text) {
  std::string field = TerminalBlock(text);
  if (!field.empty() && (field[0] == '=' || field[0] == '+' || field[0] == '-' || field[0] == '@' ||
                         field[0] == '\t')) {
    field = absl::StrCat("'", field);
  }
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string RenderPairCsv(const v1::Certificate& certificate) {
  std::string out = absl::StrCat(kPairCsvHeader, kLineEnd);
  for (const auto& pair : certificate.pairs()) out += Row(pair, certificate);
  return out;
}

}  // namespace clustercert::controller::report
