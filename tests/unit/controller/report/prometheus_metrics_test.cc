// The certificate as node_exporter textfile metrics: the verdicts, each
// node's standing, failing checks by id, the pair figures in base units,
// and a file that promtool accepts whatever the names in it.
#include "controller/report/prometheus_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/support/environment_skip.h"
#include "tests/unit/controller/report/report_test_support.h"
#include "tests/unit/controller/report/ring_certificate.h"

namespace clustercert::controller::report {
namespace {

using testing::CountOccurrences;
using testing::FixtureNames;
using ::testing::HasSubstr;
using testing::LoadFixture;
using ::testing::Not;

TEST(PrometheusMetrics, AHealthyLabIsCertifiedWithTheTimeItFinished) {
  const std::string text = RenderPrometheusMetrics(LoadFixture("lab-healthy"));
  EXPECT_THAT(text, HasSubstr("# TYPE clustercert_certified gauge\n"
                              "clustercert_certified{cluster=\"softroce-lab\"} 1\n"));
  for (const char* node : {"node1", "node2", "node3", "node4"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("clustercert_node_certified{cluster=\"softroce-lab\","
                                             "node=\"",
                                             node, "\"} 1\n")));
  }
  EXPECT_THAT(text, Not(HasSubstr("clustercert_failing_checks")));  // nothing fails
  EXPECT_THAT(text,
              HasSubstr("clustercert_certificate_timestamp_seconds{cluster=\"softroce-lab\"} "));
}

// lab-slowed: node3's link was slowed; its pairs fail from both ends, and
// localisation names node3 alone. Only node3 is held against.
TEST(PrometheusMetrics, TheSlowedNodeIsTheOneNotCertifiedNotEveryEndOfAFailingPair) {
  const v1::Certificate certificate = LoadFixture("lab-slowed");
  const std::string text = RenderPrometheusMetrics(certificate);
  EXPECT_THAT(text, HasSubstr("clustercert_certified{cluster=\"softroce-lab\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("clustercert_node_certified{cluster=\"softroce-lab\",node=\"node3\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("clustercert_node_certified{cluster=\"softroce-lab\",node=\"node1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("clustercert_failing_checks{cluster=\"softroce-lab\",node=\"node3\","
                              "check=\"pairwise.bandwidth\",severity=\"error\"} "));
  // Every cell has its pass/fail sample; a bandwidth cell its bytes per
  // second (Gb/s x 1e9 / 8) and its ratio; a latency cell its seconds.
  EXPECT_EQ(CountOccurrences(text, "\nclustercert_pair_passed{"),
            static_cast<size_t>(certificate.pairs_size()));
  for (const v1::PairResult& pair : certificate.pairs()) {
    if (!pair.ok() || pair.unit() != "Gb/s" || !pair.retest_of().empty()) continue;
    const std::string labels = absl::StrCat(
        "{cluster=\"softroce-lab\",client=\"", pair.client(), "\",server=\"", pair.server(),
        "\",rail=\"", pair.rail(), "\",test=\"", pair.test(), "\",memory=\"", pair.memory(),
        "\",client_gpu=\"\",server_gpu=\"\",retest_of=\"\"}");
    const size_t at = text.find("clustercert_pair_bandwidth_bytes_per_second" + labels + " ");
    ASSERT_NE(at, std::string::npos) << labels;
    const double written = std::strtod(text.c_str() + text.find(' ', at) + 1, nullptr);
    EXPECT_NEAR(written, pair.value() * 1e9 / 8, 1e-6 * written);
    EXPECT_THAT(text, HasSubstr("clustercert_pair_bandwidth_ratio" + labels + " "));
    break;
  }
  EXPECT_THAT(text, HasSubstr("clustercert_pair_latency_seconds{"));
}

TEST(PrometheusMetrics, LabelValuesAreEscapedAndARepeatedSeriesIsWrittenOnce) {
  v1::Certificate certificate = LoadFixture("lab-healthy");
  certificate.set_cluster("lab \"A\"\\b\nnext");
  *certificate.add_pairs() = certificate.pairs(0);  // the same cell twice
  const std::string text = RenderPrometheusMetrics(certificate);
  EXPECT_THAT(text, HasSubstr("{cluster=\"lab \\\"A\\\"\\\\b\\nnext\"}"));
  EXPECT_THAT(text, Not(HasSubstr("\nnext")));
  const v1::PairResult& first = certificate.pairs(0);
  EXPECT_EQ(CountOccurrences(
                text, absl::StrCat(
                          "clustercert_pair_passed{cluster=\"lab \\\"A\\\"\\\\b\\nnext\",client=\"",
                          first.client(), "\",server=\"", first.server(), "\",rail=\"",
                          first.rail(), "\",test=\"", first.test(), "\"")),
            1u);
}

// promtool (Debian's prometheus package) is there, or the test is skipped,
// except in CI, which installs it (scripts/install-deps.sh).
#define REQUIRE_PROMTOOL()                                                      \
  do {                                                                          \
    if (std::system("command -v promtool >/dev/null 2>&1") != 0) {              \
      SKIP_FOR_ENVIRONMENT("promtool")                                          \
          << "skipped: promtool is not installed (apt-get install prometheus)"; \
    }                                                                           \
  } while (false)

// What Prometheus's own linter says of the file: every fixture and a
// 40-node ring certificate, through `promtool check metrics`.
TEST(PrometheusMetrics, PromtoolAcceptsEveryFixturesMetrics) {
  REQUIRE_PROMTOOL();
  std::vector<v1::Certificate> certificates;
  for (const std::string& name : FixtureNames()) certificates.push_back(LoadFixture(name));
  certificates.push_back(testing::RingCertificate(40));
  for (const v1::Certificate& certificate : certificates) {
    std::FILE* promtool = popen("promtool check metrics 2>&1", "w");
    ASSERT_NE(promtool, nullptr);
    const std::string text = RenderPrometheusMetrics(certificate);
    ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), promtool), text.size());
    const int status = pclose(promtool);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << certificate.cluster() << ": promtool check metrics refused the file (its output is "
        << "above)";
  }
}

// The two alert rules docs/prometheus.md offers: valid, and each fires for
// what it should and nothing else (promtool's rule unit tests).
TEST(PrometheusMetrics, TheAlertRulesFireForTheNodeHeldAndTheStaleCertificateOnly) {
  REQUIRE_PROMTOOL();
  const std::string source = CLUSTERCERT_SOURCE_DIR;
  EXPECT_EQ(std::system(("promtool check rules " + source +
                         "/deploy/prometheus/clustercert.rules.yml >/dev/null")
                            .c_str()),
            0);
  EXPECT_EQ(std::system(("promtool test rules " + source +
                         "/tests/fixtures/prometheus/clustercert.rules.test.yml")
                            .c_str()),
            0);
}

}  // namespace
}  // namespace clustercert::controller::report
