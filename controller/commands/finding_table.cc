#include "controller/commands/finding_table.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"
#include "controller/report/large_cluster.h"
#include "controller/report/pair_summary.h"
#include "controller/report/report_text.h"

namespace clustercert::controller {
namespace {

constexpr const char* kReset = "\033[0m";

// Checks that did not pass printed above kMaxNodesForPerNodeDetail nodes:
// enough to see what went wrong where, a screenful, not a node's worth each.
constexpr size_t kNotPassingShown = 50;
// Unreachable nodes named in that layout before "… and K more".
constexpr size_t kUnreachableShown = 20;

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

std::string Colored(const std::string& text, const v1::Finding& f, bool color) {
  return color ? absl::StrCat(StatusColor(f.status(), f.severity()), text, kReset) : text;
}

// One row per check id with its counts, widest id first column.
void RenderTallies(std::string& out, const std::vector<report::CheckTally>& tallies) {
  size_t id_w = 5;
  std::vector<std::string> ids;
  for (const auto& t : tallies) {
    ids.push_back(TerminalText(t.id));
    id_w = std::max(id_w, ids.back().size());
  }
  out += absl::StrFormat("  %-*s  %5s  %6s  %5s  %5s  %7s  %5s\n", id_w, "CHECK", "NODES", "PASS",
                         "WARN", "FAIL", "UNKNOWN", "SKIP");
  for (size_t i = 0; i < tallies.size(); ++i) {
    const auto& t = tallies[i];
    out += absl::StrFormat("  %-*s  %5d  %6d  %5d  %5d  %7d  %5d\n", id_w, ids[i], t.nodes, t.pass,
                           t.warn, t.fail, t.unknown, t.skipped);
  }
  out += "\n";
}

// Every check that warned, failed or stayed unknown, worst first, the first
// kNotPassingShown of them in full.
void RenderNotPassing(std::string& out, const std::vector<report::CheckTally>& tallies,
                      bool color) {
  std::vector<const v1::Finding*> rows;
  for (const auto& t : tallies) rows.insert(rows.end(), t.not_passing.begin(), t.not_passing.end());
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return report::TriageRank(*a) < report::TriageRank(*b);
  });
  out += absl::StrCat(rows.size(), " check(s) did not pass:\n");
  for (size_t i = 0; i < rows.size() && i < kNotPassingShown; ++i) {
    const v1::Finding& f = *rows[i];
    out += absl::StrCat("  ", Colored(absl::StrFormat("%-8s", StatusLabel(f)), f, color), "  ",
                        TerminalText(report::KeyOf(f)), "  ", TerminalText(f.message()));
    if (!f.remedy().empty()) out += absl::StrCat(" ", TerminalText(f.remedy()));
    out += "\n";
  }
  if (rows.size() > kNotPassingShown) {
    out += absl::StrCat("  \xE2\x80\xA6 and ", rows.size() - kNotPassingShown,
                        " more; every check is in report.md and the certificate (or --json)\n");
  }
  out += "\n";
}

// Above kMaxNodesForPerNodeDetail nodes a table per node is megabytes of
// passing rows: the counts per check id, the unreachable nodes and the checks
// that did not pass instead.
std::string RenderCondensed(const std::vector<NodeState>& nodes,
                            const std::vector<v1::Finding>& checks, bool color) {
  std::vector<const v1::Finding*> pointers;
  pointers.reserve(checks.size());
  for (const auto& f : checks) pointers.push_back(&f);
  const std::vector<report::CheckTally> tallies = report::TallyChecks(pointers);
  std::string title = absl::StrCat(checks.size(), " checks on ", nodes.size(),
                                   " nodes, counted per check (more than ",
                                   report::kMaxNodesForPerNodeDetail, " nodes)");
  std::string out = color ? absl::StrCat("\033[1m", title, kReset, "\n") : title + "\n";
  RenderTallies(out, tallies);
  std::vector<std::string> unreachable;
  for (const NodeState& state : nodes) {
    if (!state.reachable) unreachable.push_back(state.node.name);
  }
  if (!unreachable.empty()) {
    out += absl::StrCat(unreachable.size(), " node(s) unreachable: ",
                        TerminalText(report::NodeRanges(unreachable, kUnreachableShown)), "\n\n");
  }
  RenderNotPassing(out, tallies, color);
  return out;
}

bool PassedOrSkipped(const v1::Finding& f) {
  return f.status() == v1::Finding::pass || f.status() == v1::Finding::skipped;
}

// Hidden rows tallied over every table, for the closing hint.
struct HiddenCount {
  int passed = 0;
  int skipped = 0;
};

// One node's (or the cluster's) checks: every row when `all_rows`, else
// the ones that did not pass under a title that counts the rest; a title
// alone when nothing else is left.
void RenderSection(std::string& out, const std::string& title,
                   const std::vector<const v1::Finding*>& rows, bool color, bool all_rows,
                   HiddenCount& hidden) {
  const auto bold = [color](const std::string& text) {
    return color ? absl::StrCat("\033[1m", text, kReset) : text;
  };
  if (all_rows) return RenderTable(out, bold(title), rows, color);
  std::vector<const v1::Finding*> shown;
  int passed = 0, skipped = 0;
  for (const v1::Finding* f : rows) {
    if (!PassedOrSkipped(*f)) {
      shown.push_back(f);
    } else {
      ++(f->status() == v1::Finding::pass ? passed : skipped);
    }
  }
  hidden.passed += passed;
  hidden.skipped += skipped;
  const std::string counted =
      absl::StrCat(bold(title), ": ", passed, " passed, ", skipped, " skipped");
  if (shown.empty()) {
    out += counted + "\n";
    return;
  }
  RenderTable(out, absl::StrCat(counted, ", ", shown.size(), " not passing:"), shown, color);
}

}  // namespace

std::string RenderFindingTables(const std::vector<NodeState>& nodes,
                                const std::vector<v1::Finding>& checks, bool color, bool all_rows) {
  if (report::CondensedForScale(nodes.size())) return RenderCondensed(nodes, checks, color);
  std::string out;
  HiddenCount hidden;
  for (const NodeState& state : nodes) {
    std::vector<const v1::Finding*> rows;
    for (const auto& f : checks) {
      if (f.node() == state.node.name) rows.push_back(&f);
    }
    std::string title = absl::StrCat(state.node.name, "  (", state.node.agent);
    if (state.reachable) absl::StrAppend(&title, ", agent ", state.version.agent_version());
    absl::StrAppend(&title, ")");
    // Neutralised before the bold, which is ours.
    RenderSection(out, TerminalText(title), rows, color, all_rows, hidden);
  }
  std::vector<const v1::Finding*> cluster_rows;
  for (const auto& f : checks) {
    if (f.node().empty()) cluster_rows.push_back(&f);
  }
  if (!cluster_rows.empty()) RenderSection(out, "cluster", cluster_rows, color, all_rows, hidden);
  if (hidden.passed + hidden.skipped > 0) {
    out += absl::StrCat("(", hidden.passed, " passed and ", hidden.skipped,
                        " skipped check(s) not listed: --verbose lists them; report.md and the "
                        "certificate hold every check)\n\n");
  }
  return out;
}

}  // namespace clustercert::controller
