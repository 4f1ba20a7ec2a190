#include "agent/collective/collective_registry.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/child_processes.h"

namespace clustercert::agent::collective {
namespace {

using process::testing::FakeWorker;
using process::testing::HasNoChildren;
using process::testing::IsGone;
using process::testing::WaitUntil;

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
constexpr char kCaller[] = "tls:CN=controller";

// "coll-" and 128 random bits as 32 hex digits.
bool IsRandomJobId(const std::string& id) {
  if (!absl::StartsWith(id, "coll-") || id.size() != 5 + 32) return false;
  return std::all_of(id.begin() + 5, id.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

TEST(CollectiveRegistryTest, NumbersJobsAndRefusesASecondWhileOneRuns) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto first = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(IsRandomJobId(*first)) << *first;

  auto second = registry.Start(Launch("allreduce-b", "fake_worker_ok.sh"), kLease, kCaller);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            absl::StrCat("a collective job (allreduce-a, ", *first,
                         ") is already running on this node: wait for it or stop it"));

  ASSERT_TRUE(registry.Stop(*first, kCaller).ok());
  EXPECT_EQ(registry.jobs(), 0u);
  EXPECT_TRUE(HasNoChildren());
  auto third = registry.Start(Launch("allreduce-c", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(IsRandomJobId(*third)) << *third;
  EXPECT_NE(*third, *first);

  auto gone = registry.Poll(*first, kCaller, {});
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(gone.status().message(), "stopped by the controller"))
      << gone.status();
}

TEST(CollectiveRegistryTest, LeaseExpiryKillsTheWorkers) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(id.ok()) << id.status();

  pid_t sleeper = 0;
  ASSERT_TRUE(WaitUntil([&] {
    auto poll = registry.Poll(*id, kCaller, {});
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

  auto late = registry.Poll(*id, kCaller, {});
  EXPECT_EQ(late.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(late.status().message(),
            absl::StrCat("collective job ", *id,
                         " is gone from this node: the controller stopped polling for 30 s "
                         "(controller lost): workers killed"));
}

TEST(CollectiveRegistryTest, PollRenewsTheLease) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(id.ok()) << id.status();
  for (int i = 0; i < 3; ++i) {
    clock.Advance(absl::Seconds(20));
    EXPECT_EQ(registry.Sweep(), 0);
    ASSERT_TRUE(registry.Poll(*id, kCaller, {}).ok());
  }
  EXPECT_EQ(registry.jobs(), 1u);
}

TEST(CollectiveRegistryTest, ExpiryIsCheckedOnEveryCall) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  ASSERT_TRUE(registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller).ok());
  clock.Advance(kLease);
  // No Sweep: Start itself finds the old job's lease gone.
  auto next = registry.Start(Launch("allreduce-b", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(registry.jobs(), 1u);
}

TEST(CollectiveRegistryTest, PollRelaysKeysAndKeepsAFinishedJobUntilStopped) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_ok.sh", {"k1", "6869", "k2"}), kLease,
                           kCaller);
  ASSERT_TRUE(id.ok()) << id.status();

  std::vector<StoreEntry> published;
  std::vector<RowReport> rows;
  bool finished = false;
  ASSERT_TRUE(WaitUntil([&] {
    auto poll = registry.Poll(*id, kCaller, {StoreEntry{"k2", {'o', 'k'}}});
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

  auto again = registry.Poll(*id, kCaller, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->finished);
  ASSERT_EQ(again->ranks.size(), 1u);
  EXPECT_EQ(again->ranks[0].state, RankState::kDone) << again->ranks[0].error;
  EXPECT_TRUE(again->rows.empty());

  // A finished job does not block the next one.
  auto next = registry.Start(Launch("allreduce-b", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(registry.Stop(*id, kCaller).ok());
  EXPECT_EQ(registry.Stop(*id, kCaller).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.jobs(), 1u);
}

TEST(CollectiveRegistryTest, StartErrorsPassThroughAndRefuseABadLease) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  JobLaunch missing{
      "allreduce-a", {WorkerLaunch{0, "/nonexistent/worker", {}, {}}}, absl::Seconds(10)};
  auto failed = registry.Start(missing, kLease, kCaller);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.jobs(), 0u);
  EXPECT_EQ(
      registry.Start(Launch("allreduce-b", "fake_worker_ok.sh"), absl::ZeroDuration(), kCaller)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Poll("coll-9", kCaller, {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(HasNoChildren());
}

TEST(CollectiveRegistryTest, SweeperThreadExpiresLeases) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  ASSERT_TRUE(registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller).ok());
  registry.StartSweeper(absl::Milliseconds(10));
  clock.Advance(kLease + absl::Seconds(1));
  EXPECT_TRUE(WaitUntil([&] { return registry.jobs() == 0; }));
}

// Issue 15: sequential ids ("coll-1") let any caller stop another's job. Ids
// are random now and a job answers only the caller that started it; another
// gets the answer a made-up id gets, and never the job's id or why it went.
TEST(CollectiveRegistryTest, AnotherCallersJobIsAnsweredAsIfItDidNotExist) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(id.ok()) << id.status();
  const std::string intruder = "tls:CN=intruder";
  auto missing = [](const std::string& job) {
    return absl::StrCat("no collective job ", job,
                        " of this caller on this node: start one first (or the agent restarted "
                        "and lost it)");
  };
  auto poll = registry.Poll(*id, intruder, {});
  EXPECT_EQ(poll.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(poll.status().message(), missing(*id));
  absl::Status stop = registry.Stop(*id, intruder);
  EXPECT_EQ(stop.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(stop.message(), missing(*id));
  EXPECT_EQ(registry.jobs(), 1u);  // still there, and still the owner's

  auto busy = registry.Start(Launch("allreduce-b", "fake_worker_ok.sh"), kLease, intruder);
  EXPECT_EQ(busy.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(absl::StrContains(busy.status().message(), *id)) << busy.status();
  EXPECT_TRUE(absl::StrContains(busy.status().message(), "another caller's")) << busy.status();

  ASSERT_TRUE(registry.Stop(*id, kCaller).ok());
  EXPECT_EQ(registry.Poll(*id, intruder, {}).status().message(), missing(*id));
  EXPECT_TRUE(absl::StrContains(registry.Poll(*id, kCaller, {}).status().message(),
                                "stopped by the controller"));
}

// Issue 15: leases up to an hour kept a vanished controller's workers alive.
TEST(CollectiveRegistryTest, LeasesAreAtMostTenMinutes) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto long_lease =
      registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), absl::Seconds(601), kCaller);
  EXPECT_EQ(long_lease.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(long_lease.status().message(),
            "collective job allreduce-a asks for a lease of 10m1s: it must be above 0 and at most "
            "10m (the controller's poll interval plus slack)");
  EXPECT_TRUE(
      registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), absl::Seconds(600), kCaller)
          .ok());
}

// Issue 15: the relay store grew without limit (300 MiB kept after the job
// stopped). One key is at most 1 MiB, a job's store 16 MiB, every job's 64
// MiB, and a finished job's store is freed.
TEST(CollectiveRegistryTest, DeliveriesPastTheStoreCapsAreRefused) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller);
  ASSERT_TRUE(id.ok()) << id.status();

  const std::vector<char> mebibyte(size_t{1} << 20, 'x');
  auto big = registry.Poll(*id, kCaller, {StoreEntry{"k", mebibyte}});
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(big.status().message(), "one key holds at most 1048576"))
      << big.status();

  for (const std::string& key :
       {std::string(), std::string("k2\nset evil 00"), std::string("a b")}) {
    auto odd = registry.Poll(*id, kCaller, {StoreEntry{key, {'x'}}});
    EXPECT_EQ(odd.status().code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_TRUE(absl::StrContains(odd.status().message(), "not one a rank could have published"))
        << odd.status();
  }

  const std::vector<char> value((size_t{1} << 20) - 16, 'x');
  for (int i = 0; i < 16; ++i) {
    auto poll = registry.Poll(*id, kCaller, {StoreEntry{absl::StrCat("key", i), value}});
    ASSERT_TRUE(poll.ok()) << i << ": " << poll.status();
  }
  auto over = registry.Poll(*id, kCaller, {StoreEntry{"one-more", value}});
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(over.status().message(), "would pass its cap of 16777216"))
      << over.status();
  EXPECT_LE(registry.store_bytes(), size_t{16} << 20);
  ASSERT_TRUE(registry.Stop(*id, kCaller).ok());
  EXPECT_EQ(registry.store_bytes(), 0u);
}

TEST(CollectiveRegistryTest, AllJobsTogetherStayUnderTheNodesCap) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  JobLaunch launch = Launch("allreduce-a", "fake_worker_hang.sh");
  launch.store.max_job_bytes = size_t{1} << 30;  // only the node's cap binds
  auto id = registry.Start(launch, kLease, kCaller);
  ASSERT_TRUE(id.ok()) << id.status();
  const std::vector<char> value((size_t{1} << 20) - 16, 'x');
  absl::Status refused;
  for (int i = 0; i < 80 && refused.ok(); ++i) {
    refused = registry.Poll(*id, kCaller, {StoreEntry{absl::StrCat("key", i), value}}).status();
  }
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(refused.message(), "the node's cap of 67108864")) << refused;
  EXPECT_LE(registry.store_bytes(), CollectiveRegistry::kMaxTotalStoreBytes);
}

TEST(CollectiveRegistryTest, AFinishedJobsStoreIsFreed) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  auto id = registry.Start(Launch("allreduce-a", "fake_worker_ok.sh", {"k1", "6869", "k2"}), kLease,
                           kCaller);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(registry.Poll(*id, kCaller, {StoreEntry{"k2", std::vector<char>(4096, 'v')}}).ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto poll = registry.Poll(*id, kCaller, {});
    return poll.ok() && poll->finished;
  }));
  // The job stays for its last Poll to be retried, but holds no store.
  EXPECT_EQ(registry.jobs(), 1u);
  EXPECT_EQ(registry.store_bytes(), 0u);
  // Keys relayed late are dropped, not kept.
  ASSERT_TRUE(registry.Poll(*id, kCaller, {StoreEntry{"late", {'x'}}}).ok());
  EXPECT_EQ(registry.store_bytes(), 0u);
}

// Issue 15: finished jobs are kept for their last Poll; a caller starting
// job after job without stopping them is refused past kMaxJobs.
TEST(CollectiveRegistryTest, AtMostEightJobsAreHeld) {
  FakeClock clock;
  CollectiveRegistry registry(clock.AsFunction());
  for (size_t i = 0; i < CollectiveRegistry::kMaxJobs; ++i) {
    auto id = registry.Start(Launch("allreduce", "fake_worker_exit_silent.sh"), kLease, kCaller);
    ASSERT_TRUE(id.ok()) << i << ": " << id.status();
    ASSERT_TRUE(WaitUntil([&] {
      auto poll = registry.Poll(*id, kCaller, {});
      return poll.ok() && poll->finished;
    }));
  }
  auto ninth = registry.Start(Launch("allreduce", "fake_worker_exit_silent.sh"), kLease, kCaller);
  EXPECT_EQ(ninth.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ninth.status().message(),
            "this node already holds 8 finished collective jobs, the most it keeps: stop them "
            "(StopCollective) or wait for their leases to run out");
  EXPECT_TRUE(HasNoChildren());
}

// Issue 15: spawning every rank held the registry's lock for seconds, so
// every Poll and Stop on the node waited. Start now spawns without it.
TEST(CollectiveRegistryTest, SpawningDoesNotHoldTheRegistry) {
  FakeClock clock;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> spawning{false};
  CollectiveRegistry registry(clock.AsFunction(), [&](JobLaunch launch) {
    if (launch.name == "slow") {
      spawning = true;
      released.wait();  // a spawn that takes as long as the test wants
    }
    return CollectiveJob::Start(std::move(launch));
  });
  auto done = registry.Start(Launch("quick", "fake_worker_exit_silent.sh"), kLease, kCaller);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_TRUE(WaitUntil([&] {
    auto poll = registry.Poll(*done, kCaller, {});
    return poll.ok() && poll->finished;
  }));

  std::future<absl::StatusOr<std::string>> slow = std::async(std::launch::async, [&] {
    return registry.Start(Launch("slow", "fake_worker_hang.sh"), kLease, kCaller);
  });
  ASSERT_TRUE(WaitUntil([&] { return spawning.load(); }));
  // While "slow" spawns: other calls are answered, and the node is held.
  EXPECT_TRUE(registry.Poll(*done, kCaller, {}).ok());
  auto second = registry.Start(Launch("other", "fake_worker_hang.sh"), kLease, kCaller);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "a collective job (slow) is being started on this node: wait for it or stop it");
  EXPECT_TRUE(registry.Stop(*done, kCaller).ok());

  release.set_value();
  absl::StatusOr<std::string> started = slow.get();
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_TRUE(registry.Stop(*started, kCaller).ok());
  EXPECT_TRUE(HasNoChildren());
}

TEST(CollectiveRegistryTest, DestructorLeavesNoProcess) {
  {
    FakeClock clock;
    CollectiveRegistry registry(clock.AsFunction());
    ASSERT_TRUE(registry.Start(Launch("allreduce-a", "fake_worker_hang.sh"), kLease, kCaller).ok());
  }
  EXPECT_TRUE(HasNoChildren());
}

}  // namespace
}  // namespace clustercert::agent::collective
