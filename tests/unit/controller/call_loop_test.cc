// The CallLoop: continuations of agent calls run on the loop's thread, one
// at a time, whichever thread answered; a dropped callback still continues;
// nothing is left out when it drains.
#include "controller/phases/call_loop.h"

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

TEST(CallLoopTest, ContinuationsRunOnTheLoopThreadWhicheverThreadAnswers) {
  CallLoop loop;
  const std::thread::id loop_thread = std::this_thread::get_id();
  std::vector<std::thread::id> ran_on;
  std::vector<std::thread> answering;
  for (int i = 0; i < 8; ++i) {
    AgentCallback<v1::GetVersionResponse> done =
        loop.Bind<v1::GetVersionResponse>([&](absl::StatusOr<v1::GetVersionResponse> answer) {
          EXPECT_TRUE(answer.ok());
          ran_on.push_back(std::this_thread::get_id());  // no lock: one thread
        });
    answering.emplace_back([done = std::move(done)] { done(v1::GetVersionResponse(), {}); });
  }
  loop.RunUntil([&] { return ran_on.size() == 8; });
  for (auto& thread : answering) thread.join();
  for (const auto& id : ran_on) EXPECT_EQ(id, loop_thread);
}

TEST(CallLoopTest, AnInlineAnswerIsQueuedNotRunInsideTheCall) {
  CallLoop loop;
  bool continued = false;
  AgentCallback<v1::GetVersionResponse> done = loop.Bind<v1::GetVersionResponse>(
      [&](const absl::StatusOr<v1::GetVersionResponse>&) { continued = true; });
  done(v1::GetVersionResponse(), {});  // as a fake that answers at once
  EXPECT_FALSE(continued);
  loop.RunUntil([&] { return continued; });
  EXPECT_TRUE(continued);
}

TEST(CallLoopTest, ACallbackDroppedUnansweredContinuesWithAnInternalError) {
  CallLoop loop;
  absl::Status seen;
  {
    AgentCallback<v1::GetVersionResponse> done = loop.Bind<v1::GetVersionResponse>(
        [&](const absl::StatusOr<v1::GetVersionResponse>& answer) { seen = answer.status(); });
  }  // a broken client drops it
  loop.Drain();
  EXPECT_EQ(seen.code(), absl::StatusCode::kInternal);
  EXPECT_NE(seen.message().find("dropped the call"), std::string::npos) << seen;
}

TEST(CallLoopTest, DrainWaitsForCallsStillOutAndRunsWhatTheyQueue) {
  int continued = 0;
  std::thread late;
  {
    CallLoop loop;
    AgentCallback<v1::GetVersionResponse> done = loop.Bind<v1::GetVersionResponse>(
        [&](const absl::StatusOr<v1::GetVersionResponse>&) { ++continued; });
    late = std::thread([done = std::move(done)] { done(v1::GetVersionResponse(), {}); });
    loop.Post([&] { ++continued; });
  }  // the destructor drains
  late.join();
  EXPECT_EQ(continued, 2);
}

TEST(CallLoopTest, TicksRunWhileNothingIsQueued) {
  CallLoop loop;
  int ticks = 0;
  loop.RunUntil([&] { return ticks == 3; }, absl::Milliseconds(1), [&] { ++ticks; });
  EXPECT_EQ(ticks, 3);
}

// A round of many pairs answers without pause: the live-progress tick must
// still come (a task that queues itself again stands for that stream).
TEST(CallLoopTest, TicksComeEvenWhileTasksNeverStopArriving) {
  CallLoop loop;
  int ticks = 0;
  bool stop = false;
  std::function<void()> again = [&] {
    if (!stop) loop.Post(again);
  };
  loop.Post(again);
  loop.RunUntil([&] { return ticks == 2; }, absl::Milliseconds(1), [&] { ++ticks; });
  stop = true;
  loop.Drain();
  EXPECT_EQ(ticks, 2);
}

TEST(CallLoopTest, ASecondAnswerToOneCallIsIgnored) {
  CallLoop loop;
  int continued = 0;
  AgentCallback<v1::GetVersionResponse> done = loop.Bind<v1::GetVersionResponse>(
      [&](const absl::StatusOr<v1::GetVersionResponse>&) { ++continued; });
  done(v1::GetVersionResponse(), {});
  done(absl::UnavailableError("late duplicate"), {});  // a broken client
  loop.Drain();
  EXPECT_EQ(continued, 1);
}

}  // namespace
}  // namespace clustercert::controller
