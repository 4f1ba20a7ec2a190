#include "controller/report/junit_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "controller/certificate/result_keys.h"
#include "tests/support/environment_skip.h"
#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller::report {
namespace {

using testing::Element;
using testing::FixtureNames;
using ::testing::HasSubstr;
using testing::LoadFixture;
using testing::ParseMarkup;

int IntAttr(const Element& e, const std::string& name) {
  int value = -1;
  EXPECT_TRUE(absl::SimpleAtoi(e.Attr(name), &value)) << name << "=" << e.Attr(name);
  return value;
}

// Parses the report and checks every count against the elements it counts.
std::unique_ptr<Element> ParseAndCheckCounts(const std::string& xml) {
  auto document = ParseMarkup(xml, /*html=*/false);
  if (document == nullptr) return nullptr;
  const auto roots = document->Children("testsuites");
  EXPECT_EQ(roots.size(), 1u);
  EXPECT_EQ(document->children.size(), 1u);
  if (roots.size() != 1) return nullptr;
  const Element& root = *roots[0];
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto* suite : root.Children("testsuite")) {
    SCOPED_TRACE(suite->Attr("name"));
    const auto cases = suite->Children("testcase");
    int f = 0, e = 0, s = 0;
    for (const auto* c : cases) {
      EXPECT_FALSE(c->Attr("name").empty());
      EXPECT_TRUE(absl::StartsWith(c->Attr("classname"), "clustercert."));
      const size_t outcomes = c->Children("failure").size() + c->Children("error").size() +
                              c->Children("skipped").size();
      EXPECT_LE(outcomes, 1u);
      f += !c->Children("failure").empty();
      e += !c->Children("error").empty();
      s += !c->Children("skipped").empty();
    }
    EXPECT_EQ(IntAttr(*suite, "tests"), static_cast<int>(cases.size()));
    EXPECT_EQ(IntAttr(*suite, "failures"), f);
    EXPECT_EQ(IntAttr(*suite, "errors"), e);
    EXPECT_EQ(IntAttr(*suite, "skipped"), s);
    double time = -1;
    EXPECT_TRUE(absl::SimpleAtod(suite->Attr("time"), &time));
    EXPECT_GE(time, 0);
    tests += static_cast<int>(cases.size());
    failures += f;
    errors += e;
    skipped += s;
  }
  EXPECT_EQ(IntAttr(root, "tests"), tests);
  EXPECT_EQ(IntAttr(root, "failures"), failures);
  EXPECT_EQ(IntAttr(root, "errors"), errors);
  EXPECT_EQ(IntAttr(root, "skipped"), skipped);
  return document;
}

const Element* Suite(const Element& document, const std::string& name) {
  for (const auto* suite : document.FindAll("testsuite")) {
    if (suite->Attr("name") == name) return suite;
  }
  return nullptr;
}

TEST(JunitReport, CountsMatchTheElementsOnEveryFixture) {
  for (const auto& name : FixtureNames()) {
    SCOPED_TRACE(name);
    const v1::Certificate certificate = LoadFixture(name);
    auto document = ParseAndCheckCounts(RenderJunitReport(certificate));
    ASSERT_NE(document, nullptr);
    // One case per phase, per pair cell, and per check that is not a pair's
    // verdict (those are counted under pairwise).
    int pair_verdicts_in_checks = 0;
    for (const auto& check : certificate.checks()) {
      pair_verdicts_in_checks += absl::StartsWith(check.id(), "pairwise.");
    }
    const int expected = certificate.phases_size() + certificate.pairs_size() +
                         certificate.checks_size() - pair_verdicts_in_checks;
    EXPECT_EQ(IntAttr(*document->Children("testsuites")[0], "tests"), expected);
  }
}

TEST(JunitReport, LabSlowedPairsAndChecks) {
  const v1::Certificate certificate = LoadFixture("lab-slowed");
  auto document = ParseAndCheckCounts(RenderJunitReport(certificate));
  ASSERT_NE(document, nullptr);
  const Element* pairwise = Suite(*document, "clustercert.pairwise");
  ASSERT_NE(pairwise, nullptr);
  EXPECT_EQ(IntAttr(*pairwise, "tests"), 16);
  EXPECT_EQ(IntAttr(*pairwise, "failures"), 4);  // 3 cells and one retest
  EXPECT_EQ(pairwise->Attr("time"), "199.599");  // the pairwise phase's duration
  bool found = false;
  for (const auto* c : pairwise->Children("testcase")) {
    if (c->Attr("name") != controller::PairKey(certificate.pairs(3))) continue;
    found = true;
    EXPECT_EQ(c->Attr("name"), "node2->node3 rxe0 write_bw host");
    EXPECT_EQ(c->Attr("classname"), "clustercert.pairwise.bandwidth");
    ASSERT_EQ(c->Children("failure").size(), 1u);
    const std::string message = c->Children("failure")[0]->Attr("message");
    EXPECT_THAT(message, HasSubstr("the bandwidth test failed"));
    EXPECT_THAT(message, HasSubstr("Remedy: A pair that cannot connect"));
  }
  EXPECT_TRUE(found);
  const Element* inventory = Suite(*document, "clustercert.inventory");
  ASSERT_NE(inventory, nullptr);
  bool rate = false;
  for (const auto* c : inventory->Children("testcase")) {
    if (c->Attr("name") == "port.rate@node3/rxe0:1") {
      rate = true;
      EXPECT_EQ(c->Attr("classname"), "clustercert.port.rate");
      EXPECT_TRUE(c->children.empty());  // passed
    }
  }
  EXPECT_TRUE(rate);
  const Element* phases = Suite(*document, "clustercert.phases");
  ASSERT_NE(phases, nullptr);
  for (const auto* c : phases->Children("testcase")) {
    if (c->Attr("name") == "uplink") {
      ASSERT_EQ(c->Children("skipped").size(), 1u);
      EXPECT_EQ(c->Children("skipped")[0]->Attr("message"), "the plan has no uplink section");
    }
  }
}

TEST(JunitReport, UnknownIsAnErrorAndSkippedListEntriesAreCases) {
  v1::Certificate certificate = LoadFixture("loopback-collectives");
  v1::Finding* check = certificate.add_checks();
  check->set_id("clock.offset");
  check->set_node("node2");
  check->set_status(v1::Finding::unknown);
  check->set_severity(v1::Finding::error);
  check->set_message("node2: the clock offset could not be measured & <so> is \"unknown\"\x01.");
  check->set_remedy("Check that the agent answers GetVersion.");
  v1::SkippedTest* skipped = certificate.add_skipped();
  skipped->set_kind("sweep");
  skipped->set_key("collectives.busbw@8-node");
  skipped->set_reason("the plan has only 4 nodes");
  const std::string xml = RenderJunitReport(certificate);
  auto document = ParseAndCheckCounts(xml);
  ASSERT_NE(document, nullptr);
  const Element* inventory = Suite(*document, "clustercert.inventory");
  ASSERT_NE(inventory, nullptr);
  bool unknown = false;
  for (const auto* c : inventory->Children("testcase")) {
    if (c->Attr("name") != "clock.offset@node2") continue;
    unknown = true;
    ASSERT_EQ(c->Children("error").size(), 1u);
    EXPECT_EQ(c->Children("error")[0]->Attr("message"),
              "node2: the clock offset could not be measured & <so> is \"unknown\"\\x01. "
              "Remedy: Check that the agent answers GetVersion.");
  }
  EXPECT_TRUE(unknown);
  const Element* collectives = Suite(*document, "clustercert.collectives");
  ASSERT_NE(collectives, nullptr);
  bool listed = false;
  for (const auto* c : collectives->Children("testcase")) {
    if (c->Attr("name") == "collectives.busbw@8-node") {
      listed = true;
      ASSERT_EQ(c->Children("skipped").size(), 1u);
      EXPECT_EQ(c->Children("skipped")[0]->Attr("message"), "the plan has only 4 nodes");
    }
  }
  EXPECT_TRUE(listed);
}

TEST(JunitReport, CaseNamesAreUniqueWithinASuite) {
  v1::Certificate certificate = LoadFixture("lab-healthy");
  // Two checks with the same key, as a pairwise check that matches no pair
  // cell would have in a schema-1 certificate.
  for (int i = 0; i < 2; ++i) {
    v1::Finding* check = certificate.add_checks();
    check->set_id("pairwise.bandwidth");
    check->set_node("node1");
    check->set_device("rxe0");
    check->set_status(v1::Finding::pass);
    check->set_message(absl::StrCat("orphan ", i));
  }
  auto document = ParseAndCheckCounts(RenderJunitReport(certificate));
  ASSERT_NE(document, nullptr);
  std::set<std::string> names;
  for (const auto* c : Suite(*document, "clustercert.pairwise")->Children("testcase")) {
    EXPECT_TRUE(names.insert(c->Attr("name")).second) << c->Attr("name");
  }
  EXPECT_EQ(names.count("pairwise.bandwidth@node1/rxe0"), 1u);
  EXPECT_EQ(names.count("pairwise.bandwidth@node1/rxe0 (2)"), 1u);
}

TEST(JunitReport, RendersAnEmptyCertificate) {
  auto document = ParseAndCheckCounts(RenderJunitReport(v1::Certificate()));
  ASSERT_NE(document, nullptr);
  EXPECT_EQ(IntAttr(*document->Children("testsuites")[0], "tests"), 0);
}

// The same structural check the chromium script runs, when python3 is here.
TEST(JunitReport, ValidateJunitScriptAcceptsTheReportAndRejectsABrokenOne) {
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") != 0) {
    SKIP_FOR_ENVIRONMENT("python3-xml") << "python3 with xml.etree is not installed";
  }
  const std::string script =
      absl::StrCat(CLUSTERCERT_SOURCE_DIR, "/tests/report/validate_junit.py");
  const std::string good = absl::StrCat(::testing::TempDir(), "/junit_good.xml");
  const std::string bad = absl::StrCat(::testing::TempDir(), "/junit_bad.xml");
  std::string xml = RenderJunitReport(LoadFixture("lab-slowed"));
  std::ofstream(good) << xml;
  const size_t at = xml.find("failures=\"4\"");
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, 12, "failures=\"3\"");
  std::ofstream(bad) << xml;
  EXPECT_EQ(std::system(absl::StrCat("python3 ", script, " ", good, " >/dev/null").c_str()), 0);
  EXPECT_NE(std::system(absl::StrCat("python3 ", script, " ", bad, " >/dev/null 2>&1").c_str()), 0);
}

}  // namespace
}  // namespace clustercert::controller::report
