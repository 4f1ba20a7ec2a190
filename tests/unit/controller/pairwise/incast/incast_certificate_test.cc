// pairwise.incast end to end over fake agents: RunCertification runs the
// rounds after the matrix and records them in the certificate with their
// findings; `controller verify` recomputes them (and catches an edited
// figure); the Markdown, HTML and JUnit reports show one row or case per
// round; a planned incast that could not run is a SkippedTest that keeps the
// run from being certified.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/version.h"
#include "controller/certificate/certificate_builder.h"
#include "controller/certificate/verdict_recompute.h"
#include "controller/commands/certification_run.h"
#include "controller/pairwise/incast_verdict.h"
#include "controller/plan/plan_parser.h"
#include "controller/report/html_report.h"
#include "controller/report/junit_report.h"
#include "controller/report/markdown_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_tcp_agent.h"
#include "tests/support/simulated_clock.h"

namespace clustercert::controller {
namespace {

using testing::FakeTcpAgent;
using ::testing::HasSubstr;

constexpr char kPlan[] = R"(cluster: incast-fake
fabric: {type: ethernet, link_rate_gbps: 10, min_netdev_mtu: 1500}
nodes:
  - {name: node1, agent: "127.0.0.1:17071", data_ip: 10.0.0.1, gpus: 0}
  - {name: node2, agent: "127.0.0.1:17072", data_ip: 10.0.0.2, gpus: 0}
  - {name: node3, agent: "127.0.0.1:17073", data_ip: 10.0.0.3, gpus: 0}
agents: {insecure: true, retries: 0}
pairwise:
  engine: tcp
  tests: [write_bw]
  duration_s: 1
  min_fraction_of_line_rate: 0.5
  incast: {senders: 2, min_fraction_of_line_rate: 0.9, min_fairness: 0.5}
)";

class IncastCertificateTest : public ::testing::Test {
 protected:
  v1::Certificate Run(double gbps) {
    auto parsed = plan::ParsePlan(kPlan, "incast.yaml");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    plan_ = *parsed;
    for (const plan::Node& node : plan_.nodes) {
      NodeState state;
      state.node = node;
      state.client = std::make_unique<FakeTcpAgent>(node.name, gbps);
      nodes_.push_back(std::move(state));
    }
    return RunCertification(plan_, nodes_, progress_, clock_).certificate;
  }
  const v1::PhaseResult& Phase(const v1::Certificate& certificate, const std::string& name) {
    for (const auto& phase : certificate.phases()) {
      if (phase.name() == name) return phase;
    }
    ADD_FAILURE() << "no phase " << name;
    return certificate.phases(0);
  }

  plan::Plan plan_;
  std::vector<NodeState> nodes_;
  Progress progress_{stderr, /*quiet=*/true};
  ::clustercert::testing::SimulatedClock clock_;
};

TEST_F(IncastCertificateTest, TheRoundsFollowTheMatrixAndAreRecordedWithTheirFindings) {
  const v1::Certificate certificate = Run(6);
  ASSERT_EQ(certificate.incast_size(), 3);  // every receiver in turn
  for (const auto& round : certificate.incast()) {
    EXPECT_TRUE(round.error().empty()) << round.error();
    ASSERT_EQ(round.senders_size(), 2);
    for (const auto& sender : round.senders()) EXPECT_TRUE(sender.ok()) << sender.error();
    EXPECT_DOUBLE_EQ(round.aggregate_gbps(), 12);
    EXPECT_DOUBLE_EQ(round.fairness(), 1);
    EXPECT_DOUBLE_EQ(round.line_rate_gbps(), 10);
  }
  EXPECT_EQ(certificate.incast(1).receiver(), "node2");
  EXPECT_EQ(certificate.incast(1).senders(0).node(), "node3");
  EXPECT_EQ(certificate.incast(1).senders(1).node(), "node1");
  std::map<std::string, int> passing;
  for (const auto& check : certificate.checks()) {
    if (check.id().rfind("incast.", 0) == 0 && check.status() == v1::Finding::pass) {
      ++passing[check.id()];
    }
  }
  EXPECT_EQ(passing["incast.bandwidth"], 3);
  EXPECT_EQ(passing["incast.fairness"], 3);
  EXPECT_THAT(Phase(certificate, "pairwise").detail(), HasSubstr("incast: 3 round(s)"));
  EXPECT_EQ(Phase(certificate, "pairwise").status(), v1::PhaseResult::pass);
  // The receiving ends of each round shared one group; the pair cells none.
  const auto& groups = static_cast<FakeTcpAgent&>(*nodes_[0].client).groups;
  // 4 pair cells and 2 rounds as a sender without one, 1 round receiving in one.
  EXPECT_EQ(std::count(groups.begin(), groups.end(), ""), 6);
  EXPECT_EQ(std::count(groups.begin(), groups.end(), "incast-1"), 2);

  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
}

TEST_F(IncastCertificateTest, AnEditedSenderFigureIsCaughtByVerify) {
  v1::Certificate certificate = Run(6);
  ASSERT_GE(certificate.incast_size(), 1);
  certificate.mutable_incast(0)->mutable_senders(0)->set_gbps(1);
  const std::string text = absl::StrJoin(RecheckVerdicts(certificate).differences, "\n");
  EXPECT_THAT(text, HasSubstr("incast[incast->node1 write_bw]: recorded 12 Gb/s at fairness 1, "
                              "but its senders give 7 Gb/s"));
  EXPECT_THAT(text, HasSubstr("checks incast.bandwidth@incast->node1 write_bw: recorded pass"));
}

TEST_F(IncastCertificateTest, ASlowRoundFailsAndEveryReportShowsIt) {
  const v1::Certificate certificate = Run(4);  // 2 x 4 = 8 Gb/s of 10: under 90 %
  ASSERT_EQ(certificate.incast_size(), 3);
  EXPECT_EQ(certificate.verdict(), "not-certified");
  EXPECT_EQ(Phase(certificate, "pairwise").status(), v1::PhaseResult::fail);

  const std::string markdown = report::RenderMarkdownReport(certificate);
  EXPECT_THAT(markdown, HasSubstr("## Incast"));
  EXPECT_THAT(markdown,
              HasSubstr("| node2 |  | node3, node1 | node3 4, node1 4 | 8 | 10 | 1\\.00 | "
                        "**\xE2\x9C\x97 FAIL incast.bandwidth** |"));

  const std::string html = report::RenderHtmlReport(certificate);
  EXPECT_THAT(html, HasSubstr("<section id=\"incast\">"));
  EXPECT_THAT(html, HasSubstr("<a href=\"#incast\">Incast</a>"));
  EXPECT_THAT(html, HasSubstr("FAIL incast.bandwidth"));

  const std::string junit = report::RenderJunitReport(certificate);
  EXPECT_THAT(junit, HasSubstr("<testsuite name=\"clustercert.incast\""));
  EXPECT_THAT(junit, HasSubstr("tests=\"3\" failures=\"3\""));
  EXPECT_THAT(junit, HasSubstr("<testcase name=\"incast-&gt;node3 write_bw\" "
                               "classname=\"clustercert.incast\" time=\"1.000\">"));
  // A round's findings are in its case, not again among the other checks.
  EXPECT_THAT(junit, ::testing::Not(HasSubstr("name=\"incast.bandwidth@")));

  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  EXPECT_TRUE(recheck.differences.empty()) << absl::StrJoin(recheck.differences, "\n");
}

TEST_F(IncastCertificateTest, AnIncastThatCouldNotRunIsSkippedAndNotCertified) {
  auto parsed = plan::ParsePlan(kPlan, "incast.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  RunRecord record;
  record.incast_skipped = "not run: fewer than two agents answered";
  const v1::Certificate certificate = BuildCertificate(*parsed, {}, record);
  ASSERT_EQ(certificate.skipped_size(), 1);
  EXPECT_EQ(certificate.skipped(0).kind(), "incast");
  EXPECT_EQ(certificate.skipped(0).key(), "incast");
  EXPECT_EQ(certificate.verdict(), "not-certified");
  EXPECT_THAT(certificate.verdict_reasons(),
              ::testing::Contains(HasSubstr("the plan asks for pairwise.incast, whose rounds did "
                                            "not run (not run: fewer than two agents answered)")));
  EXPECT_THAT(report::RenderJunitReport(certificate),
              HasSubstr("<testsuite name=\"clustercert.incast\""));
  // verify sees the same reason.
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  for (const std::string& difference : recheck.differences) {
    EXPECT_THAT(difference, ::testing::Not(HasSubstr("verdict")));
  }
}

// Without a line rate the round's bandwidth is skipped: the round's one
// JUnit case says so, and no second case repeats the skipped check.
TEST_F(IncastCertificateTest, ARoundsSkippedCheckIsReportedInItsCaseOnly) {
  auto parsed = plan::ParsePlan(kPlan, "incast.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  v1::IncastResult round;
  round.set_receiver("node2");
  round.set_engine("tcp");
  round.set_test("write_bw");
  round.set_round(1);
  for (const char* node : {"node3", "node1"}) {
    v1::IncastSender* sender = round.add_senders();
    sender->set_node(node);
    sender->set_ok(true);
    sender->set_gbps(3);
  }
  pairwise::SummarizeIncast(round);
  RunRecord record;
  record.incast = {round};
  record.checks = pairwise::JudgeIncast(*parsed, round);
  const v1::Certificate certificate = BuildCertificate(*parsed, {}, record);
  ASSERT_THAT(certificate.skipped(),
              ::testing::Contains(::testing::Property(&v1::SkippedTest::key,
                                                      "incast.bandwidth@incast->node2 write_bw")));

  const std::string junit = report::RenderJunitReport(certificate);
  EXPECT_THAT(junit, HasSubstr("<testsuite name=\"clustercert.incast\" id=\"0\" tests=\"1\" "
                               "failures=\"0\" errors=\"0\" skipped=\"1\""));
  EXPECT_THAT(junit, HasSubstr("<testcase name=\"incast-&gt;node2 write_bw\""));
  EXPECT_THAT(junit, ::testing::Not(HasSubstr("name=\"incast.bandwidth@")));
  EXPECT_THAT(report::RenderMarkdownReport(certificate),
              HasSubstr("| node2 |  | node3, node1 | node3 3, node1 3 | 6 | unknown | 1\\.00 | "
                        "SKIP incast.bandwidth |"));
}

}  // namespace
}  // namespace clustercert::controller
