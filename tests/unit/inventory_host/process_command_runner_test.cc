#include "agent/inventory/process_command_runner.h"

#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::inventory {
namespace {

using ::testing::HasSubstr;

TEST(ProcessCommandRunnerTest, CapturesStdoutOfEcho) {
  ProcessCommandRunner runner;
  auto result = runner.Run({"/bin/echo", "hello", "world"}, absl::Seconds(5));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->stdout_text, "hello world\n");
  EXPECT_EQ(result->stderr_text, "");
}

TEST(ProcessCommandRunnerTest, SearchesThePathForBareNames) {
  ProcessCommandRunner runner("/nonexistent-dir:/usr/bin:/bin");
  auto result = runner.Run({"echo", "-n", "x"}, absl::Seconds(5));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_text, "x");
}

TEST(ProcessCommandRunnerTest, ArgumentsAreNotInterpretedByAShell) {
  ProcessCommandRunner runner;
  auto result = runner.Run({"/bin/echo", "$HOME; rm -rf /tmp/x"}, absl::Seconds(5));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_text, "$HOME; rm -rf /tmp/x\n");
}

TEST(ProcessCommandRunnerTest, MissingBinaryIsNotFound) {
  ProcessCommandRunner runner("/usr/bin:/bin");
  auto by_name = runner.Run({"clustercert-no-such-tool", "-s"}, absl::Seconds(5));
  EXPECT_TRUE(absl::IsNotFound(by_name.status())) << by_name.status();
  EXPECT_THAT(std::string(by_name.status().message()), HasSubstr("clustercert-no-such-tool"));
  auto by_path = runner.Run({"/nonexistent/ofed_info", "-s"}, absl::Seconds(5));
  EXPECT_TRUE(absl::IsNotFound(by_path.status())) << by_path.status();
}

TEST(ProcessCommandRunnerTest, NonZeroExitIsAResultWithStderr) {
  ProcessCommandRunner runner;
  auto result = runner.Run({"/bin/sh", "-c", "echo out; echo oops >&2; exit 3"}, absl::Seconds(5));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->stdout_text, "out\n");
  EXPECT_EQ(result->stderr_text, "oops\n");
}

TEST(ProcessCommandRunnerTest, TimeoutKillsAndReturnsQuickly) {
  ProcessCommandRunner runner;
  auto start = std::chrono::steady_clock::now();
  auto result = runner.Run({"/bin/sleep", "5"}, absl::Milliseconds(200));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(absl::IsDeadlineExceeded(result.status())) << result.status();
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

TEST(ProcessCommandRunnerTest, GrandchildHoldingTheOutputPipeIsKilledAtTheDeadline) {
  ProcessCommandRunner runner;
  auto start = std::chrono::steady_clock::now();
  // The shell exits at once; its background sleep keeps stdout open.
  auto result = runner.Run({"/bin/sh", "-c", "sleep 5 & echo started"}, absl::Milliseconds(300));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(absl::IsDeadlineExceeded(result.status())) << result.status();
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

TEST(ProcessCommandRunnerTest, DeathBySignalIsAnError) {
  ProcessCommandRunner runner;
  auto result = runner.Run({"/bin/sh", "-c", "kill -9 $$"}, absl::Seconds(5));
  EXPECT_TRUE(absl::IsInternal(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("signal 9"));
}

TEST(ProcessCommandRunnerTest, EmptyCommandLineIsInvalid) {
  ProcessCommandRunner runner;
  EXPECT_TRUE(absl::IsInvalidArgument(runner.Run({}, absl::Seconds(1)).status()));
}

}  // namespace
}  // namespace clustercert::inventory
