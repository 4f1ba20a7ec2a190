#include "agent/collective/collective_registry.h"

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "tests/unit/agent_collective/fake_workers.h"

namespace clustercert::agent::collective {
namespace {

using testing::FakeWorker;
using testing::HasNoChildren;
using testing::IsGone;
using testing::WaitUntil;

// A clock the test moves by hand; atomic because the sweeper thread reads it.
class FakeClock {
 public:
  absl::Time Now() const { return absl::FromUnixNanos(nanos_.load()); }
  void Advance(absl::Duration by) { nanos_ += absl::ToInt64Nanoseconds(by); }
  std::function<absl::Time()> AsFunction() {
    return [this] { return Now(); };
  }

 private:
  std::atomic<int64_t> nanos_{absl::ToUnixNanos(absl::FromUnixSeconds(1'700'000'000))};
};

JobLaunch Launch(const std::string& name, const std::string& script,
                 std::vector<std::string> args = {}) {
  return JobLaunch{
      name, {WorkerLaunch{0, FakeWorker(script), std::move(args), {}}}, absl::Seconds(10)};
}

constexpr absl::Duration kLease = absl::Seconds(30);

TEST(CollectiveRegistryTest, NumbersJobsAndRefusesASecondWhileOneRuns) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto first = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "coll-1");

  auto second = registry.Start(Launch("allreduce-b", "fake_worker_ok.sh"), kLease);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "a collective job (allreduce-a, coll-1) is already running on this node: wait for it "
            "or stop it");

  ASSERT_TRUE(registry.Stop(*first).ok());
  EXPECT_EQ(registry.jobs(), 0u);
  EXPECT_TRUE(HasNoChildren());
  auto third = registry.Start(Launch("allreduce-c", "fake_worker_hang.sh"), kLease);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(*third, "coll-2");

  auto gone = registry.Poll(*first, {});
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(gone.status().message(), "stopped by the controller"))
      << gone.status();
}

TEST(CollectiveRegistryTest, LeaseExpiryKillsTheWorkers) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease);
  ASSERT_TRUE(id.ok()) << id.status();

  pid_t sleeper = 0;
  ASSERT_TRUE(WaitUntil([&] {
    auto poll = registry.Poll(*id, {});
    return poll.ok() && !poll->ranks[0].notes.empty() &&
           absl::SimpleAtoi(poll->ranks[0].notes[0].substr(poll->ranks[0].notes[0].rfind(" ") + 1),
                            &sleeper);
  }));

  clock.Advance(kLease - absl::Seconds(1));
  EXPECT_EQ(registry.Sweep(), 0);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(registry.Sweep(), 1);
  EXPECT_EQ(registry.jobs(), 0u);
  EXPECT_TRUE(HasNoChildren());
  EXPECT_TRUE(WaitUntil([&] { return IsGone(sleeper); }));

  auto late = registry.Poll(*id, {});
  EXPECT_EQ(late.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(late.status().message(),
            "collective job coll-1 is gone from this node: the controller stopped polling for 30 s "
            "(controller lost): workers killed");
}

TEST(CollectiveRegistryTest, PollRenewsTheLease) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease);
  ASSERT_TRUE(id.ok()) << id.status();
  for (int i = 0; i < 3; ++i) {
    clock.Advance(absl::Seconds(20));
    EXPECT_EQ(registry.Sweep(), 0);
    ASSERT_TRUE(registry.Poll(*id, {}).ok());
  }
  EXPECT_EQ(registry.jobs(), 1u);
}

TEST(CollectiveRegistryTest, ExpiryIsCheckedOnEveryCall) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  ASSERT_TRUE(registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease).ok());
  clock.Advance(kLease);
  // No Sweep: Start itself finds the old job's lease gone.
  auto next = registry.Start(Launch("allreduce-b", "fake_worker_hang.sh"), kLease);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(registry.jobs(), 1u);
}

TEST(CollectiveRegistryTest, PollRelaysKeysAndKeepsAFinishedJobUntilStopped) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id =
      registry.Start(Launch("allreduce-a", "fake_worker_ok.sh", {"k1", "6869", "k2"}), kLease);
  ASSERT_TRUE(id.ok()) << id.status();

  std::vector<StoreEntry> published;
  std::vector<RowReport> rows;
  bool finished = false;
  ASSERT_TRUE(WaitUntil([&] {
    auto poll = registry.Poll(*id, {StoreEntry{"k2", {'o', 'k'}}});
    if (!poll.ok()) return false;
    published.insert(published.end(), poll->published.begin(), poll->published.end());
    rows.insert(rows.end(), poll->rows.begin(), poll->rows.end());
    finished = poll->finished;
    return finished;
  }));
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published[0].key, "k1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].rank, 0);

  auto again = registry.Poll(*id, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->finished);
  ASSERT_EQ(again->ranks.size(), 1u);
  EXPECT_EQ(again->ranks[0].state, RankState::kDone) << again->ranks[0].error;
  EXPECT_TRUE(again->rows.empty());

  // A finished job does not block the next one.
  auto next = registry.Start(Launch("allreduce-b", "fake_worker_hang.sh"), kLease);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(registry.Stop(*id).ok());
  EXPECT_EQ(registry.Stop(*id).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.jobs(), 1u);
}

TEST(CollectiveRegistryTest, StartErrorsPassThroughAndRefuseABadLease) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  JobLaunch missing{
      "allreduce-a", {WorkerLaunch{0, "/nonexistent/worker", {}, {}}}, absl::Seconds(10)};
  auto failed = registry.Start(missing, kLease);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.jobs(), 0u);
  EXPECT_EQ(registry.Start(Launch("allreduce-b", "fake_worker_ok.sh"), absl::ZeroDuration())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Poll("coll-9", {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasNoChildren());
}

TEST(CollectiveRegistryTest, SweeperThreadExpiresLeases) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  ASSERT_TRUE(registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease).ok());
  registry.StartSweeper(absl::Milliseconds(10));
  clock.Advance(kLease + absl::Seconds(1));
  EXPECT_TRUE(WaitUntil([&] { return registry.jobs() == 0; }));
}

TEST(CollectiveRegistryTest, DestructorLeavesNoProcess) {
  {
    FakeClock clock;
    CollectiveRegistry registry(clock.AsFunction());
    ASSERT_TRUE(registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease).ok());
  }
  EXPECT_TRUE(HasNoChildren());
}

}  // namespace
}  // namespace clustercert::agent::collective
