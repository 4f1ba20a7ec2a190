#include "controller/commands/matrix_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"
#include "controller/checks/status_text.h"
#include "controller/report/pair_matrices.h"
#include "controller/report/pair_summary.h"

namespace clustercert::controller {
namespace {

using report::MatrixSummary;
using report::PairMatrix;
using report::RoleSummary;

// An error text longer than this is cut on the terminal; the CSV and the
// reports keep it whole.
constexpr size_t kDetailBytes = 160;

std::string Red(const std::string& text, bool color) {
  return color ? absl::StrCat("\033[31m", text, "\033[0m") : text;
}

std::string Cell(const v1::PairResult& pair, bool color) {
  if (!pair.ok()) return Red("ERR", color);
  std::string text = absl::StrFormat("%.2f", pair.value());
  const auto status = pair.verdict().status();
  if (status == v1::Finding::fail) text = Red(text + "!", color);
  return text;
}

size_t VisibleWidth(const std::string& text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\033') {
      while (i < text.size() && text[i] != 'm') ++i;
      continue;
    }
    ++width;
  }
  return width;
}

std::string PadLeft(const std::string& text, size_t width) {
  const size_t visible = VisibleWidth(text);
  return visible >= width ? text : std::string(width - visible, ' ') + text;
}

std::string PadRight(const std::string& text, size_t width) {
  const size_t visible = VisibleWidth(text);
  return visible >= width ? text : text + std::string(width - visible, ' ');
}

std::string Heading(const PairMatrix& m, const std::string& tail) {
  return absl::StrCat("pairwise ",
                      TerminalText(absl::StrCat(m.test, m.rail.empty() ? "" : " " + m.rail, " ",
                                                m.memory, " (", m.unit)),
                      tail, "\n");
}

// Up to report::kMaxNodesForFullMatrix nodes: every cell in a grid.
std::string FullMatrix(const PairMatrix& m, const std::vector<std::string>& node_names,
                       bool color) {
  // Names are looked up raw and shown neutralised; widths follow what shows.
  std::vector<std::string> shown;
  for (const auto& name : node_names) shown.push_back(TerminalText(name));
  size_t width = 8;
  for (const auto& name : shown) width = std::max(width, name.size() + 1);
  std::string out = Heading(m, ", client rows x server columns)");
  absl::StrAppend(&out, std::string(width, ' '));
  for (const auto& name : shown) absl::StrAppend(&out, PadLeft(name, width));
  out += "\n";
  for (size_t row = 0; row < node_names.size(); ++row) {
    const std::string& client = node_names[row];
    absl::StrAppend(&out, absl::StrFormat("%-*s", static_cast<int>(width), shown[row]));
    for (const auto& server : node_names) {
      auto it = m.cells.find({client, server});
      std::string cell = client == server ? "-" : ".";
      if (it != m.cells.end()) cell = Cell(*it->second, color);
      absl::StrAppend(&out, PadLeft(cell, width));
    }
    out += "\n";
  }
  out += "\n";
  return out;
}

// A role's cells, failing cells, worst cell and its partner, neutralised.
void AppendRole(const RoleSummary& role, bool as_client, bool color,
                std::vector<std::string>& row) {
  const auto* worst = role.worst.pair;
  const bool fails = worst != nullptr && report::IsFailingCell(*worst);
  row.push_back(absl::StrCat(role.cells));
  row.push_back(role.failing > 0 ? Red(absl::StrCat(role.failing), color) : "0");
  const std::string value = TerminalText(report::CellValueText(role.worst));
  row.push_back(fails ? Red(value, color) : value);
  row.push_back(worst == nullptr ? ""
                                 : TerminalText(as_client ? worst->server() : worst->client()));
}

// Columns padded to their widest cell, two blanks apart.
std::string Aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], VisibleWidth(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, i == 0 ? "" : "  ",
                      i + 1 == row.size() ? row[i] : PadRight(row[i], widths[i]));
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string NodeRows(const PairMatrix& m, const MatrixSummary& s, bool color,
                     const std::string& where) {
  const std::string basis = absl::StrCat("% of ", report::RatioBasis(m.kind));
  std::vector<std::vector<std::string>> rows = {
      {"node", "client cells", "failing", absl::StrCat("worst as client (", basis, ")"),
       "its server", "server cells", "failing", absl::StrCat("worst as server (", basis, ")"),
       "its client"}};
  const size_t shown = std::min(s.nodes.size(), kTerminalSummaryRows);
  for (size_t i = 0; i < shown; ++i) {
    std::vector<std::string> row = {TerminalText(s.nodes[i].node)};
    AppendRole(s.nodes[i].as_client, /*as_client=*/true, color, row);
    AppendRole(s.nodes[i].as_server, /*as_client=*/false, color, row);
    rows.push_back(std::move(row));
  }
  std::string out = Aligned(rows);
  if (s.nodes.size() > shown) {
    absl::StrAppend(&out, "  \xE2\x80\xA6 and ", s.nodes.size() - shown, " more nodes, all in ",
                    where, "\n");
  }
  return out;
}

std::string FailingRows(const MatrixSummary& s, bool color, const std::string& where) {
  if (s.failing.empty()) return "  no failing cell\n";
  std::string out = absl::StrCat("  failing cells (", s.failing.size(), "):\n");
  const size_t shown = std::min(s.failing.size(), kTerminalSummaryRows);
  for (size_t i = 0; i < shown; ++i) {
    const v1::PairResult& p = *s.failing[i].pair;
    const std::string detail = report::CellDetailText(p);
    const size_t cut = Utf8Prefix(detail, kDetailBytes);
    absl::StrAppend(
        &out, "    ",
        TerminalText(absl::StrCat(p.client(), " -> ", p.server(), " ", p.rail(), " ", p.memory())),
        ": ", Red(TerminalText(report::CellValueText(s.failing[i])), color), " (",
        checks::StatusText(report::CellStatus(p)), ") ", TerminalText(detail.substr(0, cut)),
        cut < detail.size() ? " \xE2\x80\xA6" : "", "\n");
  }
  if (s.failing.size() > shown) {
    absl::StrAppend(&out, "  \xE2\x80\xA6 and ", s.failing.size() - shown,
                    " more failing cells, all in ", where, "\n");
  }
  return out;
}

// Above report::kMaxNodesForFullMatrix nodes: the worst nodes and the first
// failing cells, capped, so stdout stays linear in what is shown.
std::string PerNode(const PairMatrix& m, bool color, const std::string& where) {
  // No inventory here: ratios come from each pair's own line rate or verdict.
  const MatrixSummary s = report::SummariseMatrix(m, v1::Certificate());
  std::string out =
      Heading(m, absl::StrCat("): ", m.nodes.size(), " nodes, ", m.cells.size(), " cells, ",
                              s.failing.size(), " failing; per node, worst first"));
  absl::StrAppend(&out, NodeRows(m, s, color, where), FailingRows(s, color, where));
  if (!s.without_cells.empty()) {
    absl::StrAppend(&out, "  ", s.without_cells.size(), " node(s) have no cell in this matrix\n");
  }
  out += "\n";
  return out;
}

std::string Suspects(const std::vector<v1::Suspect>& suspects) {
  std::string out;
  for (const auto& suspect : suspects) {
    std::string who = suspect.node().empty() ? std::string("the fabric") : suspect.node();
    if (!suspect.rail().empty()) absl::StrAppend(&who, "/", suspect.rail());
    absl::StrAppend(&out, "suspect ", TerminalText(who), ": ", suspect.failing_pairs(), " of ",
                    suspect.total_pairs(), " pair(s) failing. ", TerminalText(suspect.reason()),
                    "\n");
    for (const auto& finding : suspect.inventory_findings()) {
      absl::StrAppend(
          &out, "  - ",
          TerminalText(absl::StrCat(finding.id(), ": ", finding.message(), " ", finding.remedy())),
          "\n");
    }
  }
  if (!suspects.empty()) out += "\n";
  return out;
}

}  // namespace

std::string RenderPairMatrices(const std::vector<std::string>& node_names,
                               const std::vector<v1::PairResult>& pairs,
                               const std::vector<v1::Suspect>& suspects, bool color,
                               const std::string& csv_path) {
  const std::string where = csv_path.empty() ? "the certificate" : TerminalText(csv_path);
  std::string out;
  for (const auto& m : report::GroupPairMatrices(node_names, pairs)) {
    out += report::ShownPerNode(m) ? PerNode(m, color, where) : FullMatrix(m, node_names, color);
  }
  size_t retests = 0;
  for (const auto& pair : pairs) retests += pair.retest_of().empty() ? 0 : 1;
  if (retests > 0)
    absl::StrAppend(&out, retests, " retest(s) against passing partners are in the certificate.\n");
  out += Suspects(suspects);
  return out;
}

}  // namespace clustercert::controller
