#include "agent/service/pooled_call.h"

#include <atomic>
#include <future>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

// Issue 34: 400 GetInventory calls with 1 s deadlines kept their work queued
// after the callers gave up, and the next PrepareEndpoint waited 21 s. Calls
// whose caller gave up while a blocked worker held the queue are answered
// (dropped) and their work never runs; the others run in order.
TEST(PooledCallTest, WorkOfCallersThatGaveUpWhileQueuedNeverRuns) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> ran;
  std::vector<int> dropped;
  {
    WorkerPool pool(1);
    pool.Submit([released] { released.wait(); });  // the one worker is busy
    auto gave_up = std::make_shared<std::vector<std::atomic<bool>>>(6);
    for (int call = 0; call < 6; ++call) {
      SubmitUnlessGaveUp(
          pool, [gave_up, call] { return (*gave_up)[call].load(); },
          [&ran, call] { ran.push_back(call); }, [&dropped, call] { dropped.push_back(call); });
    }
    // While they queue, the callers of calls 0, 2, 3 and 5 give up.
    for (int call : {0, 2, 3, 5}) (*gave_up)[call] = true;
    release.set_value();
  }  // the pool drains and joins
  EXPECT_EQ(ran, (std::vector<int>{1, 4}));
  EXPECT_EQ(dropped, (std::vector<int>{0, 2, 3, 5}));
}

}  // namespace
}  // namespace clustercert::agent
