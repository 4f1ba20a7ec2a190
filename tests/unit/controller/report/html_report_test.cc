#include "controller/report/html_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "controller/report/pair_matrices.h"
#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller::report {
namespace {

using testing::CountOccurrences;
using testing::Element;
using testing::FixtureNames;
using ::testing::HasSubstr;
using testing::LoadFixture;
using testing::MeasuredCells;
using ::testing::Not;
using testing::ParseMarkup;

size_t CountDataCells(const Element& root) {
  size_t n = 0;
  for (const auto* rect : root.FindAll("rect")) n += rect->attributes.count("data-cell");
  return n;
}

TEST(HtmlReport, IsSelfContainedAndWellFormedOnEveryFixture) {
  for (const auto& name : FixtureNames()) {
    SCOPED_TRACE(name);
    const std::string html = RenderHtmlReport(LoadFixture(name));
    EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
    for (const char* external : {"http://", "https://", "<link", "src=", "<script", "@import",
                                 "url(", "//cdn", "xlink:href"}) {
      EXPECT_THAT(html, Not(HasSubstr(external))) << external;
    }
    // Every href is a fragment of this page.
    auto root = ParseMarkup(html, /*html=*/true);
    ASSERT_NE(root, nullptr);
    for (const auto* a : root->FindAll("a")) {
      EXPECT_TRUE(absl::StartsWith(a->Attr("href"), "#")) << a->Attr("href");
    }
    EXPECT_EQ(root->FindAll("style").size(), 1u);
  }
}

TEST(HtmlReport, OneDataCellPerMeasuredPairAndOneHeatmapPerMatrix) {
  for (const auto& name : FixtureNames()) {
    SCOPED_TRACE(name);
    const v1::Certificate certificate = LoadFixture(name);
    const std::string html = RenderHtmlReport(certificate);
    auto root = ParseMarkup(html, true);
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(CountDataCells(*root), MeasuredCells(certificate));
    // The string itself, as the chromium check counts it in the DOM dump.
    EXPECT_EQ(CountOccurrences(html, "data-cell"), MeasuredCells(certificate));
    size_t heatmaps = 0;
    for (const auto* svg : root->FindAll("svg")) heatmaps += svg->Attr("class") == "heatmap";
    EXPECT_EQ(heatmaps, GroupPairMatrices(certificate).size());
    // Each measured cell has its hover text.
    for (const auto* rect : root->FindAll("rect")) {
      if (rect->attributes.count("data-cell") == 0) continue;
      ASSERT_EQ(rect->Children("title").size(), 1u);
      EXPECT_THAT(rect->Children("title")[0]->text, HasSubstr(" -> "));
    }
  }
  // lab-slowed: 16 pairs, 4 of them retests.
  EXPECT_EQ(MeasuredCells(LoadFixture("lab-slowed")), 12u);
  EXPECT_EQ(MeasuredCells(LoadFixture("lab-healthy")), 24u);
}

TEST(HtmlReport, DiagonalAndUnscheduledCellsCarryNoDataCell) {
  const std::string html = RenderHtmlReport(LoadFixture("lab-slowed"));
  auto root = ParseMarkup(html, true);
  ASSERT_NE(root, nullptr);
  size_t diagonal = 0, unscheduled = 0;
  for (const auto* rect : root->FindAll("rect")) {
    const std::string cls = rect->Attr("class");
    if (cls == "diagonal" || cls == "unscheduled") {
      EXPECT_EQ(rect->attributes.count("data-cell"), 0u);
      (cls == "diagonal" ? diagonal : unscheduled)++;
    }
  }
  // Two 4 x 4 matrices, each with 4 diagonal cells and 6 measured ones.
  EXPECT_EQ(diagonal, 8u);
  EXPECT_EQ(unscheduled, 2u * (16 - 4 - 6));
}

TEST(HtmlReport, ShowsVerdictValuesFindingsAndSuspects) {
  const std::string slowed = RenderHtmlReport(LoadFixture("lab-slowed"));
  EXPECT_THAT(slowed, HasSubstr("class=\"banner not-certified\""));
  EXPECT_THAT(slowed, HasSubstr("NOT CERTIFIED"));
  EXPECT_THAT(slowed, HasSubstr("3 check(s) of severity error failed or are unknown"));
  EXPECT_THAT(slowed, HasSubstr("pairwise.bandwidth@node2/rxe0"));
  EXPECT_THAT(slowed, HasSubstr("MTU mismatch on the path"));  // the remedy
  EXPECT_THAT(slowed, HasSubstr("every pair touching node3 on rxe0 fails"));
  EXPECT_THAT(slowed, HasSubstr("0.091956"));  // node1 -> node2 write_bw, Gb/s
  EXPECT_THAT(slowed, HasSubstr("7403.6"));    // node1 -> node4 write_lat typical, us
  EXPECT_THAT(slowed, HasSubstr("46131"));     // its p99 in the latency table
  EXPECT_THAT(slowed, HasSubstr("retest of node2-&gt;node3"));
  EXPECT_THAT(slowed, HasSubstr("class=\"cell fail\""));
  EXPECT_THAT(slowed, HasSubstr("3.68 % of 2.5 Gb/s line rate"));  // 0.0920 / 2.5, from the verdict
  EXPECT_THAT(slowed, HasSubstr("unsigned"));

  const std::string healthy = RenderHtmlReport(LoadFixture("lab-healthy"));
  EXPECT_THAT(healthy, HasSubstr("class=\"banner certified\""));
  EXPECT_THAT(healthy, HasSubstr("No check failed or stayed unknown."));
  EXPECT_THAT(healthy, HasSubstr("rxe0"));
  EXPECT_THAT(healthy, HasSubstr("2.5 Gb/s (1X SDR)"));  // the port's rate in the inventory
  EXPECT_THAT(healthy, HasSubstr("class=\"busbw-chart\""));
}

TEST(HtmlReport, DrawsOneBusbwChartPerScopeWithReadableSizes) {
  const std::string html = RenderHtmlReport(LoadFixture("loopback-collectives"));
  EXPECT_EQ(CountOccurrences(html, "class=\"busbw-chart\""), 3u);
  for (const char* scope : {"1-node", "2-node", "all-nodes"}) EXPECT_THAT(html, HasSubstr(scope));
  for (const char* label : {">8B</text>", ">2K</text>", ">512K</text>"}) {
    EXPECT_THAT(html, HasSubstr(label));
  }
  EXPECT_THAT(html, HasSubstr("class=\"oop\""));
  EXPECT_THAT(html, HasSubstr("class=\"ip\""));
  EXPECT_THAT(html, HasSubstr("0.30922"));                   // 1-node large busbw
  EXPECT_THAT(html, Not(HasSubstr("class=\"threshold\"")));  // no floor in this plan
  EXPECT_THAT(html, HasSubstr("No pair was measured."));
}

TEST(HtmlReport, DrawsTheFloorWhenTheSweepHasOneAndNamesTheExpectedTransport) {
  v1::Certificate certificate = LoadFixture("loopback-collectives");
  certificate.mutable_collectives(1)->set_min_busbw_gbytes(0.05);
  certificate.mutable_collectives(1)->set_expected_transport("ibverbs");
  const std::string html = RenderHtmlReport(certificate);
  EXPECT_THAT(html, HasSubstr("tcp (the plan asks for ibverbs)"));
  EXPECT_EQ(CountOccurrences(html, "class=\"threshold\""), 1u);
  EXPECT_THAT(html, HasSubstr("floor 0.05 GB/s"));
}

TEST(HtmlReport, EscapesEveryTextFromTheCertificate) {
  v1::Certificate certificate = LoadFixture("lab-slowed");
  certificate.mutable_findings(0)->set_message("<script>alert(1)</script> & \"quoted\" 'x'");
  certificate.mutable_findings(0)->set_remedy("<img src=x onerror=alert(2)>");
  certificate.set_cluster("lab <b>");
  certificate.mutable_pairs(0)->set_client("n<1>");
  certificate.mutable_suspects(0)->set_reason("</section><h1>x</h1>");
  const std::string html = RenderHtmlReport(certificate);
  EXPECT_THAT(html, Not(HasSubstr("<script>")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<b>")));
  // The remedy's text stays, as text.
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(2)&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; "
                              "&#39;x&#39;"));
  EXPECT_THAT(html, HasSubstr("lab &lt;b&gt;"));
  EXPECT_THAT(html, HasSubstr("n&lt;1&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;/section&gt;&lt;h1&gt;x&lt;/h1&gt;"));
  auto root = ParseMarkup(html, true);
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->FindAll("img").empty());
}

TEST(HtmlReport, RendersAnEmptyCertificate) {
  const std::string html = RenderHtmlReport(v1::Certificate());
  auto root = ParseMarkup(html, true);
  ASSERT_NE(root, nullptr);
  EXPECT_THAT(html, HasSubstr("NOT CERTIFIED"));
  EXPECT_THAT(html, HasSubstr("No pair was measured."));
  EXPECT_THAT(html, HasSubstr("No collective sweep ran."));
  EXPECT_THAT(html, HasSubstr("No latency test was measured."));
  EXPECT_THAT(html, HasSubstr("The certificate lists no nodes."));
  EXPECT_EQ(CountOccurrences(html, "data-cell"), 0u);
  EXPECT_EQ(CountOccurrences(html, "<svg"), 0u);
}

TEST(HtmlReport, RendersUnreachableNodesAndMissingInventory) {
  v1::Certificate certificate = LoadFixture("lab-slowed");
  v1::NodeResult* node = certificate.add_nodes();
  node->set_name("node9");
  node->set_agent("10.0.0.9:7070");
  node->set_reachable(false);
  node->set_error("connection refused: is the node-agent running?");
  certificate.add_verdict_reasons("node9 was unreachable");
  const std::string html = RenderHtmlReport(certificate);
  auto root = ParseMarkup(html, true);
  ASSERT_NE(root, nullptr);
  EXPECT_THAT(html, HasSubstr(">unreachable</span>"));
  EXPECT_THAT(html, HasSubstr("connection refused: is the node-agent running?"));
  EXPECT_THAT(html, HasSubstr("No inventory was collected from this node."));
  EXPECT_THAT(html, HasSubstr("node9 was unreachable"));
  // node9 gets a row and a column in each matrix, none of them measured.
  EXPECT_EQ(CountOccurrences(html, "data-cell"), 12u);
  EXPECT_THAT(html, HasSubstr("node1 -&gt; node9: not scheduled, no result"));
}

TEST(HtmlReport, ShowsSchemaTwoFields) {
  v1::Certificate certificate = LoadFixture("lab-healthy");
  certificate.set_format_version(2);
  auto* signature = certificate.mutable_signature();
  signature->set_algorithm("ed25519");
  signature->set_public_key_fingerprint("SHA256:abcdef0123");
  auto* baseline = certificate.mutable_baseline();
  baseline->set_path("/var/certs/old/certificate.json");
  baseline->set_sha256("feedbeef");
  baseline->set_started_at("2026-11-30T10:00:00.000Z");
  baseline->add_only_nodes("node3");
  v1::PairResult* pair = certificate.mutable_pairs(0);  // node1 -> node4 write_bw, 0.04658 Gb/s
  pair->set_line_rate_gbps(0.1);
  pair->mutable_carried()->set_from_started_at("2026-11-30T10:00:00.000Z");
  pair->mutable_carried()->set_age_s(97200);
  v1::SkippedTest* skipped = certificate.add_skipped();
  skipped->set_kind("phase");
  skipped->set_key("uplink");
  skipped->set_reason("the plan has no uplink section");
  certificate.set_plan_yaml("cluster: lab\n# <plan>\n");

  const std::string html = RenderHtmlReport(certificate);
  EXPECT_THAT(html, HasSubstr("signed (ed25519) by key SHA256:abcdef0123"));
  EXPECT_THAT(html, HasSubstr("partial re-certification of /var/certs/old/certificate.json"));
  EXPECT_THAT(html, HasSubstr("measured again: node3"));
  EXPECT_THAT(html, HasSubstr("1 result(s) carried over"));
  EXPECT_THAT(html,
              HasSubstr("carried from the baseline of 2026-11-30T10:00:00.000Z (1 d 3 h old)"));
  EXPECT_THAT(html, HasSubstr("46.6 % of 0.1 Gb/s line rate (the pair&#39;s line rate)"));
  EXPECT_THAT(html, HasSubstr("the plan has no uplink section"));
  EXPECT_THAT(html, HasSubstr("# &lt;plan&gt;"));
}

}  // namespace
}  // namespace clustercert::controller::report

namespace clustercert::controller::report {
namespace {

v1::Certificate UplinkCertificate() {
  v1::Certificate c;
  c.set_cluster("kentino-4node");
  v1::UplinkSizing& s = *c.mutable_uplink()->mutable_sizing();
  s.set_capacity_gbps(25);
  s.set_profile("image-video");
  s.set_required_gbps(128);
  s.set_required_gbytes_s(16);
  s.set_verdict(v1::UplinkSizing::undersized);
  s.set_headroom_gbps(-103);
  s.set_utilisation(5.12);
  s.set_checkpoint_gbytes(280);
  s.set_checkpoint_seconds(89.6);
  s.set_arithmetic("4 nodes x 4 GPUs x 1 GB/s = 16 GB/s = 128 Gb/s (image-video)");
  s.add_advice("size the uplink to the read rate <now>");
  for (int flows : {1, 8}) {
    v1::UplinkThroughput& t = *c.mutable_uplink()->add_throughput();
    t.set_node("node1");
    t.set_target("http://10.10.9.1:9000/shard.tar");
    t.set_target_type("http");
    t.set_flows(flows);
    t.set_ok(true);
    t.set_aggregate_gbps(flows * 0.04);
    for (int i = 0; i < flows; ++i) t.add_flow_gbps(0.04);
    t.set_min_flow_gbps(0.04);
    t.set_max_flow_gbps(0.04);
    t.set_need_gbps(32);
  }
  v1::NodeResult& node = *c.add_nodes();
  node.set_name("node1");
  node.mutable_inventory()->set_management_netdev("eno1");
  node.mutable_inventory()->set_management_subnet("192.168.100.0/24");
  node.set_clock_measured(true);
  node.set_clock_offset_ms(500.2);
  node.set_clock_uncertainty_ms(0.1);
  node.set_clock_exchanges(8);
  node.set_clock_injected_offset_ms(500);
  return c;
}

TEST(HtmlReport, UplinkSectionShowsSizingFlowsPlanesAndClocks) {
  const std::string html = RenderHtmlReport(UplinkCertificate());
  EXPECT_THAT(html, HasSubstr("<section id=\"uplink\">"));
  EXPECT_THAT(html, HasSubstr("href=\"#uplink\""));
  EXPECT_THAT(html, HasSubstr("4 nodes x 4 GPUs x 1 GB/s = 16 GB/s = 128 Gb/s"));
  EXPECT_THAT(html, HasSubstr("undersized"));
  EXPECT_THAT(html, HasSubstr("280 GB in 89.6 s"));
  EXPECT_THAT(html, HasSubstr("size the uplink to the read rate &lt;now&gt;"));
  EXPECT_THAT(html, HasSubstr("0.04 – 0.04"));
  EXPECT_THAT(html, HasSubstr("192.168.100.0/24"));
  EXPECT_THAT(html, HasSubstr("test-only offset 500 ms"));
  // A target URL is text in a cell, never a link the page would follow.
  auto root = ParseMarkup(html, /*html=*/true);
  ASSERT_NE(root, nullptr);
  for (const auto* a : root->FindAll("a")) {
    EXPECT_TRUE(absl::StartsWith(a->Attr("href"), "#")) << a->Attr("href");
  }
}

TEST(HtmlReport, NoUplinkPhaseSaysSo) {
  EXPECT_THAT(RenderHtmlReport(LoadFixture("lab-healthy")), HasSubstr("No uplink phase ran"));
}

}  // namespace
}  // namespace clustercert::controller::report
