#include "controller/commands/finding_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"

namespace clustercert::controller {
namespace {

constexpr const char* kReset = "\033[0m";

const char* StatusColor(v1::Finding::Status status, v1::Finding::Severity severity) {
  if (status == v1::Finding::pass) return "\033[32m";
  if (status == v1::Finding::skipped) return "\033[90m";
  if (severity == v1::Finding::warning) return "\033[33m";
  return "\033[31m";
}

std::string StatusLabel(const v1::Finding& f) {
  if (f.status() == v1::Finding::pass) return "PASS";
  if (f.status() == v1::Finding::skipped) return "SKIP";
  if (f.status() == v1::Finding::unknown)
    return f.severity() == v1::Finding::warning ? "UNKNOWN?" : "UNKNOWN";
  return f.severity() == v1::Finding::warning ? "WARN" : "FAIL";
}

std::string Clip(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, Utf8Prefix(text, width - 1)) + "~";
}

// Every field of a finding can carry an agent's words (device names, VPD and
// nvidia-smi strings, error text): each is neutralised before it is padded,
// clipped or coloured, so widths count what the terminal shows.
struct Row {
  std::string id, device, observed, expected, message, remedy;
};

Row RowOf(const v1::Finding& f) {
  std::string device = "-";
  if (!f.device().empty()) {
    device = f.port() == 0 ? f.device() : absl::StrCat(f.device(), "/", f.port());
  }
  return {TerminalText(f.id()),       TerminalText(device),      TerminalText(f.observed()),
          TerminalText(f.expected()), TerminalText(f.message()), TerminalText(f.remedy())};
}

void RenderTable(std::string& out, const std::string& title,
                 const std::vector<const v1::Finding*>& rows, bool color) {
  out += title + "\n";
  std::vector<Row> texts;
  for (const auto* f : rows) texts.push_back(RowOf(*f));
  size_t id_w = 5, dev_w = 6, obs_w = 8;
  for (const Row& t : texts) {
    id_w = std::max(id_w, t.id.size());
    dev_w = std::max(dev_w, std::min<size_t>(t.device.size(), 24));
    obs_w = std::max(obs_w, std::min<size_t>(t.observed.size(), 40));
  }
  out += absl::StrFormat("  %-*s  %-*s  %-8s  %-*s  %s\n", id_w, "CHECK", dev_w, "DEVICE", "STATUS",
                         obs_w, "OBSERVED", "EXPECTED");
  for (size_t i = 0; i < rows.size(); ++i) {
    const v1::Finding* f = rows[i];
    const Row& t = texts[i];
    std::string label = StatusLabel(*f);
    std::string padded = absl::StrFormat("%-8s", label);
    if (color) padded = absl::StrCat(StatusColor(f->status(), f->severity()), padded, kReset);
    if (f->status() == v1::Finding::skipped) {
      // Not applicable: the reason is the whole story, no remedy below.
      out += absl::StrFormat("  %-*s  %-*s  %s  %s\n", id_w, t.id, dev_w, Clip(t.device, 24),
                             padded, t.message);
      continue;
    }
    out += absl::StrFormat("  %-*s  %-*s  %s  %-*s  %s\n", id_w, t.id, dev_w, Clip(t.device, 24),
                           padded, obs_w, Clip(t.observed, 40), t.expected);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i]->status() == v1::Finding::pass || rows[i]->status() == v1::Finding::skipped)
      continue;
    out += absl::StrCat("  - ", texts[i].message);
    if (!texts[i].remedy.empty()) out += absl::StrCat(" ", texts[i].remedy);
    out += "\n";
  }
  out += "\n";
}

}  // namespace

std::string RenderFindingTables(const std::vector<NodeState>& nodes,
                                const std::vector<v1::Finding>& checks, bool color) {
  std::string out;
  for (const NodeState& state : nodes) {
    std::vector<const v1::Finding*> rows;
    for (const auto& f : checks) {
      if (f.node() == state.node.name) rows.push_back(&f);
    }
    std::string title = absl::StrCat(state.node.name, "  (", state.node.agent);
    if (state.reachable) absl::StrAppend(&title, ", agent ", state.version.agent_version());
    absl::StrAppend(&title, ")");
    title = TerminalText(title);  // before the bold, which is ours
    if (color) title = absl::StrCat("\033[1m", title, kReset);
    RenderTable(out, title, rows, color);
  }
  std::vector<const v1::Finding*> cluster_rows;
  for (const auto& f : checks) {
    if (f.node().empty()) cluster_rows.push_back(&f);
  }
  if (!cluster_rows.empty())
    RenderTable(out, color ? "\033[1mcluster\033[0m" : "cluster", cluster_rows, color);
  return out;
}

}  // namespace clustercert::controller
