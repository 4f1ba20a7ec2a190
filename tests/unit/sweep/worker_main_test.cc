#include "sweep/worker_main.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustercert::sweep {
namespace {

// The lines a worker wrote to the agent, read back from a temporary file.
class WorkerMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    to_agent_ = std::tmpfile();
    from_agent_ = std::tmpfile();
    ASSERT_NE(to_agent_, nullptr);
    ASSERT_NE(from_agent_, nullptr);
  }
  void TearDown() override {
    std::fclose(to_agent_);
    std::fclose(from_agent_);
  }

  int Run(std::vector<std::string> args, const WorkerBody& body) {
    std::vector<char*> argv;
    args.insert(args.begin(), "collective-worker-test");
    for (std::string& arg : args) argv.push_back(arg.data());
    WorkerChannel channel(to_agent_, from_agent_);
    return RunWorkerMain(static_cast<int>(argv.size()), argv.data(), "collective-worker-test",
                         "test", channel, body);
  }

  std::string Written() {
    std::fflush(to_agent_);
    std::rewind(to_agent_);
    std::string text;
    for (int c = std::fgetc(to_agent_); c != EOF; c = std::fgetc(to_agent_)) {
      text.push_back(static_cast<char>(c));
    }
    return text;
  }

  std::FILE* to_agent_ = nullptr;
  std::FILE* from_agent_ = nullptr;
};

TEST_F(WorkerMainTest, TheBodyRunsWithTheParsedLineAndItsExitCodeIsReturned) {
  int seen_rank = -1;
  const int code = Run({"--rank=1", "--ranks=2", "--sizes=8:64:2"},
                       [&](const WorkerOptions& options, WorkerOutput& output, WorkerChannel&) {
                         seen_rank = options.rank;
                         return output.Done();
                       });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(seen_rank, 1);
  EXPECT_EQ(Written(), "done\n");
}

TEST_F(WorkerMainTest, AnExceptionTheBodyLetsThroughBecomesAFailNamingRankAndBackend) {
  const int code = Run({"--rank=1", "--ranks=2", "--sizes=8:64:2"},
                       [](const WorkerOptions&, WorkerOutput&, WorkerChannel&) -> int {
                         throw std::runtime_error("out of registered memory");
                       });
  EXPECT_EQ(code, kWorkerExitFailed);
  EXPECT_EQ(Written(),
            "fail rank 1 of 2 (test) stopped on an unexpected error: out of registered memory: "
            "report it with the worker's stderr\n");
}

TEST_F(WorkerMainTest, ABackendFailureIsReportedAsItIsOrAfterTheRank) {
  EXPECT_EQ(Run({"--rank=0", "--ranks=2", "--sizes=8:64:2"},
                [](const WorkerOptions&, WorkerOutput&, WorkerChannel&) -> int {
                  throw RankFailure("rank 0: ncclAllReduce returned unhandled system error");
                }),
            kWorkerExitFailed);
  EXPECT_EQ(Run({"--rank=1", "--ranks=2", "--sizes=8:64:2"},
                [](const WorkerOptions&, WorkerOutput&, WorkerChannel&) -> int {
                  throw WorkerFailure("the node-agent closed the worker's stdin");
                }),
            kWorkerExitFailed);
  EXPECT_EQ(Written(),
            "fail rank 0: ncclAllReduce returned unhandled system error\n"
            "fail rank 1 of 2: the node-agent closed the worker's stdin\n");
}

TEST_F(WorkerMainTest, ABadCommandLineFailsWithoutRunningTheBody) {
  bool ran = false;
  const int code =
      Run({"--rank=5", "--ranks=2"}, [&](const WorkerOptions&, WorkerOutput&, WorkerChannel&) {
        ran = true;
        return 0;
      });
  EXPECT_EQ(code, kWorkerExitFailed);
  EXPECT_FALSE(ran);
  EXPECT_EQ(Written().rfind("fail ", 0), 0u) << Written();
}

TEST_F(WorkerMainTest, PrintTableWritesTheTableToTheChannelsStreamNotToStdout) {
  const int rc = Run({"--rank", "0", "--ranks", "1", "--print-table"},
                     [](const WorkerOptions&, WorkerOutput& output, WorkerChannel&) {
                       output.Note("device cuda:0 NVIDIA H200");
                       output.Row(SweepRow{});
                       return output.Done();
                     });
  EXPECT_EQ(rc, 0);
  EXPECT_NE(Written().find("# device cuda:0 NVIDIA H200\n"), std::string::npos) << Written();
  EXPECT_NE(Written().find("#wrong"), std::string::npos) << Written();
}

// Everything read from `fd` until EOF.
std::string Drain(int fd) {
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) text.append(buffer, n);
  return text;
}

// Found on the first H200: NCCL_DEBUG=INFO goes to stdout, into the worker
// protocol. After ReserveStdoutForProtocol a library's printf reaches
// stderr and only the protocol stream reaches the real stdout. In a child,
// since it rewires the process's descriptors.
TEST(ReserveStdoutForProtocolTest, LibraryOutputGoesToStderrAndTheProtocolKeepsStdout) {
  int out[2];
  int err[2];
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_EQ(::pipe(err), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    std::FILE* protocol = ReserveStdoutForProtocol();
    std::printf("vm:855:855 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n");
    std::fflush(stdout);
    std::fputs("note device cuda:0\n", protocol);
    std::fflush(protocol);
    const bool separate = protocol != stdout && ::fileno(protocol) > STDERR_FILENO &&
                          (::fcntl(::fileno(protocol), F_GETFD) & FD_CLOEXEC) != 0;
    ::_exit(separate ? 0 : 1);
  }
  ::close(out[1]);
  ::close(err[1]);
  const std::string to_agent = Drain(out[0]);
  const std::string to_log = Drain(err[0]);
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the protocol stream is stdout itself, or not close-on-exec";
  EXPECT_EQ(to_agent, "note device cuda:0\n");
  EXPECT_EQ(to_log, "vm:855:855 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n");
}

}  // namespace
}  // namespace clustercert::sweep
