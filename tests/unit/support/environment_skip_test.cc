#include "tests/support/environment_skip.h"

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace clustercert::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::TestPartResult;
using ::testing::TestPartResultArray;

TEST(ParseAllowedSkips, ReadsKeysWithReasonsAndIgnoresTheRest) {
  EXPECT_THAT(ParseAllowedSkips("# comment\n"
                                "\n"
                                "no-gpu   CI has no GPU\n"
                                "no-reason\n"
                                "Bad_Key  upper case and underscore\n"
                                "  no-rdma-device\tno NIC here\n"),
              ElementsAre("no-gpu", "no-rdma-device"));
}

TEST(ParseAllowedSkips, TheTreesListHoldsOnlyTheEnvironmentFactsCiLacks) {
  // Widening the list is a decision (docs/testing.md): this test names it.
  EXPECT_THAT(ReadAllowedSkips(), ElementsAre("no-gpu", "no-rdma-device"));
}

TEST(DecideSkip, OutsideCiEverySkipIsASkip) {
  SkipDecision decision = DecideSkip("nginx", /*in_ci=*/false, {}, "Suite.Test");
  EXPECT_FALSE(decision.fail);
  EXPECT_EQ(decision.message, "");
}

TEST(DecideSkip, UnderCiAnUnlistedKeyFailsNamingTheTestAndTheKey) {
  SkipDecision decision = DecideSkip("chromium", /*in_ci=*/true, {"no-gpu"}, "Suite.Test");
  EXPECT_TRUE(decision.fail);
  EXPECT_THAT(decision.message, HasSubstr("Suite.Test"));
  EXPECT_THAT(decision.message, HasSubstr("'chromium'"));
  EXPECT_THAT(decision.message, HasSubstr("allowed_skips.txt"));
  EXPECT_THAT(decision.message, HasSubstr("scripts/install-deps.sh"));
}

TEST(DecideSkip, UnderCiAListedKeySkipsWithTheMarkerCtestLooksFor) {
  SkipDecision decision = DecideSkip("no-gpu", /*in_ci=*/true, {"no-gpu"}, "Suite.Test");
  EXPECT_FALSE(decision.fail);
  EXPECT_THAT(decision.message, HasSubstr("allowed skip: no-gpu"));
}

// Sets CI for one scope, restoring what was there.
class ScopedCi {
 public:
  explicit ScopedCi(const char* value) {
    if (const char* old = std::getenv("CI")) old_ = old;
    if (value == nullptr) {
      ::unsetenv("CI");
    } else {
      ::setenv("CI", value, 1);
    }
  }
  ~ScopedCi() {
    if (old_.has_value()) {
      ::setenv("CI", old_->c_str(), 1);
    } else {
      ::unsetenv("CI");
    }
  }
  ScopedCi(const ScopedCi&) = delete;
  ScopedCi& operator=(const ScopedCi&) = delete;

 private:
  std::optional<std::string> old_;
};

bool reached_after_skip = false;

void SkipFor(const char* key) {
  reached_after_skip = false;
  SKIP_FOR_ENVIRONMENT(key) << "the tool is missing here";
  reached_after_skip = true;
}

// The one result SkipFor(key) reports with CI set to `ci` (nullptr: unset).
TestPartResult ResultOfSkip(const char* key, const char* ci) {
  TestPartResultArray results;
  {
    ScopedCi scoped(ci);
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    SkipFor(key);
  }
  EXPECT_EQ(results.size(), 1);
  EXPECT_FALSE(reached_after_skip) << "the macro must return like GTEST_SKIP()";
  return results.GetTestPartResult(0);
}

TEST(SkipForEnvironment, OutsideCiSkipsWithTheSitesReason) {
  TestPartResult result = ResultOfSkip("chromium", nullptr);
  EXPECT_TRUE(result.skipped());
  EXPECT_EQ(std::string(result.message()), "the tool is missing here");
}

TEST(SkipForEnvironment, CiSetToSomethingElseIsNotCi) {
  EXPECT_TRUE(ResultOfSkip("chromium", "false").skipped());
}

TEST(SkipForEnvironment, UnderCiAKeyNotInTheListFailsTheTest) {
  TestPartResult result = ResultOfSkip("chromium", "true");
  EXPECT_TRUE(result.fatally_failed());
  EXPECT_THAT(result.message(),
              HasSubstr("SkipForEnvironment.UnderCiAKeyNotInTheListFailsTheTest cannot run"));
  EXPECT_THAT(result.message(), HasSubstr("'chromium'"));
  EXPECT_THAT(result.message(), HasSubstr("The skip said:\nthe tool is missing here"));
}

TEST(SkipForEnvironment, UnderCiAnAllowedKeySkips) {
  TestPartResult result = ResultOfSkip("no-rdma-device", "true");
  EXPECT_TRUE(result.skipped());
  EXPECT_THAT(result.message(), HasSubstr("allowed skip: no-rdma-device"));
  EXPECT_THAT(result.message(), HasSubstr("the tool is missing here"));
}

}  // namespace
}  // namespace clustercert::testing
