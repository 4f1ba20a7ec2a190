#include "agent/service/long_calls.h"

#include <future>
#include <vector>

#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

// Issue 15: 1,000 RunEndpoint/RunUplinkFlows calls made 1,454 threads. Past
// the cap a long call is refused at once, and a finished one frees its slot.
TEST(LongCallsTest, CallsPastTheCapAreRefusedUntilOneFinishes) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  LongCalls calls;  // the default cap, 32
  ASSERT_EQ(calls.max_running(), 32u);
  for (size_t i = 0; i < calls.max_running(); ++i) {
    ASSERT_TRUE(calls.Start([released] { released.wait(); }).ok()) << i;
  }
  EXPECT_EQ(calls.running(), 32u);

  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    bool ran = false;
    absl::Status status = calls.Start([&ran] { ran = true; });
    if (absl::IsResourceExhausted(status)) ++refused;
    EXPECT_FALSE(ran);
    if (i == 0) {
      EXPECT_EQ(status.message(),
                "node-agent already runs 32 long calls (RunEndpoint/RunUplinkFlows); wait for "
                "them to finish or raise --max-long-calls");
    }
  }
  EXPECT_EQ(refused, 1000);
  EXPECT_EQ(calls.running(), 32u);

  release.set_value();
  while (calls.running() > 0) std::this_thread::yield();
  std::promise<void> ran;
  ASSERT_TRUE(calls.Start([&ran] { ran.set_value(); }).ok());
  ran.get_future().wait();
}

TEST(LongCallsTest, TheCapIsAConstructorParameter) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  LongCalls calls(2);
  EXPECT_TRUE(calls.Start([released] { released.wait(); }).ok());
  EXPECT_TRUE(calls.Start([released] { released.wait(); }).ok());
  const absl::Status third = calls.Start([] {});
  EXPECT_TRUE(absl::IsResourceExhausted(third));
  EXPECT_NE(third.message().find("already runs 2 long calls"), absl::string_view::npos);
  release.set_value();  // the destructor joins both
}

}  // namespace
}  // namespace clustercert::agent
