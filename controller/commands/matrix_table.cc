#include "controller/commands/matrix_table.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"

namespace clustercert::controller {
namespace {

std::string Cell(const v1::PairResult& pair, bool color) {
  if (!pair.ok()) return color ? "\033[31mERR\033[0m" : "ERR";
  std::string text = absl::StrFormat("%.2f", pair.value());
  const auto status = pair.verdict().status();
  if (status == v1::Finding::fail) {
    text += "!";
    if (color) text = absl::StrCat("\033[31m", text, "\033[0m");
  }
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

}  // namespace

std::string RenderPairMatrices(const std::vector<std::string>& node_names,
                               const std::vector<v1::PairResult>& pairs,
                               const std::vector<v1::Suspect>& suspects, bool color) {
  // (test, rail, memory) -> (client, server) -> cell
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::map<std::pair<std::string, std::string>, const v1::PairResult*>> groups;
  std::map<Key, std::string> units;
  for (const auto& pair : pairs) {
    if (!pair.retest_of().empty()) continue;
    Key key{pair.test(), pair.rail(), pair.memory()};
    groups[key][{pair.client(), pair.server()}] = &pair;
    units[key] = pair.unit();
  }
  // Names are looked up raw and shown neutralised; widths follow what shows.
  std::vector<std::string> shown;
  for (const auto& name : node_names) shown.push_back(TerminalText(name));
  size_t width = 8;
  for (const auto& name : shown) width = std::max(width, name.size() + 1);

  std::string out;
  for (const auto& [key, cells] : groups) {
    const auto& [test, rail, memory] = key;
    absl::StrAppend(&out, "pairwise ",
                    TerminalText(absl::StrCat(test, rail.empty() ? "" : " " + rail, " ", memory,
                                              " (", units[key])),
                    ", client rows x server columns)\n");
    absl::StrAppend(&out, std::string(width, ' '));
    for (const auto& name : shown) absl::StrAppend(&out, PadLeft(name, width));
    out += "\n";
    for (size_t row = 0; row < node_names.size(); ++row) {
      const std::string& client = node_names[row];
      absl::StrAppend(&out, absl::StrFormat("%-*s", static_cast<int>(width), shown[row]));
      for (const auto& server : node_names) {
        auto it = cells.find({client, server});
        std::string cell = client == server ? "-" : ".";
        if (it != cells.end()) cell = Cell(*it->second, color);
        absl::StrAppend(&out, PadLeft(cell, width));
      }
      out += "\n";
    }
    out += "\n";
  }
  size_t retests = 0;
  for (const auto& pair : pairs) retests += pair.retest_of().empty() ? 0 : 1;
  if (retests > 0)
    absl::StrAppend(&out, retests, " retest(s) against passing partners are in the certificate.\n");
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

}  // namespace clustercert::controller
