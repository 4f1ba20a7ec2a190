#include "controller/report/html_large_cluster.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/report/html_inventory.h"
#include "controller/report/html_parts.h"
#include "controller/report/large_cluster.h"
#include "controller/report/pair_summary.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

// Distinct skip reasons shown in a check's row; the Skipped section has them all.
constexpr size_t kSkipReasonsShown = 3;
// Subjects named per skipped group; its count says how many there are.
constexpr size_t kSkipSubjectsShown = 10;

HtmlCell Count(int n, const char* css_class) {
  return Text(absl::StrCat(n), n > 0 ? css_class : "num");
}

std::string SkipReasonsText(const CheckTally& t) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < t.skip_reasons.size() && i < kSkipReasonsShown; ++i) {
    const auto& [reason, count] = t.skip_reasons[i];
    parts.push_back(absl::StrCat(reason, " (\xC3\x97", count, ")"));
  }
  if (t.skip_reasons.size() > kSkipReasonsShown) {
    parts.push_back(absl::StrCat("\xE2\x80\xA6 and ", t.skip_reasons.size() - kSkipReasonsShown,
                                 " other reason(s), under Skipped"));
  }
  return absl::StrJoin(parts, "; ");
}

std::string TallyTable(const std::vector<CheckTally>& tallies) {
  std::vector<std::vector<HtmlCell>> rows;
  rows.reserve(tallies.size());
  for (const auto& t : tallies) {
    rows.push_back({Text(t.id, "mono"), Text(absl::StrCat(t.nodes), "num"), Count(t.pass, "num"),
                    Count(t.warn, "warn"), Count(t.fail, "fail"), Count(t.unknown, "fail"),
                    Count(t.skipped, "num"), Text(SkipReasonsText(t))});
  }
  return HtmlTable(
      {"check", "nodes", "pass", "warn", "fail", "unknown", "skipped", "skipped because"}, rows,
      "compact");
}

// Every check that warned, failed or stayed unknown, in triage order.
std::string NotPassingTable(const std::vector<const v1::Finding*>& findings) {
  std::vector<std::vector<HtmlCell>> rows;
  rows.reserve(findings.size());
  for (const auto* f : findings) {
    rows.push_back({Html(FindingBadge(f->status(), f->severity())), Text(f->node()),
                    Text(KeyOf(*f), "mono"), Text(f->observed()), Text(f->expected()),
                    Text(f->message()), Text(f->remedy(), "remedy")});
  }
  return HtmlTable({"status", "node", "check", "observed", "expected", "message", "remedy"}, rows,
                   "compact");
}

// One row per node: what SharedInventoryHtml leaves out.
std::string IdentityTable(const v1::Certificate& c) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& node : c.nodes()) {
    std::string status =
        node.reachable() ? Badge("pass", "reachable") : Badge("fail", "unreachable");
    if (IsCarried(node.carried())) {
      absl::StrAppend(&status, " ", Badge("carried", CarriedText(node.carried())));
    }
    if (!node.reachable()) {
      absl::StrAppend(&status, " ", HtmlEscape(node.error().empty() ? "no answer" : node.error()));
    }
    const v1::Inventory& inv = node.inventory();
    std::string management = inv.management_address();
    if (!inv.management_netdev().empty())
      absl::StrAppend(&management, " on ", inv.management_netdev());
    rows.push_back({Text(node.name()), Html(status, node.reachable() ? "" : "error"),
                    Text(node.agent()), Text(inv.hostname()), Text(management),
                    Text(node.has_inventory() ? ClockErrorText(inv.clock()) : ""),
                    Text(ClockOffsetText(node))});
  }
  return HtmlTable(
      {"node", "status", "agent", "hostname", "management", "clock", "offset from controller"},
      rows, "compact");
}

struct InventoryGroup {
  std::string html;
  std::vector<std::string> nodes;
};

// Nodes whose shared view reads the same, the largest group first (the
// cluster's usual build), then in node order.
std::vector<InventoryGroup> GroupInventories(const v1::Certificate& c) {
  std::vector<InventoryGroup> groups;
  absl::flat_hash_map<std::string, size_t> index;
  for (const auto& node : c.nodes()) {
    std::string html = SharedInventoryHtml(node);
    auto [it, added] = index.try_emplace(html, groups.size());
    if (added) groups.push_back({std::move(html), {}});
    groups[it->second].nodes.push_back(node.name());
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.nodes.size() > b.nodes.size(); });
  return groups;
}

}  // namespace

std::string CheckTallyHtml(const v1::Certificate& c) {
  const std::vector<CheckTally> tallies = TallyChecks(c.checks());
  std::vector<const v1::Finding*> not_passing;
  for (const auto& t : tallies) {
    not_passing.insert(not_passing.end(), t.not_passing.begin(), t.not_passing.end());
  }
  std::stable_sort(not_passing.begin(), not_passing.end(),
                   [](const auto* a, const auto* b) { return TriageRank(*a) < TriageRank(*b); });
  std::string out = absl::StrCat(
      "<details><summary>All ", c.checks_size(), " checks evaluated: ", tallies.size(),
      " kind(s) of check on ", c.nodes_size(), " nodes, ", not_passing.size(),
      " did not pass</summary>\n<p class=\"muted\">More than ", kMaxNodesForPerNodeDetail,
      " nodes: checks are counted per kind, and every check that warned, failed or stayed "
      "unknown is listed in full below; each check is in the certificate.</p>\n"
      "<div class=\"scroll\">",
      TallyTable(tallies), "</div>\n");
  if (!not_passing.empty()) {
    absl::StrAppend(&out, "<h3>The ", not_passing.size(),
                    " check(s) that did not pass</h3>\n<div class=\"scroll\">",
                    NotPassingTable(not_passing), "</div>\n");
  }
  out += "</details>\n";
  return out;
}

std::string SkipGroupsHtml(const v1::Certificate& c) {
  const std::vector<SkipGroup> groups = GroupSkipped(c.skipped());
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& g : groups) {
    const size_t count = std::max<size_t>(g.subjects.size(), 1);
    rows.push_back({Text(g.kind), Text(g.what, "mono"), Text(g.reason),
                    Text(absl::StrCat(count), "num"), Text(absl::StrCat(g.nodes), "num"),
                    Text(NodeRanges(g.subjects, kSkipSubjectsShown), "mono")});
  }
  return absl::StrCat(
      "<p class=\"muted\">", c.skipped_size(), " skipped test(s) in ", groups.size(),
      " group(s): more than ", kMaxNodesForPerNodeDetail,
      " nodes, so each kind, check and reason is listed once with its count and "
      "its first ",
      kSkipSubjectsShown, " subjects; every entry is in the certificate.</p>\n",
      "<div class=\"scroll\">",
      HtmlTable({"kind", "what", "reason", "count", "nodes", "where"}, rows, "compact"),
      "</div>\n");
}

std::string GroupedNodesHtml(const v1::Certificate& c) {
  const std::vector<InventoryGroup> groups = GroupInventories(c);
  std::string out = absl::StrCat(
      "<p class=\"muted\">", c.nodes_size(), " nodes: more than ", kMaxNodesForPerNodeDetail,
      ", so what is each node's own is one row here, and the rest of the inventory is shown once "
      "for each of the ",
      groups.size(),
      " distinct inventories with the nodes that share it. IPv4 addresses, LIDs and GPU UUIDs "
      "are in the certificate.</p>\n<div class=\"scroll\">",
      IdentityTable(c), "</div>\n");
  for (size_t i = 0; i < groups.size(); ++i) {
    const InventoryGroup& g = groups[i];
    absl::StrAppend(&out, R"(<section class="node" id="inventory-)", i + 1, "\">\n<h3>Inventory ",
                    i + 1, " of ", groups.size(), " <span class=\"muted\">(", g.nodes.size(),
                    " node(s))</span></h3>\n<p class=\"mono\">", HtmlEscape(NodeRanges(g.nodes)),
                    "</p>\n", g.html, "</section>\n");
  }
  return out;
}

}  // namespace clustercert::controller::report
