#include "common/process/child_process.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "tests/support/child_processes.h"
#include "tests/support/environment_skip.h"

namespace clustercert::process {
namespace {

using testing::FakeWorker;
using testing::HasNoChildren;
using testing::IsGone;

// Reads `fd` (non-blocking) until EOF, or until `stop_after` appears, or 5 s.
std::string ReadUntil(int fd, const std::string& stop_after = "") {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) continue;
    text.append(buffer, static_cast<size_t>(n));
    if (!stop_after.empty() && absl::StrContains(text, stop_after)) break;
  }
  return text;
}

// The grandchild pid the hang worker reports as "note sleeper PID".
pid_t SleeperPid(ChildProcess& worker) {
  std::string text = ReadUntil(worker.stdout_fd(), "\n");
  pid_t pid = 0;
  std::string digits = text.substr(text.rfind(' ') + 1);
  while (!digits.empty() && digits.back() == '\n') digits.pop_back();
  EXPECT_TRUE(absl::SimpleAtoi(digits, &pid)) << text;
  return pid;
}

TEST(ChildProcessTest, MissingExecutableIsASentenceAndLeavesNoChild) {
  auto worker = ChildProcess::Spawn("/nonexistent/collective-worker-gloo", {}, {});
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(worker.status().message(),
            "cannot start /nonexistent/collective-worker-gloo: No such file or directory");
  EXPECT_TRUE(HasNoChildren());
}

TEST(ChildProcessTest, FileWithoutExecuteBitIsRefusedWithTheFix) {
  char path[] = "/tmp/agent-collective-noexec-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "#!/bin/sh\n", 10), 10);
  ::close(fd);
  ::chmod(path, 0644);
  auto worker = ChildProcess::Spawn(path, {}, {});
  ::unlink(path);
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(worker.status().message(), "chmod +x")) << worker.status();
  EXPECT_TRUE(HasNoChildren());
}

TEST(ChildProcessTest, RelativePathIsRefused) {
  auto worker = ChildProcess::Spawn("collective-worker-gloo", {}, {});
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ChildProcessTest, WaitReportsExitCodeAndSignal) {
  auto failing = ChildProcess::Spawn(FakeWorker("fake_worker_fail.sh"), {}, {});
  ASSERT_TRUE(failing.ok()) << failing.status();
  ChildExit failed = (*failing)->Wait();
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_EQ(failed.signal, 0);

  auto crashing = ChildProcess::Spawn(FakeWorker("fake_worker_crash.sh"), {}, {});
  ASSERT_TRUE(crashing.ok()) << crashing.status();
  ChildExit crashed = (*crashing)->Wait();
  EXPECT_EQ(crashed.exit_code, -1);
  EXPECT_EQ(crashed.signal, SIGSEGV);
  EXPECT_EQ(SignalName(crashed.signal), "SIGSEGV");
}

TEST(ChildProcessTest, WritingToAnExitedWorkerDoesNotRaiseSigpipe) {
  // With the default disposition a stray SIGPIPE would end this test binary.
  struct sigaction previous = {};
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &default_action, &previous);

  auto worker = ChildProcess::Spawn(FakeWorker("fake_worker_exit_silent.sh"), {}, {});
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ((*worker)->Wait().exit_code, 3);
  for (int i = 0; i < 100; ++i) (*worker)->WriteLine("value k 6869");
  EXPECT_FALSE((*worker)->HasPendingStdin());
  EXPECT_EQ((*worker)->stdin_fd(), -1);  // closed on EPIPE
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);

  ::sigaction(SIGPIPE, &previous, nullptr);
}

TEST(ChildProcessTest, KillReachesTheWholeGroup) {
  auto worker = ChildProcess::Spawn(FakeWorker("fake_worker_hang.sh"), {}, {});
  ASSERT_TRUE(worker.ok()) << worker.status();
  const pid_t sleeper = SleeperPid(**worker);
  ASSERT_GT(sleeper, 0);
  EXPECT_FALSE((*worker)->TryReap().has_value());
  (*worker)->Kill();
  ChildExit exit = (*worker)->Wait();
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_TRUE(testing::WaitUntil([&] { return IsGone(sleeper); }));
  (*worker)->Kill();  // after the reap: must not touch a reused pid
}

TEST(ChildProcessTest, DestructorKillsAndReaps) {
  pid_t child = 0;
  pid_t sleeper = 0;
  {
    auto worker = ChildProcess::Spawn(FakeWorker("fake_worker_hang.sh"), {}, {});
    ASSERT_TRUE(worker.ok()) << worker.status();
    child = (*worker)->pid();
    sleeper = SleeperPid(**worker);
  }
  EXPECT_TRUE(HasNoChildren());
  EXPECT_TRUE(IsGone(child));
  EXPECT_TRUE(testing::WaitUntil([&] { return IsGone(sleeper); }));
}

TEST(ChildProcessTest, ChildInheritsNoStrayDescriptor) {
  // Opened without O_CLOEXEC, as a careless library in the agent might.
  int stray = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(stray, 0);
  ASSERT_EQ(::dup2(stray, 200), 200);
  ::close(stray);

  auto worker = ChildProcess::Spawn(FakeWorker("fake_worker_fds.sh"), {}, {});
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::string out = ReadUntil((*worker)->stdout_fd());
  EXPECT_EQ((*worker)->Wait().exit_code, 0);
  ::close(200);
  EXPECT_TRUE(absl::StrContains(out, "note fd 0\n")) << out;
  EXPECT_TRUE(absl::StrContains(out, "note fd 2\n")) << out;
  EXPECT_FALSE(absl::StrContains(out, "note fd 200\n")) << out;
}

TEST(ChildProcessTest, WorkerGetsNoAmbientCapability) {
  if (!testing::RaiseAmbientSysAdmin())
    SKIP_FOR_ENVIRONMENT("cap-sys-admin") << "needs CAP_SYS_ADMIN to raise an ambient capability";
  auto worker = ChildProcess::Spawn(FakeWorker("fake_worker_caps.sh"), {}, {});
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::string out = ReadUntil((*worker)->stdout_fd());
  EXPECT_EQ((*worker)->Wait().exit_code, 0);
  EXPECT_TRUE(absl::StrContains(out, "note CapAmb:\t0000000000000000\n")) << out;
}

TEST(ChildProcessTest, EnvironmentAdditionsOverrideTheAgents) {
  ::setenv("FAKE_WORKER_TAG", "from-agent", 1);
  auto worker = ChildProcess::Spawn(FakeWorker("fake_worker_ok.sh"), {"k1", "6869", "k2"},
                                    {{"FAKE_WORKER_TAG", "added"}});
  ::unsetenv("FAKE_WORKER_TAG");
  ASSERT_TRUE(worker.ok()) << worker.status();
  ReadUntil((*worker)->stdout_fd(), "get k2\n");
  (*worker)->WriteLine("value k2 6869");
  std::string out = ReadUntil((*worker)->stdout_fd());
  EXPECT_EQ((*worker)->Wait().exit_code, 0);
  EXPECT_TRUE(absl::StrContains(out, "note tag=added\n")) << out;
}

}  // namespace
}  // namespace clustercert::process
