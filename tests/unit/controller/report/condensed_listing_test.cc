// Issue 17, "reports for big clusters", item 3: above kMaxNodesForPerNodeDetail
// nodes report.html, report.md and the terminal count checks per check id,
// group inventories that read the same and skipped tests that share a reason,
// and still list every check that did not pass in full. A 1,024-node run
// gave a 17 MB report.html (9.3 MB of passing checks, 5.7 MB of identical
// inventories) and 6 MB of terminal tables.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/commands/finding_table.h"
#include "controller/report/html_report.h"
#include "controller/report/large_cluster.h"
#include "controller/report/markdown_report.h"
#include "controller/report/pair_summary.h"
#include "tests/unit/controller/report/large_certificate.h"
#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller::report {
namespace {

using testing::CountOccurrences;
using testing::Element;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::LargeCertificate;
using ::testing::Not;
using testing::ParseMarkup;
using testing::RingNodeName;
using ::testing::SizeIs;

constexpr char kEnDash[] = "\xE2\x80\x93";

// About twice what they take at 1,024 nodes: the whole page about 980 bytes
// a node (the ring's pair summaries most of it), the Findings, Skipped and
// Nodes sections about 300 (the identity row about 240, the rest shared),
// report.md about 180. The per-node listings took about 16 KB a node.
constexpr size_t kHtmlBytesPerNode = 2000;
constexpr size_t kListingHtmlBytesPerNode = 600;
constexpr size_t kMarkdownBytesPerNode = 350;
// The terminal's condensed summary does not grow with the nodes past the
// not-passing cap: a row per check id and at most 50 findings.
constexpr size_t kTerminalBytes = 16 << 10;

std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t from = text.find(begin);
  const size_t to = text.find(end, from);
  EXPECT_NE(from, std::string::npos) << begin;
  EXPECT_NE(to, std::string::npos) << end;
  return from == std::string::npos || to == std::string::npos ? "" : text.substr(from, to - from);
}

std::string ChecksPart(const std::string& html) {
  return Between(html, "<section id=\"findings\">", "<section id=\"localisation\">");
}
std::string SkippedPart(const std::string& html) {
  return Between(html, "<section id=\"skipped\">", "<section id=\"nodes\">");
}
std::string NodesPart(const std::string& html) {
  return Between(html, "<section id=\"nodes\">", "<footer>");
}

// Every <table> whose first header cells read `heads`.
std::vector<const Element*> TablesHeaded(const Element& root,
                                         const std::vector<std::string>& heads) {
  std::vector<const Element*> out;
  for (const auto* table : root.FindAll("table")) {
    auto th = table->FindAll("th");
    bool match = th.size() >= heads.size();
    for (size_t i = 0; match && i < heads.size(); ++i) match = th[i]->text == heads[i];
    if (match) out.push_back(table);
  }
  return out;
}

std::vector<std::vector<std::string>> BodyRows(const Element& table) {
  std::vector<std::vector<std::string>> rows;
  for (const auto* tbody : table.Children("tbody")) {
    for (const auto* tr : tbody->Children("tr")) {
      std::vector<std::string> row;
      for (const auto* td : tr->Children("td")) row.push_back(td->text);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// "n0001–n0003, n0007" -> n0001 n0002 n0003 n0007 (the ring's n%04d names).
std::vector<std::string> ExpandRanges(const std::string& text) {
  std::vector<std::string> names;
  for (absl::string_view item : absl::StrSplit(text, ", ")) {
    std::vector<std::string> ends = absl::StrSplit(item, kEnDash);
    if (ends.size() == 1) {
      names.push_back(ends[0]);
      continue;
    }
    int first = 0, last = 0;
    EXPECT_TRUE(absl::SimpleAtoi(absl::StripPrefix(ends[0], "n"), &first)) << item;
    EXPECT_TRUE(absl::SimpleAtoi(absl::StripPrefix(ends[1], "n"), &last)) << item;
    for (int i = first; i <= last; ++i) names.push_back(RingNodeName(i));
  }
  return names;
}

// Built once: a 1,024-node certificate takes a few seconds.
const v1::Certificate& Large1024() {
  static const v1::Certificate* c = new v1::Certificate(LargeCertificate(1024));
  return *c;
}

// Its report.html and report.md, rendered once per process too: a render is
// seconds under the sanitizers, whose builds run the suite as one process,
// and four tests read them.
const std::string& Large1024Html() {
  static const std::string* html = new std::string(RenderHtmlReport(Large1024()));
  return *html;
}
const std::string& Large1024Markdown() {
  static const std::string* md = new std::string(RenderMarkdownReport(Large1024()));
  return *md;
}

bool NotPassing(const v1::Finding& f) {
  return f.status() == v1::Finding::fail || f.status() == v1::Finding::unknown;
}

// The tally row of check `id` in the HTML: check, nodes, pass, warn, fail,
// unknown, skipped, skipped because.
std::vector<std::string> TallyRow(const Element& root, const std::string& id) {
  const auto tables = TablesHeaded(root, {"check", "nodes", "pass"});
  EXPECT_THAT(tables, SizeIs(1));
  if (tables.empty()) return {};
  for (auto& row : BodyRows(*tables[0])) {
    if (!row.empty() && row[0] == id) return row;
  }
  ADD_FAILURE() << "no row for " << id;
  return {};
}

TEST(CondensedListing, HtmlAtAThousandNodesIsUnderTenMegabytesAndLinear) {
  const v1::Certificate c512 = LargeCertificate(512);
  const v1::Certificate& c1024 = Large1024();
  const std::string html512 = RenderHtmlReport(c512);
  const std::string& html1024 = Large1024Html();
  const std::string& md1024 = Large1024Markdown();
  const size_t listing =
      ChecksPart(html1024).size() + SkippedPart(html1024).size() + NodesPart(html1024).size();
  std::cout << "1,024 nodes, " << c1024.checks_size() << " checks: report.html " << html1024.size()
            << " bytes (checks " << ChecksPart(html1024).size() << ", skipped "
            << SkippedPart(html1024).size() << ", nodes " << NodesPart(html1024).size()
            << "), report.md " << md1024.size() << " bytes\n";
  EXPECT_LT(html1024.size(), 10u << 20);
  EXPECT_LT(html1024.size(), kHtmlBytesPerNode * 1024) << html1024.size();
  EXPECT_LT(listing, kListingHtmlBytesPerNode * 1024) << listing;
  EXPECT_LT(md1024.size(), kMarkdownBytesPerNode * 1024) << md1024.size();
  // Twice the nodes: about twice the bytes.
  EXPECT_LT(html1024.size(), html512.size() * 22 / 10) << html512.size() << " " << html1024.size();
}

TEST(CondensedListing, EveryCheckThatDidNotPassIsListedInFull) {
  const v1::Certificate c = LargeCertificate(300);
  const std::string html = RenderHtmlReport(c);
  auto root = ParseMarkup(ChecksPart(html), /*html=*/true);
  ASSERT_NE(root, nullptr);
  std::map<std::string, const v1::Finding*> expected;
  for (const auto& f : c.checks()) {
    if (NotPassing(f)) expected[f.key()] = &f;
  }
  // n0007, n0107 and n0207 fail, n0013, n0063, ... n0263 warn, n0099's 44
  // checks stayed unknown.
  ASSERT_EQ(expected.size(), 3u + 6 + 44);
  const auto tables = TablesHeaded(*root, {"status", "node", "check"});
  ASSERT_THAT(tables, SizeIs(1));
  const auto rows = BodyRows(*tables[0]);
  ASSERT_EQ(rows.size(), expected.size());
  std::set<std::string> listed;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 7u);
    auto it = expected.find(row[2]);
    ASSERT_NE(it, expected.end()) << row[2];
    EXPECT_EQ(row[1], it->second->node());
    EXPECT_EQ(row[3], it->second->observed());
    EXPECT_EQ(row[5], it->second->message());
    EXPECT_EQ(row[6], it->second->remedy());
    listed.insert(row[2]);
  }
  EXPECT_EQ(listed.size(), expected.size());
  EXPECT_EQ(rows[0][2], "port.check03@n0007/mlx5_1:1");  // failures first
  EXPECT_THAT(html, Not(HasSubstr("<off>")));

  const std::string md = RenderMarkdownReport(c);
  for (const auto& [key, f] : expected) EXPECT_THAT(md, HasSubstr(absl::StrCat("`", key, "`")));
}

TEST(CondensedListing, ChecksAreCountedPerCheckId) {
  const std::string& html = Large1024Html();
  auto root = ParseMarkup(ChecksPart(html), /*html=*/true);
  ASSERT_NE(root, nullptr);
  // 2 rails x 1,024; 11 nodes fail it on mlx5_1 (n0007 .. n1007), n0099 did
  // not answer.
  EXPECT_THAT(TallyRow(*root, "port.check03"),
              ElementsAre("port.check03", "1024", "2035", "0", "11", "2", "0", ""));
  // 21 nodes warn (n0013 .. n1013).
  EXPECT_THAT(TallyRow(*root, "node.check05"),
              ElementsAre("node.check05", "1024", "1002", "21", "0", "1", "0", ""));
  EXPECT_THAT(TallyRow(*root, "qos.ecn"),
              ElementsAre("qos.ecn", "1024", "0", "0", "0", "0", "1024",
                          "plan sets fabric.roce.lossless: false. (\xC3\x97"
                          "1024)"));
  const auto tables = TablesHeaded(*root, {"check", "nodes", "pass"});
  ASSERT_THAT(tables, SizeIs(1));
  const auto rows = BodyRows(*tables[0]);
  EXPECT_EQ(rows.size(), 20u + 12 + 4);
  EXPECT_EQ(rows[0][0], "node.check00");  // unknown on n0099: the urgent ones first
  EXPECT_EQ(CountOccurrences(ChecksPart(html), "<tr>"), 1 + rows.size() + 1 + 11 + 21 + 44);

  const std::string& md = Large1024Markdown();
  EXPECT_THAT(md, HasSubstr("| `port.check03` | 1024 | 2035 | 0 | **11** | **2** | 0 |"));
  EXPECT_THAT(md, HasSubstr("| `qos.ecn` | 1024 | 0 | 0 | 0 | 0 | 1024 |"));
}

TEST(CondensedListing, InventoriesAreGroupedAndNameEveryNode) {
  const v1::Certificate& c = Large1024();
  const std::string nodes = NodesPart(Large1024Html());
  auto root = ParseMarkup(nodes, /*html=*/true);
  ASSERT_NE(root, nullptr);
  std::vector<std::vector<std::string>> groups;
  for (const auto* section : root->FindAll("section")) {
    if (section->Attr("class") != "node") continue;
    const auto lists = section->Children("p");
    ASSERT_FALSE(lists.empty());
    groups.push_back(ExpandRanges(lists[0]->text));
  }
  // The usual build, n0042 with a slower port, n0099 without an inventory.
  ASSERT_THAT(groups, SizeIs(3));
  EXPECT_THAT(groups[1], ElementsAre("n0042"));
  EXPECT_THAT(groups[2], ElementsAre("n0099"));
  std::multiset<std::string> named;
  for (const auto& g : groups) named.insert(g.begin(), g.end());
  std::multiset<std::string> all;
  for (const auto& node : c.nodes()) all.insert(node.name());
  EXPECT_EQ(named, all);
  EXPECT_EQ(CountOccurrences(nodes, absl::StrCat("n0000", kEnDash, "n0041, n0043")), 1u);
  EXPECT_EQ(CountOccurrences(nodes, "MLNX_OFED_LINUX-23.10-1.1.9.0"), 2u);
  EXPECT_EQ(CountOccurrences(nodes, "No inventory was collected from these nodes."), 1u);

  // What is each node's own, one row each, and nowhere else.
  const auto identity = TablesHeaded(*root, {"node", "status", "agent", "hostname"});
  ASSERT_THAT(identity, SizeIs(1));
  const auto rows = BodyRows(*identity[0]);
  ASSERT_EQ(rows.size(), 1024u);
  EXPECT_EQ(rows[5][3], "n0005.cluster.example");
  EXPECT_EQ(rows[99][1], " connect: connection refused");
  EXPECT_THAT(nodes, Not(HasSubstr("GPU-00000005")));
  EXPECT_LT(nodes.size(), kListingHtmlBytesPerNode * 1024);
}

TEST(CondensedListing, SkippedTestsAreGroupedByCheckAndReason) {
  auto root = ParseMarkup(SkippedPart(Large1024Html()), /*html=*/true);
  ASSERT_NE(root, nullptr);
  const auto tables = TablesHeaded(*root, {"kind", "what", "reason", "count"});
  ASSERT_THAT(tables, SizeIs(1));
  const auto rows = BodyRows(*tables[0]);
  ASSERT_EQ(rows.size(), 4u);
  // Ten subjects, then how many more; a run of node names in one item.
  EXPECT_THAT(
      rows[0],
      ElementsAre("check", "qos.ecn", "plan sets fabric.roce.lossless: false.", "1024", "1024",
                  "n0000/mlx5_0:1, n0001/mlx5_0:1, n0002/mlx5_0:1, n0003/mlx5_0:1, "
                  "n0004/mlx5_0:1, n0005/mlx5_0:1, n0006/mlx5_0:1, n0007/mlx5_0:1, "
                  "n0008/mlx5_0:1, n0009/mlx5_0:1, \xE2\x80\xA6 and 1014 more"));
  EXPECT_THAT(rows[2], ElementsAre("check", "clock.ntp", "plan sets expect.ntp_synced: false.",
                                   "1024", "1024", absl::StrCat("n0000", kEnDash, "n1023")));

  const std::string& md = Large1024Markdown();
  const std::string skipped = md.substr(md.find("## Skipped"));
  EXPECT_THAT(skipped, HasSubstr("| check | `gpu.count` | plan lists no GPUs for this node. | "
                                 "1024 | 1024 | n0000\xE2\x80\x93n1023 |"));
  EXPECT_EQ(CountOccurrences(skipped, "\n| check |"), 4u);
}

TEST(CondensedListing, AtTheThresholdEveryNodeIsListedAsBefore) {
  const v1::Certificate at = LargeCertificate(kMaxNodesForPerNodeDetail);
  const v1::Certificate above = LargeCertificate(kMaxNodesForPerNodeDetail + 1);
  const std::string small = RenderHtmlReport(at);
  EXPECT_EQ(CountOccurrences(small, "<section class=\"node\" id=\"node-"),
            kMaxNodesForPerNodeDetail);
  EXPECT_EQ(CountOccurrences(small, "<h3>Inventory "), 0u);
  EXPECT_THAT(small, HasSubstr(absl::StrCat("<details><summary>All ", at.checks_size(),
                                            " checks evaluated</summary>")));
  EXPECT_EQ(CountOccurrences(SkippedPart(small), "<tr>"), 1u + at.skipped_size());
  const std::string small_md = RenderMarkdownReport(at);
  EXPECT_THAT(small_md, Not(HasSubstr("## Checks")));
  EXPECT_EQ(CountOccurrences(small_md, "\n| check | `"), static_cast<size_t>(at.skipped_size()));

  const std::string large = RenderHtmlReport(above);
  EXPECT_EQ(CountOccurrences(large, "<section class=\"node\" id=\"node-"), 0u);
  EXPECT_EQ(CountOccurrences(large, "<h3>Inventory "), 1u);  // n0042 is past the end
  EXPECT_THAT(RenderMarkdownReport(above), HasSubstr("## Checks"));
}

std::vector<NodeState> RingNodes(const v1::Certificate& c) {
  std::vector<NodeState> nodes(c.nodes_size());
  for (int i = 0; i < c.nodes_size(); ++i) {
    nodes[i].node.name = c.nodes(i).name();
    nodes[i].node.agent = c.nodes(i).agent();
    nodes[i].reachable = c.nodes(i).reachable();
  }
  return nodes;
}

TEST(CondensedListing, TerminalCountsPerCheckAndCapsTheRest) {
  const v1::Certificate& c = Large1024();
  const std::vector<v1::Finding> checks(c.checks().begin(), c.checks().end());
  const std::string out = RenderFindingTables(RingNodes(c), checks, /*color=*/false);
  std::cout << "1,024 nodes: terminal check summary " << out.size() << " bytes\n";
  EXPECT_LT(out.size(), kTerminalBytes) << out;
  EXPECT_THAT(out, HasSubstr("1 node(s) unreachable: n0099\n"));
  EXPECT_THAT(out, HasSubstr("76 check(s) did not pass:\n"));
  size_t listed = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    for (const char* label : {"  FAIL ", "  WARN ", "  UNKNOWN "}) {
      listed += absl::StartsWith(line, label) ? 1 : 0;
    }
  }
  EXPECT_EQ(listed, 50u);
  EXPECT_THAT(out, HasSubstr("  FAIL      port.check03@n0007/mlx5_1:1  n0007 port.check03 is off"));
  EXPECT_THAT(out, HasSubstr("\xE2\x80\xA6 and 26 more; every check is in report.md"));
  EXPECT_THAT(out, HasSubstr("  port.check03        1024    2035      0     11        2      0\n"));
  EXPECT_THAT(out, Not(HasSubstr("n0500  (")));  // no table per node

  const v1::Certificate small = LargeCertificate(kMaxNodesForPerNodeDetail);
  const std::vector<v1::Finding> small_checks(small.checks().begin(), small.checks().end());
  const std::string tables = RenderFindingTables(RingNodes(small), small_checks, false);
  EXPECT_EQ(CountOccurrences(tables, "  CHECK "), kMaxNodesForPerNodeDetail);
  EXPECT_THAT(tables, HasSubstr("n0031  (10.1.0.32:7070"));
}

TEST(NodeRanges, JoinsConsecutiveNumbersOfTheSameWidth) {
  EXPECT_EQ(NodeRanges({"n0001", "n0002", "n0003", "n0005", "n0006", "gpu-a", "n0008"}),
            absl::StrCat("n0001", kEnDash, "n0003, n0005, n0006, gpu-a, n0008"));
  EXPECT_EQ(NodeRanges({"n9", "n10", "n11"}), "n9, n10, n11");  // widths differ
  EXPECT_EQ(NodeRanges({"a1", "b2", "b3", "b4"}), absl::StrCat("a1, b2", kEnDash, "b4"));
  EXPECT_EQ(NodeRanges({}), "");
  EXPECT_EQ(NodeRanges({"x", "y", "z"}, 2), "x, y, \xE2\x80\xA6 and 1 more");
  EXPECT_EQ(NodeRanges({"n01", "n02", "n03", "n05"}, 1),
            absl::StrCat("n01", kEnDash, "n03, \xE2\x80\xA6 and 1 more"));
}

TEST(SharedReason, TakesOffOnlyTheWholeNodeName) {
  EXPECT_EQ(SharedReason("node1 rxe0 port 1: plan sets X.", "node1"), "plan sets X.");
  EXPECT_EQ(SharedReason("node1: plan sets X.", "node1"), "plan sets X.");
  EXPECT_EQ(SharedReason("node10: plan sets X.", "node1"), "node10: plan sets X.");
  EXPECT_EQ(SharedReason("plan sets X: for all.", "node1"), "plan sets X: for all.");
  EXPECT_EQ(SharedReason("node1 did not answer", "node1"), "node1 did not answer");
}

}  // namespace
}  // namespace clustercert::controller::report
