#include "common/process/process_command_runner.h"

#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/child_processes.h"
#include "tests/support/environment_skip.h"
#include "tests/support/fake_process_spawner.h"

namespace clustercert::process {
namespace {

using ::testing::ElementsAre;
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

// The runner resolves the program on the search path, then asks its spawner:
// the request carries the resolved path and the arguments as given.
TEST(ProcessCommandRunnerTest, StartsTheResolvedProgramThroughItsSpawner) {
  testing::FakeProcessSpawner spawner;
  spawner.Substitute("/bin/echo", "/bin/sh", {"-c", "echo stand-in \"$@\"", "sh"});
  ProcessCommandRunner runner("/bin", spawner);
  auto result = runner.Run({"echo", "a b", "$c"}, absl::Seconds(5));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_text, "stand-in a b $c\n");
  ASSERT_EQ(spawner.requests().size(), 1u);
  EXPECT_EQ(spawner.requests()[0].executable, "/bin/echo");
  EXPECT_THAT(spawner.requests()[0].args, ElementsAre("a b", "$c"));
  EXPECT_TRUE(spawner.requests()[0].env.empty());  // the tool inherits the environment as is
}

TEST(ProcessCommandRunnerTest, ASpawnRefusalIsTheRunsError) {
  testing::FakeProcessSpawner spawner;
  spawner.Refuse("/bin/true", absl::ResourceExhaustedError("cannot start /bin/true: fork failed"));
  ProcessCommandRunner runner("/bin", spawner);
  auto result = runner.Run({"true"}, absl::Seconds(5));
  EXPECT_TRUE(absl::IsResourceExhausted(result.status())) << result.status();
  EXPECT_TRUE(testing::HasNoChildren());
}

// The hardened unit's ambient CAP_SYS_ADMIN stays with the agent: a tool the
// runner starts has none (CapAmb in /proc/self/status is all zero).
TEST(ProcessCommandRunnerTest, AToolInheritsNoAmbientCapabilities) {
  if (!testing::RaiseAmbientSysAdmin()) {
    SKIP_FOR_ENVIRONMENT("cap-sys-admin") << "needs CAP_SYS_ADMIN to raise an ambient capability";
  }
  ProcessCommandRunner runner;
  auto result = runner.Run({"/bin/sh", "-c", "grep CapAmb /proc/self/status"}, absl::Seconds(5));
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stdout_text, "CapAmb:\t0000000000000000\n");
}

}  // namespace
}  // namespace clustercert::process
