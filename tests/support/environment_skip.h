#pragma once

// A skip for the environment, one rule for every GoogleTest test
// (docs/testing.md, "A skip in CI is a failure"). Outside CI a test that
// cannot run its check here skips with its reason. Under CI=true the same
// skip is a failure naming the test and what is missing, unless its key is
// listed in tests/allowed_skips.txt (environment facts CI's host really
// lacks: no GPU, no RDMA device). So a capability cannot vanish from CI while
// CI stays green. tests/support/skip.sh is the same rule for shell tests.
//
//   if (!fs::exists(kNginx)) SKIP_FOR_ENVIRONMENT("nginx") << "nginx is not installed";
//
// Like GTEST_SKIP(), it returns from the enclosing void function.

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#ifndef CLUSTERCERT_ALLOWED_SKIPS
#define CLUSTERCERT_ALLOWED_SKIPS CLUSTERCERT_SOURCE_DIR "/tests/allowed_skips.txt"
#endif

namespace clustercert::testing {

// The keys of an allowed-skips list: the first word of each line that is
// neither blank nor a # comment. A line without a reason after its key, or a
// key that is not lower-case letters, digits and '-', is not an entry: the
// list must say why for each.
inline std::set<std::string> ParseAllowedSkips(std::string_view text) {
  std::set<std::string> keys;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string key, reason;
    if (!(words >> key) || key[0] == '#' || !(words >> reason)) continue;
    bool well_formed = true;
    for (char c : key) {
      well_formed = well_formed && (std::islower(static_cast<unsigned char>(c)) ||
                                    std::isdigit(static_cast<unsigned char>(c)) || c == '-');
    }
    if (well_formed) keys.insert(key);
  }
  return keys;
}

// tests/allowed_skips.txt as keys; empty when it cannot be read (then no
// skip is allowed in CI, and the failure says where the list was looked for).
inline std::set<std::string> ReadAllowedSkips(const std::string& path = CLUSTERCERT_ALLOWED_SKIPS) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseAllowedSkips(text.str());
}

inline bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

// What one skip becomes, and the words that lead its message.
struct SkipDecision {
  bool fail = false;
  std::string message;
};

// The rule itself, pure: `test` names the test for the failure message.
inline SkipDecision DecideSkip(std::string_view key, bool in_ci,
                               const std::set<std::string>& allowed, std::string_view test) {
  if (!in_ci) return {false, ""};
  if (allowed.count(std::string(key)) != 0) {
    // scripts/ctest_skips.sh accepts a ctest "Skipped" entry by this marker.
    return {false, "allowed skip: " + std::string(key) + " (tests/allowed_skips.txt):"};
  }
  return {true, std::string(test) + " cannot run its check and skipped under CI=true for '" +
                    std::string(key) +
                    "', which " CLUSTERCERT_ALLOWED_SKIPS
                    " does not list: give CI's host what is missing (scripts/install-deps.sh, "
                    "run as root) or fix the test. The skip said:"};
}

// The running test's full name, or its suite's in SetUpTestSuite.
inline std::string CurrentTestName() {
  const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
  if (const ::testing::TestInfo* info = unit->current_test_info()) {
    return std::string(info->test_suite_name()) + "." + info->name();
  }
  if (const ::testing::TestSuite* suite = unit->current_test_suite()) return suite->name();
  return "a test";
}

// The gtest result SKIP_FOR_ENVIRONMENT reports: GTEST_SKIP()'s own helper,
// with a fatal failure instead of a skip when the rule says so.
inline ::testing::internal::AssertHelper EnvironmentSkip(std::string_view key, const char* file,
                                                         int line) {
  const SkipDecision decision =
      DecideSkip(key, RunningInCi(), ReadAllowedSkips(), CurrentTestName());
  // AssertHelper copies the message.
  return ::testing::internal::AssertHelper(
      decision.fail ? ::testing::TestPartResult::kFatalFailure : ::testing::TestPartResult::kSkip,
      file, line, decision.message.c_str());
}

}  // namespace clustercert::testing

// Skips the test for `key` (a word of tests/allowed_skips.txt's kind: "nginx",
// "root", "no-rdma-device"), or fails it under CI=true unless `key` is
// allowed; the reason streams after it, as after GTEST_SKIP().
#define SKIP_FOR_ENVIRONMENT(key) \
  return ::clustercert::testing::EnvironmentSkip(key, __FILE__, __LINE__) = ::testing::Message()
