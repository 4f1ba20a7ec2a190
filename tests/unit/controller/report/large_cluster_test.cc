// Issue 17, "reports for big clusters": above kMaxNodesForFullMatrix nodes
// each pair matrix is shown per node in report.html and report.md, linear in
// cells, with every failing cell in full; at and below it the heatmaps and
// tables stay. A 1,024-node ring used to give a 375 MB report.html.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/report/html_report.h"
#include "controller/report/markdown_report.h"
#include "controller/report/pair_matrices.h"
#include "controller/report/pair_summary.h"
#include "tests/unit/controller/report/report_test_support.h"
#include "tests/unit/controller/report/ring_certificate.h"

namespace clustercert::controller::report {
namespace {

using testing::CountOccurrences;
using testing::Element;
using ::testing::ElementsAre;
using testing::FailError;
using testing::FailLow;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ParseMarkup;
using testing::RingCertificate;

// Bytes per pair cell that a per-node summary may take, about twice what it
// takes: report.html's pairwise section about 120 and the whole page (bare
// nodes, no checks) about 200, report.md about 45, at 300 and 1,024 nodes.
// The N^2 heatmap took about 180 bytes per square, 90,000 squares a cell
// at 1,024 nodes in a ring.
constexpr size_t kPairwiseHtmlBytesPerCell = 250;
constexpr size_t kHtmlBytesPerCell = 400;
constexpr size_t kMarkdownBytesPerCell = 100;

// pairs() index of cell client -> server on the first rail of a ring.
int RingIndex(int client, int server) { return client < server ? 2 * client : 2 * server + 1; }

// n0200 fails both its cells as client (n0200 -> n0199 at 100 Gb/s, n0200 ->
// n0201 at 150); on the second rail n0010 -> n0011 did not run, with an
// error that tries markup.
constexpr char kHostileError[] = "<b>deadline</b> & \"peer\" stopped";
v1::Certificate RingWithFailures(int nodes) {
  v1::Certificate c = RingCertificate(nodes);
  FailLow(c, RingIndex(200, 199), 100);
  FailLow(c, RingIndex(200, 201), 150);
  FailError(c, 2 * nodes + RingIndex(10, 11), kHostileError);
  return c;
}

// Every <table> whose first two header cells read `first` and `second`.
std::vector<const Element*> TablesHeaded(const Element& root, const std::string& first,
                                         const std::string& second) {
  std::vector<const Element*> out;
  for (const auto* table : root.FindAll("table")) {
    auto heads = table->FindAll("th");
    if (heads.size() >= 2 && heads[0]->text == first && heads[1]->text == second) {
      out.push_back(table);
    }
  }
  return out;
}

// The <section id="pairwise"> of a report.
std::string PairwiseSection(const std::string& html) {
  const size_t begin = html.find("<section id=\"pairwise\">");
  const size_t end = html.find("</section>", begin);
  EXPECT_NE(end, std::string::npos);
  return html.substr(begin, end - begin);
}

// The direct text of each <td> of each body row.
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

size_t Heatmaps(const std::string& html) {
  return CountOccurrences(html, "<svg class=\"heatmap\"");
}

TEST(LargeCluster, HeatmapsStopAboveTheThreshold) {
  const v1::Certificate at = RingCertificate(kMaxNodesForFullMatrix);
  const v1::Certificate above = RingCertificate(kMaxNodesForFullMatrix + 1);
  for (const auto& m : GroupPairMatrices(at)) EXPECT_FALSE(ShownPerNode(m));
  for (const auto& m : GroupPairMatrices(above)) EXPECT_TRUE(ShownPerNode(m));

  const std::string small = RenderHtmlReport(at);
  EXPECT_EQ(Heatmaps(small), 2u);
  EXPECT_EQ(CountOccurrences(small, "data-cell"), static_cast<size_t>(at.pairs_size()));
  EXPECT_THAT(small, HasSubstr("<table class=\"matrix compact\">"));
  EXPECT_THAT(small, Not(HasSubstr("pairs.csv")));
  EXPECT_THAT(RenderMarkdownReport(at), HasSubstr("client rows \xC3\x97 server columns"));

  const std::string large = RenderHtmlReport(above);
  EXPECT_EQ(Heatmaps(large), 0u);
  EXPECT_EQ(CountOccurrences(large, "data-cell"), 0u);
  EXPECT_THAT(large, Not(HasSubstr("class=\"matrix")));
  EXPECT_EQ(CountOccurrences(large, "<a href=\"pairs.csv\">pairs.csv</a>"), 2u);
  EXPECT_THAT(RenderMarkdownReport(above), Not(HasSubstr("client rows \xC3\x97 server columns")));
}

TEST(LargeCluster, HtmlGrowsLinearlyWithCells) {
  const v1::Certificate c300 = RingWithFailures(300);
  const v1::Certificate c600 = RingWithFailures(600);
  const std::string html300 = RenderHtmlReport(c300);
  const std::string html600 = RenderHtmlReport(c600);
  EXPECT_LT(html300.size(), kHtmlBytesPerCell * c300.pairs_size()) << html300.size();
  EXPECT_LT(html600.size(), kHtmlBytesPerCell * c600.pairs_size()) << html600.size();
  const std::string pairwise = PairwiseSection(html300);
  EXPECT_LT(pairwise.size(), kPairwiseHtmlBytesPerCell * c300.pairs_size()) << pairwise.size();
  // Twice the nodes, twice the cells: about twice the bytes, not four times.
  EXPECT_LT(html600.size(), html300.size() * 22 / 10) << html300.size() << " " << html600.size();
  // A row per node and matrix (two rails) and per failing cell (three), and
  // a header row for each of the four tables: no N x N table.
  EXPECT_EQ(CountOccurrences(pairwise, "<tr>"), 2u * 300 + 3 + 4);
  EXPECT_EQ(CountOccurrences(pairwise, "<td"), 2u * 300 * 9 + 3 * 7);
}

TEST(LargeCluster, HtmlAtAThousandNodesIsUnderTenMegabytes) {
  const v1::Certificate c = RingWithFailures(1024);
  const std::string html = RenderHtmlReport(c);
  EXPECT_LT(html.size(), 10u << 20);
  EXPECT_LT(html.size(), kHtmlBytesPerCell * c.pairs_size()) << html.size();
  EXPECT_EQ(Heatmaps(html), 0u);
}

TEST(LargeCluster, HtmlListsEveryFailingCellInFullAndTheWorstNodeFirst) {
  const v1::Certificate c = RingWithFailures(300);
  const std::string html = RenderHtmlReport(c);
  auto root = ParseMarkup(html, /*html=*/true);
  ASSERT_NE(root, nullptr);
  for (const auto* a : root->FindAll("a")) {
    const std::string href = a->Attr("href");
    EXPECT_TRUE(absl::StartsWith(href, "#") || href == "pairs.csv") << href;
  }
  std::set<std::tuple<std::string, std::string, std::string>> listed;
  std::string error_text;
  for (const auto* table : TablesHeaded(*root, "client", "server")) {
    for (const auto& row : BodyRows(*table)) {
      ASSERT_EQ(row.size(), 7u);
      listed.insert({row[0], row[1], row[2]});
      if (row[4] == "ERR") error_text = row[6];
    }
  }
  EXPECT_THAT(listed, ElementsAre(std::tuple{"n0010", "n0011", "mlx5_1"},
                                  std::tuple{"n0200", "n0199", "mlx5_0"},
                                  std::tuple{"n0200", "n0201", "mlx5_0"}));
  EXPECT_EQ(error_text, kHostileError);
  EXPECT_THAT(html, Not(HasSubstr("<b>deadline")));

  const auto per_node = TablesHeaded(*root, "node", "cells as client");
  ASSERT_EQ(per_node.size(), 2u);  // one per rail
  const auto rows = BodyRows(*per_node[0]);
  ASSERT_EQ(rows.size(), 300u);
  ASSERT_EQ(rows[0].size(), 9u);
  // n0200: 2 cells as client, both failing, the worst 100 Gb/s against n0199.
  EXPECT_THAT(rows[0], ElementsAre("n0200", "2", "2", "100 Gb/s (25.0 %)", "n0199", "2", "0",
                                   ::testing::_, ::testing::_));
  EXPECT_EQ(rows[1][0], "n0199");  // its worst cell: 100 Gb/s, as server
  EXPECT_EQ(rows[2][0], "n0201");  // 150 Gb/s
  // The rest pass, lowest fraction of line rate first.
  for (size_t i = 4; i < rows.size(); ++i) {
    const double before = std::stod(std::min(rows[i - 1][3], rows[i - 1][7]));
    const double now = std::stod(std::min(rows[i][3], rows[i][7]));
    EXPECT_LE(before, now) << rows[i][0];
  }
}

TEST(LargeCluster, MarkdownSummarisesPerNodeAndListsTheFailingCells) {
  const v1::Certificate c300 = RingWithFailures(300);
  const std::string md300 = RenderMarkdownReport(c300);
  const std::string md600 = RenderMarkdownReport(RingWithFailures(600));
  EXPECT_LT(md300.size(), kMarkdownBytesPerCell * c300.pairs_size()) << md300.size();
  EXPECT_LT(md600.size(), md300.size() * 22 / 10) << md300.size() << " " << md600.size();
  size_t widest = 0;
  for (absl::string_view line : absl::StrSplit(md300, '\n')) {
    widest = std::max(widest, static_cast<size_t>(std::count(line.begin(), line.end(), '|')));
  }
  EXPECT_LE(widest, 10u);  // the per-node table's columns, not one per node
  EXPECT_THAT(md300, HasSubstr("every cell is in `pairs.csv`"));
  EXPECT_THAT(md300, HasSubstr("| n0200 | n0199 | mlx5_0 | host | 100 Gb/s (25.0 %) |"));
  EXPECT_THAT(md300, HasSubstr("| n0200 | n0201 | mlx5_0 | host | 150 Gb/s (37.5 %) |"));
  EXPECT_THAT(md300, HasSubstr("| n0010 | n0011 | mlx5_1 | host | ERR |"));
  EXPECT_THAT(md300, HasSubstr("&lt;b>deadline&lt;/b> &amp; \"peer\" stopped"));
  EXPECT_THAT(md300, Not(HasSubstr("<b>")));
  EXPECT_THAT(md300,
              HasSubstr("| n0200 | 2 | **2** | **100 Gb/s (25.0 %) \xE2\x9C\x97** | n0199 |"));
}

TEST(LargeCluster, UnscheduledNodesAreNamedNotDrawn) {
  v1::Certificate c = RingCertificate(40, {"mlx5_0"});
  c.add_nodes()->set_name("spare1");
  c.add_nodes()->set_name("spare2");
  const std::string html = RenderHtmlReport(c);
  EXPECT_THAT(html, HasSubstr("2 node(s) have no cell in this matrix: spare1, spare2"));
  EXPECT_THAT(RenderMarkdownReport(c),
              HasSubstr("2 node(s) have no cell in this matrix: spare1, spare2"));
}

}  // namespace
}  // namespace clustercert::controller::report
