#include "agent/peer/endpoint_registry.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace clustercert::peer {
namespace {

// Counts live endpoints so tests can prove the registry frees them.
struct Tally {
  std::atomic<int> alive{0};
  std::atomic<int> connects{0};
};

class FakeEndpoint final : public PeerEndpoint {
 public:
  FakeEndpoint(Tally& tally, absl::Duration run_for) : tally_(tally), run_for_(run_for) {
    ++tally_.alive;
    info_.set_address("10.0.0.1");
    info_.set_tcp_port(4242);
  }
  ~FakeEndpoint() override { --tally_.alive; }
  const v1::EndpointInfo& local_info() const override { return info_; }
  absl::Status Connect(const v1::EndpointInfo& peer, absl::Time) override {
    ++tally_.connects;
    return peer.tcp_port() == 0 ? absl::InvalidArgumentError("peer has no port") : absl::OkStatus();
  }
  absl::StatusOr<v1::PeerTestResult> Run(absl::Time) override {
    absl::SleepFor(run_for_);
    v1::PeerTestResult result;
    result.set_detail("fake");
    return result;
  }

 private:
  Tally& tally_;
  absl::Duration run_for_;
  v1::EndpointInfo info_;
};

class FakeEngine final : public PeerEngine {
 public:
  explicit FakeEngine(Tally& tally) : tally_(tally) {}
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> Prepare(const v1::PeerTestSpec& spec) override {
    if (spec.message_bytes() > (64u << 20)) return absl::InvalidArgumentError("too big");
    return std::make_unique<FakeEndpoint>(tally_, run_for);
  }
  absl::Duration run_for = absl::ZeroDuration();

 private:
  Tally& tally_;
};

class EndpointRegistryTest : public ::testing::Test {
 protected:
  v1::PrepareEndpointRequest Request(const std::string& ip, const std::string& test = "t1") {
    v1::PrepareEndpointRequest request;
    request.mutable_spec()->set_engine("tcp");
    request.mutable_spec()->set_data_ip(ip);
    request.set_test_id(test);
    request.set_lease_s(10);
    return request;
  }
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  Tally tally_;
  FakeEngine engine_{tally_};
  EndpointRegistry registry_{{{"tcp", &engine_}}, [this] { return now_; }};
};

TEST_F(EndpointRegistryTest, PrepareConnectRunClose) {
  auto prepared = registry_.Prepare(Request("10.0.0.1"));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->info().tcp_port(), 4242u);
  v1::ConnectEndpointRequest connect;
  connect.set_endpoint_id(prepared->endpoint_id());
  connect.mutable_peer()->set_tcp_port(1);
  EXPECT_TRUE(registry_.Connect(connect).ok());
  v1::RunEndpointRequest run;
  run.set_endpoint_id(prepared->endpoint_id());
  auto result = registry_.Run(run);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->detail(), "fake");
  EXPECT_TRUE(registry_.Close(prepared->endpoint_id()).ok());
  EXPECT_EQ(tally_.alive, 0);
  EXPECT_TRUE(absl::IsNotFound(registry_.Close(prepared->endpoint_id())));
}

TEST_F(EndpointRegistryTest, SecondTestOnABusyDeviceIsRefusedNamingTheHolder) {
  auto first = registry_.Prepare(Request("10.0.0.1", "node1-node2-write_bw"));
  ASSERT_TRUE(first.ok());
  auto second = registry_.Prepare(Request("10.0.0.1", "node1-node3-write_bw"));
  ASSERT_TRUE(absl::IsResourceExhausted(second.status()));
  EXPECT_NE(second.status().message().find("node1-node2-write_bw"), absl::string_view::npos);
  EXPECT_TRUE(registry_.Prepare(Request("10.0.0.2")).ok());  // another device is free
  ASSERT_TRUE(registry_.Close(first->endpoint_id()).ok());
  EXPECT_TRUE(registry_.Prepare(Request("10.0.0.1")).ok());
}

TEST_F(EndpointRegistryTest, LeaseRunsOutWhenTheControllerVanishes) {
  auto prepared = registry_.Prepare(Request("10.0.0.1"));
  ASSERT_TRUE(prepared.ok());
  now_ += absl::Seconds(9);
  EXPECT_EQ(registry_.ReapExpired(), 0);
  v1::ConnectEndpointRequest connect;  // a call renews the lease
  connect.set_endpoint_id(prepared->endpoint_id());
  connect.mutable_peer()->set_tcp_port(1);
  ASSERT_TRUE(registry_.Connect(connect).ok());
  now_ += absl::Seconds(9);
  EXPECT_EQ(registry_.ReapExpired(), 0);
  now_ += absl::Seconds(2);
  EXPECT_EQ(registry_.ReapExpired(), 1);
  EXPECT_EQ(tally_.alive, 0);
  EXPECT_EQ(registry_.active(), 0u);
  EXPECT_TRUE(absl::IsNotFound(registry_.Connect(connect)));
}

TEST_F(EndpointRegistryTest, BoundsAreRejectedNotObeyed) {
  auto request = Request("10.0.0.1");
  request.set_lease_s(0);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Prepare(request).status()));
  request.set_lease_s(100000);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Prepare(request).status()));
  request = Request("10.0.0.1");
  request.mutable_spec()->set_message_bytes(1ull << 40);  // a 1 TB buffer
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Prepare(request).status()));
  request = Request("10.0.0.1");
  request.mutable_spec()->set_engine("carrier-pigeon");
  auto status = registry_.Prepare(request).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("tcp"), absl::string_view::npos);
  auto prepared = registry_.Prepare(Request("10.0.0.1"));
  ASSERT_TRUE(prepared.ok());
  v1::RunEndpointRequest run;
  run.set_endpoint_id(prepared->endpoint_id());
  run.set_timeout_ms(4'000'000'000u);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Run(run).status()));
}

TEST(EndpointRegistryThreadsTest, CloseIsNotBlockedByARunningTestAndReaperFrees) {
  Tally tally;
  FakeEngine engine(tally);
  engine.run_for = absl::Milliseconds(300);
  EndpointRegistry registry({{"tcp", &engine}}, [] { return absl::Now(); });
  v1::PrepareEndpointRequest request;
  request.mutable_spec()->set_engine("tcp");
  request.mutable_spec()->set_data_ip("10.0.0.1");
  request.set_lease_s(1);
  auto prepared = registry.Prepare(request);
  ASSERT_TRUE(prepared.ok());
  v1::RunEndpointRequest run;
  run.set_endpoint_id(prepared->endpoint_id());
  std::thread runner([&] { EXPECT_TRUE(registry.Run(run).ok()); });
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Time start = absl::Now();
  EXPECT_TRUE(registry.Close(prepared->endpoint_id()).ok());
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(100));
  runner.join();
  EXPECT_EQ(tally.alive, 0);  // the run held the last reference

  auto leased = registry.Prepare(request);
  ASSERT_TRUE(leased.ok());
  registry.StartReaper(absl::Milliseconds(50));
  for (int i = 0; i < 60 && tally.alive > 0; ++i) absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(tally.alive, 0);
}

}  // namespace
}  // namespace clustercert::peer
