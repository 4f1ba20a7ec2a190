#include "controller/report/markdown_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller::report {
namespace {

using ::testing::HasSubstr;
using testing::LoadFixture;
using ::testing::Not;

TEST(MarkdownReport, LabSlowedNamesTheFailingFindingsRemediesAndSuspect) {
  const std::string md = RenderMarkdownReport(LoadFixture("lab-slowed"));
  EXPECT_THAT(md, HasSubstr("NOT CERTIFIED: softroce-lab"));
  EXPECT_THAT(md, HasSubstr("## Reasons\n\n- 3 check(s) of severity error failed or are unknown"));
  EXPECT_THAT(md, HasSubstr("FAIL `pairwise.bandwidth@node2/rxe0`"));
  EXPECT_THAT(md, HasSubstr("FAIL `pairwise.bandwidth@node3/rxe0`"));
  EXPECT_THAT(md, HasSubstr("**Remedy:** A pair that cannot connect or stalls"));
  EXPECT_THAT(md, HasSubstr("## Suspects\n\n- **node3 rxe0**: 3 of 3 pair(s) failing."));
  // The matrix: values, and a cross on the failing cells.
  EXPECT_THAT(md, HasSubstr("### write_bw rxe0 host (Gb/s"));
  EXPECT_THAT(md,
              HasSubstr("| node1 | \xE2\x80\x94 | 0.091956 | **ERR \xE2\x9C\x97** | 0.084513 |"));
  EXPECT_THAT(md, HasSubstr("`node3->node1 rxe0 write_bw host retest of node2->node3`"));
  EXPECT_THAT(md, HasSubstr("| phase | `uplink` | the plan has no uplink section |"));
}

TEST(MarkdownReport, HealthyAndCollectivesSummaries) {
  const std::string healthy = RenderMarkdownReport(LoadFixture("lab-healthy"));
  EXPECT_THAT(healthy, HasSubstr("# \xE2\x9C\x85 CERTIFIED: softroce-lab"));
  EXPECT_THAT(healthy, HasSubstr("No check failed or stayed unknown."));
  EXPECT_THAT(healthy, Not(HasSubstr("## Suspects")));
  EXPECT_THAT(healthy, HasSubstr("### send_lat rxe0 host (us"));

  const std::string md = RenderMarkdownReport(LoadFixture("loopback-collectives"));
  EXPECT_THAT(md, HasSubstr("## Collectives"));
  EXPECT_THAT(md, HasSubstr("| 2-node | node1, node2 | gloo tcp | 4 | 0.095975 (from 64K) |"));
  EXPECT_THAT(md, HasSubstr("WARN `collectives.scaling@1-node -> 2-node`"));
  EXPECT_THAT(md, Not(HasSubstr("## Pairwise")));
}

TEST(MarkdownReport, TablesKeepTheirShapeAndTextCannotOpenHtml) {
  v1::Certificate certificate = LoadFixture("lab-slowed");
  certificate.mutable_findings(0)->set_message("<script>alert(1)</script>\nsecond line");
  certificate.mutable_findings(0)->set_observed("a `tick` here");
  certificate.mutable_pairs(0)->set_client("node|1");
  const std::string md = RenderMarkdownReport(certificate);
  EXPECT_THAT(md, Not(HasSubstr("<script>")));
  EXPECT_THAT(md, HasSubstr("&lt;script>alert(1)&lt;/script> second line"));
  EXPECT_THAT(md, HasSubstr("``a `tick` here``"));
  EXPECT_THAT(md, HasSubstr("node\\|1"));
  // Every row of every table has as many cells as its header.
  size_t header_cells = 0;
  for (absl::string_view line : absl::StrSplit(md, '\n')) {
    if (line.empty() || line[0] != '|') {
      header_cells = 0;
      continue;
    }
    size_t cells = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++cells;
    }
    if (header_cells == 0) header_cells = cells;
    EXPECT_EQ(cells, header_cells) << line;
  }
}

TEST(MarkdownReport, RendersAnEmptyCertificate) {
  const std::string md = RenderMarkdownReport(v1::Certificate());
  EXPECT_THAT(md, HasSubstr("NOT CERTIFIED"));
  EXPECT_THAT(md, HasSubstr("No check failed or stayed unknown."));
}

}  // namespace
}  // namespace clustercert::controller::report

namespace clustercert::controller::report {
namespace {

TEST(MarkdownReport, UplinkSectionHasTheSizingAndOneRowPerRun) {
  v1::Certificate c;
  v1::UplinkSizing& s = *c.mutable_uplink()->mutable_sizing();
  s.set_capacity_gbps(25);
  s.set_profile("llm-pretrain");
  s.set_required_gbps(4);
  s.set_required_gbytes_s(0.5);
  s.set_verdict(v1::UplinkSizing::fits);
  s.set_headroom_gbps(21);
  s.set_arithmetic("cluster read rate 4 Gb/s = 0.5 GB/s (llm-pretrain)");
  for (int flows : {1, 4}) {
    v1::UplinkThroughput& t = *c.mutable_uplink()->add_throughput();
    t.set_node("node1");
    t.set_target("storage1");
    t.set_target_type("agent");
    t.set_flows(flows);
    t.set_ok(flows == 1);
    if (flows == 1) t.set_aggregate_gbps(9.5);
    t.set_error(flows == 1 ? "" : "node1 connect: No route to host");
  }
  const std::string md = RenderMarkdownReport(c);
  EXPECT_THAT(md, HasSubstr("## Uplink"));
  EXPECT_THAT(md, HasSubstr("| required | 4 Gb/s (0.5 GB/s) |"));
  EXPECT_THAT(md, HasSubstr("**fits**"));
  EXPECT_THAT(md, HasSubstr("| node1 | `storage1` | agent | 1 | 9.5 |"));
  EXPECT_THAT(md, HasSubstr("| 4 | failed |"));
  EXPECT_THAT(md, HasSubstr("No route to host"));
  EXPECT_THAT(RenderMarkdownReport(LoadFixture("lab-healthy")), Not(HasSubstr("## Uplink")));
}

}  // namespace
}  // namespace clustercert::controller::report
