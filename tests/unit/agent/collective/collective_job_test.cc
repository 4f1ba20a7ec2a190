#include "agent/collective/collective_job.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/child_processes.h"
#include "tests/support/fake_process_spawner.h"

namespace clustercert::agent::collective {
namespace {

using process::testing::FakeWorker;
using process::testing::HasNoChildren;
using process::testing::IsGone;
using process::testing::WaitUntil;

WorkerLaunch Worker(int rank, const std::string& script, std::vector<std::string> args = {},
                    std::map<std::string, std::string> env = {}) {
  return WorkerLaunch{rank, FakeWorker(script), std::move(args), std::move(env)};
}

JobLaunch Job(std::vector<WorkerLaunch> workers, absl::Duration timeout = absl::Seconds(10)) {
  return JobLaunch{"allreduce-test", std::move(workers), timeout};
}

std::unique_ptr<CollectiveJob> StartOrDie(JobLaunch launch) {
  auto job = CollectiveJob::Start(std::move(launch));
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? *std::move(job) : nullptr;
}

bool HasLine(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The grandchild pid the hang worker reports in its note "sleeper PID".
pid_t SleeperPid(const CollectiveJob& job, int index) {
  pid_t pid = 0;
  WaitUntil([&] { return !job.Ranks()[index].notes.empty(); });
  auto notes = job.Ranks()[index].notes;
  if (notes.empty() || !absl::SimpleAtoi(notes[0].substr(notes[0].rfind(' ') + 1), &pid)) {
    ADD_FAILURE() << "the hang worker did not report its sleeper";
  }
  return pid;
}

TEST(CollectiveJobTest, TwoWorkersExchangeKeysThroughTheStore) {
  auto job = StartOrDie(
      Job({Worker(0, "fake_worker_ok.sh", {"k0", "6161", "k1"}, {{"FAKE_WORKER_TAG", "r0"}}),
           Worker(1, "fake_worker_ok.sh", {"k1", "6262", "k0"})}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));

  auto ranks = job->Ranks();
  ASSERT_EQ(ranks.size(), 2u);
  for (const auto& rank : ranks) {
    EXPECT_EQ(rank.state, RankState::kDone) << rank.error;
    EXPECT_EQ(rank.exit_code, 0);
    EXPECT_EQ(rank.signal, 0);
    EXPECT_TRUE(rank.error.empty()) << rank.error;
  }
  EXPECT_EQ(ranks[0].rank, 0);
  EXPECT_EQ(ranks[1].rank, 1);
  EXPECT_TRUE(HasLine(ranks[0].notes, "got value k1 6262"));
  EXPECT_TRUE(HasLine(ranks[1].notes, "got value k0 6161"));
  EXPECT_TRUE(HasLine(ranks[0].notes, "tag=r0"));
  EXPECT_TRUE(HasLine(ranks[1].notes, "tag=none"));
  EXPECT_TRUE(HasLine(ranks[0].log, "starting as tag=r0"));
  EXPECT_TRUE(HasLine(ranks[0].log,
                      "[agent] ignored a stdout line that is not the worker protocol: this line "
                      "is not the worker protocol"));

  auto published = job->TakePublished();
  ASSERT_EQ(published.size(), 2u);
  std::map<std::string, std::string> keys;
  for (const auto& entry : published) {
    keys[entry.key] = std::string(entry.value.begin(), entry.value.end());
  }
  EXPECT_EQ(keys["k0"], "aa");
  EXPECT_EQ(keys["k1"], "bb");
  EXPECT_TRUE(job->TakePublished().empty());

  auto rows = job->TakeRows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].rank, rows[1].rank);
  for (const auto& row : rows) {
    EXPECT_TRUE(absl::StartsWith(row.line, "row bytes=8 count=2 ")) << row.line;
  }
  EXPECT_TRUE(job->TakeRows().empty());
}

TEST(CollectiveJobTest, DeliverAnswersAPendingGet) {
  auto job = StartOrDie(Job({Worker(0, "fake_worker_ok.sh", {"k1", "6869", "k2"})}));
  ASSERT_NE(job, nullptr);
  std::vector<StoreEntry> published;
  ASSERT_TRUE(WaitUntil([&] {
    auto more = job->TakePublished();
    published.insert(published.end(), more.begin(), more.end());
    return !published.empty();
  }));
  EXPECT_EQ(published[0].key, "k1");
  // The worker now waits for k2, which only the controller can bring: the
  // job holds its get, and the worker cannot go on without the answer.
  ASSERT_TRUE(WaitUntil([&] { return job->AwaitedKeys() == std::vector<std::string>{"k2"}; }));
  EXPECT_FALSE(job->Finished());

  ASSERT_TRUE(job->Deliver({StoreEntry{"k2", {'x', 'y', 'z'}}}).ok());
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kDone) << rank.error;
  EXPECT_TRUE(HasLine(rank.notes, "got value k2 78797a"));
  EXPECT_TRUE(job->AwaitedKeys().empty());
  EXPECT_TRUE(job->TakePublished().empty()) << "a delivered key is not published back";
}

TEST(CollectiveJobTest, KeyDeliveredBeforeTheGetIsAnsweredAtOnce) {
  auto job = StartOrDie(Job({Worker(0, "fake_worker_ok.sh", {"k1", "6869", "late"})}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(job->Deliver({StoreEntry{"late", {'o', 'k'}}}).ok());
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kDone) << rank.error;
  EXPECT_TRUE(HasLine(rank.notes, "got value late 6f6b"));
}

TEST(CollectiveJobTest, FailSentenceBecomesTheError) {
  auto job = StartOrDie(Job({Worker(0, "fake_worker_fail.sh")}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kFailed);
  EXPECT_EQ(rank.error, "rank 0 cannot reach 10.0.0.2:29500: check that the peer's agent runs");
  EXPECT_EQ(rank.exit_code, 1);
  EXPECT_TRUE(HasLine(rank.log, "connecting"));
}

TEST(CollectiveJobTest, CrashNamesTheSignalAndTheLastLogLine) {
  auto job = StartOrDie(Job({Worker(3, "fake_worker_crash.sh")}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kFailed);
  EXPECT_EQ(rank.signal, SIGSEGV);
  EXPECT_EQ(rank.exit_code, -1);
  EXPECT_EQ(rank.error,
            "rank 3 was killed by signal 11 (SIGSEGV); its last stderr line: \"about to touch a "
            "bad pointer\"");
}

TEST(CollectiveJobTest, ExitWithoutDoneNamesTheCode) {
  auto job = StartOrDie(Job({Worker(0, "fake_worker_exit_silent.sh")}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kFailed);
  EXPECT_EQ(rank.exit_code, 3);
  EXPECT_EQ(rank.error,
            "rank 0 exited with code 3 without saying done; its last stderr line: \"boom: out of "
            "memory\"");
}

TEST(CollectiveJobTest, HangingRankIsKilledAtTheDeadline) {
  const auto started = std::chrono::steady_clock::now();
  auto job = StartOrDie(Job({Worker(0, "fake_worker_hang.sh")}, absl::Seconds(1)));
  ASSERT_NE(job, nullptr);
  const pid_t sleeper = SleeperPid(*job, 0);
  EXPECT_FALSE(job->Finished());
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_GE(elapsed, std::chrono::milliseconds(950));
  EXPECT_LT(elapsed, std::chrono::milliseconds(3000));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kFailed);
  EXPECT_EQ(rank.signal, SIGKILL);
  EXPECT_EQ(rank.error,
            "rank 0 ran past the job's deadline of 1 s and was killed: a rank that hangs usually "
            "waits for a peer that never joined; check the other ranks' errors");
  EXPECT_TRUE(WaitUntil([&] { return IsGone(sleeper); }));
}

TEST(CollectiveJobTest, OneFailedRankDoesNotKillTheOthers) {
  // Rank 1 waits for a key only the controller brings; rank 2 hangs.
  auto job = StartOrDie(
      Job({Worker(0, "fake_worker_fail.sh"), Worker(1, "fake_worker_ok.sh", {"k1", "6869", "go"}),
           Worker(2, "fake_worker_hang.sh")}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return job->Ranks()[0].state == RankState::kFailed; }));
  EXPECT_EQ(job->Ranks()[1].state, RankState::kRunning);
  EXPECT_EQ(job->Ranks()[2].state, RankState::kRunning);
  EXPECT_FALSE(job->Finished());
  // Rank 1 outlived rank 0's failure: given its key, it finishes cleanly
  // (a rank killed for rank 0's sake could not).
  ASSERT_TRUE(job->Deliver({StoreEntry{"go", {'o', 'k'}}}).ok());
  ASSERT_TRUE(WaitUntil([&] { return job->Ranks()[1].state != RankState::kRunning; }));
  EXPECT_EQ(job->Ranks()[1].state, RankState::kDone) << job->Ranks()[1].error;
  EXPECT_EQ(job->Ranks()[2].state, RankState::kRunning);
  EXPECT_FALSE(job->Finished());

  job->Cancel("rank 0 failed elsewhere: the controller cancelled the job");
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto ranks = job->Ranks();
  EXPECT_EQ(ranks[2].state, RankState::kFailed);
  EXPECT_EQ(ranks[2].error, "rank 0 failed elsewhere: the controller cancelled the job");
  EXPECT_EQ(ranks[2].signal, SIGKILL);
  // Cancel does not rewrite a rank that had already ended.
  EXPECT_EQ(ranks[0].error, "rank 0 cannot reach 10.0.0.2:29500: check that the peer's agent runs");
  EXPECT_EQ(ranks[1].state, RankState::kDone);
  EXPECT_TRUE(ranks[1].error.empty()) << ranks[1].error;
}

// Each rank is started through the job's spawner with the launch's
// executable, args and env, exactly as the agent resolved them.
TEST(CollectiveJobTest, StartsEachRankThroughItsSpawner) {
  process::testing::FakeProcessSpawner spawner;
  spawner.Substitute("/opt/clustercert/libexec/collective-worker-gloo",
                     FakeWorker("fake_worker_ok.sh"));
  WorkerLaunch rank0{0,
                     "/opt/clustercert/libexec/collective-worker-gloo",
                     {"k0", "6161", "k0"},
                     {{"FAKE_WORKER_TAG", "r0"}}};
  auto job = CollectiveJob::Start(Job({rank0}), spawner);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(WaitUntil([&] { return (*job)->Finished(); }));
  EXPECT_EQ((*job)->Ranks()[0].exit_code, 0);
  ASSERT_EQ(spawner.requests().size(), 1u);
  EXPECT_EQ(spawner.requests()[0].executable, "/opt/clustercert/libexec/collective-worker-gloo");
  EXPECT_EQ(spawner.requests()[0].args, rank0.args);
  EXPECT_EQ(spawner.requests()[0].env, rank0.env);
}

TEST(CollectiveJobTest, ExecFailureFailsStartAndLeavesNoProcess) {
  WorkerLaunch missing{1, "/nonexistent/collective-worker-gloo", {}, {}};
  auto job = CollectiveJob::Start(Job({Worker(0, "fake_worker_hang.sh"), missing}));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(job.status().message(),
            "collective job allreduce-test, rank 1: cannot start "
            "/nonexistent/collective-worker-gloo: No such file or directory; build it (bash "
            "scripts/build.sh) or pass --worker-dir");
  EXPECT_TRUE(HasNoChildren());
}

TEST(CollectiveJobTest, StartRefusesMalformedLaunches) {
  EXPECT_EQ(CollectiveJob::Start(Job({})).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CollectiveJob::Start(Job({Worker(0, "fake_worker_ok.sh")}, absl::ZeroDuration()))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  auto twice =
      CollectiveJob::Start(Job({Worker(2, "fake_worker_ok.sh"), Worker(2, "fake_worker_ok.sh")}));
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(twice.status().message(), "rank 2")) << twice.status();
  EXPECT_TRUE(HasNoChildren());
}

TEST(CollectiveJobTest, LogIsCappedButKeepsTransportLines) {
  auto job = StartOrDie(Job({Worker(0, "fake_worker_noisy.sh")}));
  ASSERT_NE(job, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  auto rank = job->Ranks()[0];
  EXPECT_EQ(rank.state, RankState::kDone) << rank.error;
  ASSERT_EQ(rank.log.size(), static_cast<size_t>(CollectiveJob::kMaxLogLines));
  EXPECT_EQ(rank.log_lines_dropped, 5000 - CollectiveJob::kMaxLogLines);
  int channels = 0;
  for (const auto& line : rank.log) channels += absl::StrContains(line, "NCCL INFO Channel ");
  EXPECT_EQ(channels, 50);
  // The early lines survive although thousands followed, in arrival order.
  EXPECT_EQ(rank.log[0], "node1:1:1 [0] NCCL INFO Using network IB");
  EXPECT_EQ(rank.log[1], "node1:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA");
  EXPECT_EQ(rank.log.back(),
            "node1:1:2 [0] NCCL INFO Channel 50/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA");
  EXPECT_EQ(rank.log[rank.log.size() - 2], "noise line 4999");
  EXPECT_FALSE(HasLine(rank.log, "noise line 1"));
}

TEST(CollectiveJobTest, DestructorKillsAndReapsWhatStillRuns) {
  pid_t sleeper = 0;
  {
    auto job =
        StartOrDie(Job({Worker(0, "fake_worker_hang.sh"), Worker(1, "fake_worker_hang.sh")}));
    ASSERT_NE(job, nullptr);
    sleeper = SleeperPid(*job, 1);
  }
  EXPECT_TRUE(HasNoChildren());
  EXPECT_TRUE(WaitUntil([&] { return IsGone(sleeper); }));
}

TEST(CollectiveJobTest, CallsFromManyThreadsWhileWorkersRun) {
  auto job = StartOrDie(
      Job({Worker(0, "fake_worker_ok.sh", {"a0", "00", "b0"}),
           Worker(1, "fake_worker_ok.sh", {"a1", "01", "b1"}), Worker(2, "fake_worker_noisy.sh")}));
  ASSERT_NE(job, nullptr);
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        EXPECT_TRUE(job->Deliver({StoreEntry{absl::StrCat("b", i % 2), {'z'}},
                                  StoreEntry{absl::StrCat("x", t), {}}})
                        .ok());
        job->TakePublished();
        job->TakeRows();
        job->Ranks();
        job->Finished();
      }
    });
  }
  for (auto& caller : callers) caller.join();
  ASSERT_TRUE(WaitUntil([&] { return job->Finished(); }));
  for (const auto& rank : job->Ranks()) EXPECT_EQ(rank.state, RankState::kDone) << rank.error;
}

}  // namespace
}  // namespace clustercert::agent::collective
