#include "sweep/worker_main.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace clustercert::sweep
