#include "controller/commands/matrix_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/report/pair_summary.h"
#include "tests/unit/controller/report/ring_certificate.h"

namespace clustercert::controller {
namespace {

using report::testing::FailLow;
using report::testing::RingCertificate;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Names(const v1::Certificate& c) {
  std::vector<std::string> names;
  for (const auto& node : c.nodes()) names.push_back(node.name());
  return names;
}

std::string Render(const v1::Certificate& c, bool color = false) {
  return RenderPairMatrices(Names(c), {c.pairs().begin(), c.pairs().end()}, {}, color,
                            "/certs/ring/pairs.csv");
}

v1::PairResult Cell(const std::string& client, const std::string& server, double gbps,
                    v1::Finding::Status status) {
  v1::PairResult p;
  p.set_test("write_bw");
  p.set_rail("mlx5_0");
  p.set_memory("host");
  p.set_client(client);
  p.set_server(server);
  p.set_ok(gbps >= 0);
  p.set_value(gbps);
  p.set_unit("Gb/s");
  p.mutable_verdict()->set_status(status);
  return p;
}

TEST(MatrixTable, ASmallClusterKeepsItsGrid) {
  const std::vector<v1::PairResult> pairs = {Cell("a", "b", 92.4, v1::Finding::pass),
                                             Cell("b", "a", -1, v1::Finding::fail),
                                             Cell("b", "c", 10, v1::Finding::fail)};
  EXPECT_EQ(RenderPairMatrices({"a", "b", "c"}, pairs, {}, false),
            "pairwise write_bw mlx5_0 host (Gb/s, client rows x server columns)\n"
            "               a       b       c\n"
            "a              -   92.40       .\n"
            "b            ERR       -  10.00!\n"
            "c              .       .       -\n"
            "\n");
}

TEST(MatrixTable, ALargeClusterIsAFewWorstNodesAndFailingCells) {
  v1::Certificate c = RingCertificate(300);
  for (int i = 0; i < 25; ++i) FailLow(c, 4 * i, 100 + i);  // n0000 -> n0001, n0002 -> n0003...
  const std::string out = Render(c);
  // Per rail: the 20 worst of 300 nodes, then the count of the rest.
  EXPECT_THAT(out, HasSubstr("pairwise write_bw mlx5_0 host (Gb/s): 300 nodes, 600 cells, 25 "
                             "failing; per node, worst first\n"));
  EXPECT_THAT(out, HasSubstr("\xE2\x80\xA6 and 280 more nodes, all in /certs/ring/pairs.csv\n"));
  EXPECT_THAT(out, HasSubstr("failing cells (25):\n"));
  EXPECT_THAT(out, HasSubstr("    n0000 -> n0001 mlx5_0 host: 100 Gb/s (25.0 %) (fail) "));
  EXPECT_THAT(out,
              HasSubstr("\xE2\x80\xA6 and 5 more failing cells, all in /certs/ring/pairs.csv\n"));
  EXPECT_THAT(out, HasSubstr("no failing cell"));  // mlx5_1
  // The first node row is the worst: n0000, failing as client at 100 Gb/s
  // against n0001 (n0001 ties with it on the same cell and comes after).
  const std::vector<std::string> lines = absl::StrSplit(out, '\n');
  ASSERT_GT(lines.size(), 3u);
  EXPECT_THAT(lines[1],
              HasSubstr("node   client cells  failing  worst as client (% of line rate)"));
  EXPECT_THAT(lines[2], HasSubstr("  n0000  2             1        100 Gb/s (25.0 %)"));
  EXPECT_THAT(lines[3], HasSubstr("  n0001  "));
  EXPECT_LT(lines.size(), 2u * (1 + 21 + 1 + 1 + 21 + 1 + 1));
}

TEST(MatrixTable, ALargeClusterPrintsAsMuchAtTwiceTheNodes) {
  const std::string nodes300 = Render(RingCertificate(300));
  const std::string nodes600 = Render(RingCertificate(600));
  EXPECT_LT(nodes300.size(), 8000u) << nodes300;
  EXPECT_LT(nodes600.size(), nodes300.size() + 20) << nodes600;
  EXPECT_THAT(nodes600, HasSubstr("\xE2\x80\xA6 and 580 more nodes"));
}

TEST(MatrixTable, LargeClusterNamesAreNeutralised) {
  v1::Certificate c = RingCertificate(report::kMaxNodesForFullMatrix + 1, {"mlx5_0"});
  const std::string evil = "evil\x1b[2J\x1b]0;pwned\x07";
  c.mutable_nodes(0)->set_name(evil);
  c.mutable_pairs(0)->set_client(evil);
  FailLow(c, 0, 1);
  for (bool color : {false, true}) {
    const std::string out = Render(c, color);
    EXPECT_THAT(out, HasSubstr("evil\\x1b[2J\\x1b]0;pwned\\x07"));
    EXPECT_THAT(out, Not(HasSubstr("\x1b[2J")));
    EXPECT_THAT(out, Not(HasSubstr("\x07")));
  }
  // Without a CSV the rest is in the certificate.
  const std::string no_csv =
      RenderPairMatrices(Names(c), {c.pairs().begin(), c.pairs().end()}, {}, false, "");
  EXPECT_THAT(no_csv, HasSubstr("more nodes, all in the certificate"));
}

}  // namespace
}  // namespace clustercert::controller
