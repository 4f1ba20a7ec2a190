#include "agent/peer/endpoint_registry.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/completion.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "tests/support/simulated_clock.h"

namespace clustercert::agent::peer {
namespace {

constexpr char kCaller[] = "tls:CN=controller";

// Counts live endpoints so tests can prove the registry frees them, and
// lets a test follow a run on another thread without sleeping.
struct Tally {
  std::atomic<int> alive{0};
  std::atomic<int> connects{0};
  std::atomic<int> cancels{0};
  Completion run_started;                // a Run that lasts is under way
  Completion run_released;               // the test lets a cancelled Run return
  Completion run_returned;               // that Run is returning
  std::function<void()> during_connect;  // runs inside Connect, e.g. to move time on

  // True once no endpoint is alive, within `timeout` (a bound for a failing
  // test; a passing one is woken by the last endpoint's destructor).
  bool WaitUntilNoneAlive(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    return freed.wait_for(lock, absl::ToChronoNanoseconds(timeout), [this] { return alive == 0; });
  }
  void Freed() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      --alive;
    }
    freed.notify_all();
  }

  std::mutex mutex;
  std::condition_variable freed;
};

class FakeEndpoint final : public PeerEndpoint {
 public:
  FakeEndpoint(Tally& tally, absl::Duration run_for) : tally_(tally), run_for_(run_for) {
    ++tally_.alive;
    info_.set_address("10.0.0.1");
    info_.set_tcp_port(4242);
  }
  ~FakeEndpoint() override { tally_.Freed(); }
  void Cancel() override {
    ++tally_.cancels;
    cancelled_.Notify();
  }
  const v1::EndpointInfo& local_info() const override { return info_; }
  absl::Status Connect(const v1::EndpointInfo& peer, absl::Time) override {
    ++tally_.connects;
    if (tally_.during_connect) tally_.during_connect();
    return peer.tcp_port() == 0 ? absl::InvalidArgumentError("peer has no port") : absl::OkStatus();
  }
  // What a tcp endpoint's probe finds on a route shortened to 1500.
  v1::PathMtu path_mtu() const override {
    v1::PathMtu mtu;
    mtu.set_local_route_mtu(9000);
    mtu.set_route_mtu(1500);
    mtu.set_peer_address("10.0.0.2");
    return mtu;
  }
  // Returns at once for a zero run_for; otherwise runs until cancelled (as
  // the engines do: verbs polls a flag, tcp sees its sockets close), or for
  // run_for if nobody cancels it. A cancelled run returns only once the test
  // releases it, so the test can see who waited for whom.
  absl::StatusOr<v1::PeerTestResult> Run(absl::Time) override {
    if (run_for_ > absl::ZeroDuration()) {
      tally_.run_started.Notify();
      if (cancelled_.WaitFor(run_for_)) {
        tally_.run_released.WaitFor(absl::Seconds(10));  // a bound for a failing test
        tally_.run_returned.Notify();
        return absl::CancelledError("stopped by the controller");
      }
    }
    v1::PeerTestResult result;
    result.set_detail("fake");
    return result;
  }

 private:
  Tally& tally_;
  absl::Duration run_for_;
  Completion cancelled_;
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
  auto prepared = registry_.Prepare(Request("10.0.0.1"), kCaller);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->info().tcp_port(), 4242u);
  v1::ConnectEndpointRequest connect;
  connect.set_endpoint_id(prepared->endpoint_id());
  connect.mutable_peer()->set_tcp_port(1);
  // The answer carries the path MTU the endpoint measured while connecting.
  auto connected = registry_.Connect(connect, kCaller);
  ASSERT_TRUE(connected.ok()) << connected.status();
  EXPECT_EQ(connected->path_mtu().route_mtu(), 1500u);
  EXPECT_EQ(connected->path_mtu().local_route_mtu(), 9000u);
  v1::RunEndpointRequest run;
  run.set_endpoint_id(prepared->endpoint_id());
  auto result = registry_.Run(run, kCaller);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->detail(), "fake");
  EXPECT_TRUE(registry_.Close(prepared->endpoint_id(), kCaller).ok());
  EXPECT_EQ(tally_.alive, 0);
  EXPECT_TRUE(absl::IsNotFound(registry_.Close(prepared->endpoint_id(), kCaller)));
}

TEST_F(EndpointRegistryTest, SecondTestOnABusyDeviceIsRefusedNamingTheHolder) {
  auto first = registry_.Prepare(Request("10.0.0.1", "node1-node2-write_bw"), kCaller);
  ASSERT_TRUE(first.ok());
  auto second = registry_.Prepare(Request("10.0.0.1", "node1-node3-write_bw"), kCaller);
  ASSERT_TRUE(absl::IsResourceExhausted(second.status()));
  EXPECT_NE(second.status().message().find("node1-node2-write_bw"), absl::string_view::npos);
  EXPECT_TRUE(registry_.Prepare(Request("10.0.0.2"), kCaller).ok());  // another device is free
  ASSERT_TRUE(registry_.Close(first->endpoint_id(), kCaller).ok());
  EXPECT_TRUE(registry_.Prepare(Request("10.0.0.1"), kCaller).ok());
}

// An incast round's receiving ends share the receiver's device: the same
// caller, the same non-empty group. Anyone else still finds it busy.
TEST_F(EndpointRegistryTest, AShareGroupHoldsOneDeviceTogether) {
  v1::PrepareEndpointRequest incast = Request("10.0.0.1", "incast node2 round 1");
  incast.set_share_group("incast-1");
  auto first = registry_.Prepare(incast, kCaller);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(registry_.Prepare(incast, kCaller).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(registry_.Prepare(incast, "spiffe://other").status()));
  v1::PrepareEndpointRequest other_group = incast;
  other_group.set_share_group("incast-2");
  EXPECT_TRUE(absl::IsResourceExhausted(registry_.Prepare(other_group, kCaller).status()));
  auto alone = registry_.Prepare(Request("10.0.0.1"), kCaller);
  ASSERT_TRUE(absl::IsResourceExhausted(alone.status()));
  EXPECT_THAT(std::string(alone.status().message()), ::testing::HasSubstr("incast node2 round 1"));
  // Nor may a group join a device held alone.
  EXPECT_TRUE(registry_.Prepare(Request("10.0.0.2"), kCaller).ok());
  v1::PrepareEndpointRequest late = Request("10.0.0.2");
  late.set_share_group("incast-1");
  EXPECT_TRUE(absl::IsResourceExhausted(registry_.Prepare(late, kCaller).status()));
}

TEST_F(EndpointRegistryTest, AShareGroupIsBoundedAndPlain) {
  EndpointLimits limits;
  limits.max_sharing = 2;
  EndpointRegistry registry{{{"tcp", &engine_}}, [this] { return now_; }, limits};
  v1::PrepareEndpointRequest incast = Request("10.0.0.1");
  incast.set_share_group("g");
  ASSERT_TRUE(registry.Prepare(incast, kCaller).ok());
  ASSERT_TRUE(registry.Prepare(incast, kCaller).ok());
  auto third = registry.Prepare(incast, kCaller);
  ASSERT_TRUE(absl::IsResourceExhausted(third.status()));
  EXPECT_THAT(std::string(third.status().message()),
              ::testing::HasSubstr("already holds 2 endpoints"));
  for (const std::string bad : {std::string(65, 'a'), std::string("a/b"), std::string("a b")}) {
    incast.set_share_group(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(registry.Prepare(incast, kCaller).status())) << bad;
  }
}

// The controller lost a prepare's answer, so it never learned the id: it
// closes by test id, which frees the device at once, and only its own.
TEST_F(EndpointRegistryTest, CloseByTestIdFreesWhatThatCallerPreparedForTheTest) {
  ASSERT_TRUE(registry_.Prepare(Request("10.0.0.1", "node1-node2-write_bw"), kCaller).ok());
  ASSERT_TRUE(registry_.Prepare(Request("10.0.0.2", "node1-node3-write_bw"), kCaller).ok());
  EXPECT_EQ(registry_.CloseTest("node1-node2-write_bw", "spiffe://other"), 0u);
  EXPECT_EQ(registry_.CloseTest("node1-node2-write_bw", kCaller), 1u);
  EXPECT_EQ(registry_.active(), 1u);
  EXPECT_TRUE(registry_.Prepare(Request("10.0.0.1"), kCaller).ok());  // the device is free again
  EXPECT_EQ(registry_.CloseTest("never-prepared", kCaller), 0u);
}

TEST_F(EndpointRegistryTest, LeaseRunsOutWhenTheControllerVanishes) {
  auto prepared = registry_.Prepare(Request("10.0.0.1"), kCaller);
  ASSERT_TRUE(prepared.ok());
  now_ += absl::Seconds(9);
  EXPECT_EQ(registry_.ReapExpired(), 0);
  v1::ConnectEndpointRequest connect;  // a call renews the lease
  connect.set_endpoint_id(prepared->endpoint_id());
  connect.mutable_peer()->set_tcp_port(1);
  ASSERT_TRUE(registry_.Connect(connect, kCaller).ok());
  now_ += absl::Seconds(9);
  EXPECT_EQ(registry_.ReapExpired(), 0);
  now_ += absl::Seconds(2);
  EXPECT_EQ(registry_.ReapExpired(), 1);
  EXPECT_EQ(tally_.alive, 0);
  EXPECT_EQ(registry_.active(), 0u);
  EXPECT_TRUE(absl::IsNotFound(registry_.Connect(connect, kCaller).status()));
}

// Issue 17: the controller's lease is short (10 s) so that a killed
// controller's endpoints go within seconds; a data-plane connect may wait
// longer than that (up to its own timeout), and the lease must not run out
// under it. It runs from the connect's end instead.
TEST_F(EndpointRegistryTest, ALeaseNeverRunsOutUnderAConnectInFlight) {
  auto prepared = registry_.Prepare(Request("10.0.0.1"), kCaller);
  ASSERT_TRUE(prepared.ok());
  int reaped_during = -1;
  tally_.during_connect = [&] {
    now_ += absl::Seconds(25);  // a slow peer, within the 30 s timeout
    reaped_during = registry_.ReapExpired();
  };
  v1::ConnectEndpointRequest connect;
  connect.set_endpoint_id(prepared->endpoint_id());
  connect.set_timeout_ms(30'000);
  connect.mutable_peer()->set_tcp_port(1);
  ASSERT_TRUE(registry_.Connect(connect, kCaller).ok());
  EXPECT_EQ(reaped_during, 0);
  tally_.during_connect = nullptr;
  now_ += absl::Seconds(9);
  EXPECT_EQ(registry_.ReapExpired(), 0);  // 10 s from the connect's end
  now_ += absl::Seconds(2);
  EXPECT_EQ(registry_.ReapExpired(), 1);  // a vanished controller's: gone 10 s after its last call
  EXPECT_EQ(tally_.alive, 0);
}

// The daemon's log tells the operator which endpoint it freed and why.
TEST_F(EndpointRegistryTest, ALeaseThatRunsOutIsLoggedWithTheEndpointAndTest) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  auto prepared = registry_.Prepare(Request("10.0.0.1", "node1-node2-write_bw"), kCaller);
  ASSERT_TRUE(prepared.ok());
  now_ += absl::Seconds(11);
  EXPECT_EQ(registry_.ReapExpired(), 1);
  spdlog::set_default_logger(previous);
  EXPECT_NE(log.str().find("endpoint " + prepared->endpoint_id() +
                           " prepared for tls:CN=controller on tcp 10.0.0.1 "
                           "(test node1-node2-write_bw, lease 10 s)"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("endpoint " + prepared->endpoint_id() +
                           " on tcp 10.0.0.1 (test node1-node2-write_bw, prepared by "
                           "tls:CN=controller) freed: its 10 s lease ran out"),
            std::string::npos)
      << log.str();
}

TEST_F(EndpointRegistryTest, BoundsAreRejectedNotObeyed) {
  auto request = Request("10.0.0.1");
  request.set_lease_s(0);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Prepare(request, kCaller).status()));
  request.set_lease_s(100000);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Prepare(request, kCaller).status()));
  request = Request("10.0.0.1");
  request.mutable_spec()->set_message_bytes(1ull << 40);  // a 1 TB buffer
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Prepare(request, kCaller).status()));
  request = Request("10.0.0.1");
  request.mutable_spec()->set_engine("carrier-pigeon");
  auto status = registry_.Prepare(request, kCaller).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("tcp"), absl::string_view::npos);
  auto prepared = registry_.Prepare(Request("10.0.0.1"), kCaller);
  ASSERT_TRUE(prepared.ok());
  v1::RunEndpointRequest run;
  run.set_endpoint_id(prepared->endpoint_id());
  run.set_timeout_ms(4'000'000'000u);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Run(run, kCaller).status()));
}

// Issue 15: leases up to an hour held a vanished controller's devices. The
// controller asks for 10 s and renews it; ten minutes is the most.
TEST_F(EndpointRegistryTest, LeasesAreAtMostTenMinutes) {
  auto request = Request("10.0.0.1");
  request.set_lease_s(3600);
  const absl::Status refused = registry_.Prepare(request, kCaller).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_EQ(refused.message(),
            "lease_s is 3600; it must be from 1 to 600 (the controller renews it with every call)");
  request.set_lease_s(10);  // what the controller asks for (issue 17; 60 s before)
  EXPECT_TRUE(registry_.Prepare(request, kCaller).ok());
  request = Request("10.0.0.2");
  request.set_lease_s(600);
  EXPECT_TRUE(registry_.Prepare(request, kCaller).ok());
}

// Issue 15: queue_depth 2^32-1 was accepted by the tcp engine, which ignores it.
TEST_F(EndpointRegistryTest, AQueueDepthNoEngineTakesIsRefused) {
  auto request = Request("10.0.0.1");
  request.mutable_spec()->set_queue_depth(4294967295u);
  const absl::Status refused = registry_.Prepare(request, kCaller).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_EQ(refused.message(),
            "queue_depth is 4294967295; it must be 0 (the engine's default) to 4096");
  request.mutable_spec()->set_queue_depth(128);  // what the controller sends
  EXPECT_TRUE(registry_.Prepare(request, kCaller).ok());
}

// Issue 15: ids were "ep-1", "ep-2", ..., and any caller could close any of
// them. Ids are random; another caller is answered as for an unknown id.
TEST_F(EndpointRegistryTest, AnotherCallersEndpointIsAnsweredAsIfItDidNotExist) {
  auto prepared = registry_.Prepare(Request("10.0.0.1", "node1-node2-write_bw"), kCaller);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const std::string id = prepared->endpoint_id();
  ASSERT_EQ(id.size(), 3u + 32u) << id;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 3), std::string::npos) << id;
  const std::string intruder = "tls:CN=intruder";
  const std::string made_up = "ep-00000000000000000000000000000000";

  v1::ConnectEndpointRequest connect;
  connect.set_endpoint_id(id);
  connect.mutable_peer()->set_tcp_port(1);
  const absl::Status theirs = registry_.Connect(connect, intruder).status();
  connect.set_endpoint_id(made_up);
  const absl::Status unknown = registry_.Connect(connect, intruder).status();
  EXPECT_TRUE(absl::IsNotFound(theirs));
  EXPECT_EQ(std::string(theirs.message()).replace(theirs.message().find(id), id.size(), made_up),
            unknown.message());

  const absl::Status close = registry_.Close(id, intruder);
  EXPECT_TRUE(absl::IsNotFound(close));
  EXPECT_EQ(std::string(close.message()).replace(close.message().find(id), id.size(), made_up),
            registry_.Close(made_up, intruder).message());
  v1::RunEndpointRequest run;
  run.set_endpoint_id(id);
  EXPECT_TRUE(absl::IsNotFound(registry_.Run(run, intruder).status()));
  EXPECT_TRUE(absl::IsNotFound(registry_.Progress(id, intruder).status()));
  EXPECT_EQ(registry_.active(), 1u);

  // The busy answer names the test, but the holder's id only to its owner.
  const absl::Status busy = registry_.Prepare(Request("10.0.0.1"), intruder).status();
  EXPECT_TRUE(absl::IsResourceExhausted(busy));
  EXPECT_EQ(busy.message().find(id), absl::string_view::npos) << busy;
  EXPECT_NE(busy.message().find("node1-node2-write_bw"), absl::string_view::npos) << busy;
  const absl::Status own = registry_.Prepare(Request("10.0.0.1"), kCaller).status();
  EXPECT_NE(own.message().find(id), absl::string_view::npos) << own;

  EXPECT_TRUE(registry_.Close(id, kCaller).ok());
  EXPECT_EQ(tally_.alive, 0);
}

// Issue 15: the registry held at most 64 endpoints, but said so without the fix.
TEST_F(EndpointRegistryTest, LiveEndpointsAreCapped) {
  EndpointLimits limits;
  limits.max_endpoints = 2;
  EndpointRegistry registry(
      {{"tcp", &engine_}}, [this] { return now_; }, limits);
  ASSERT_TRUE(registry.Prepare(Request("10.0.0.1"), kCaller).ok());
  ASSERT_TRUE(registry.Prepare(Request("10.0.0.2"), kCaller).ok());
  const absl::Status third = registry.Prepare(Request("10.0.0.3"), kCaller).status();
  EXPECT_TRUE(absl::IsResourceExhausted(third));
  EXPECT_EQ(third.message(),
            "busy: 2 endpoints are open, the most this agent holds: close finished tests' "
            "endpoints, or wait for their leases to run out");
}

TEST_F(EndpointRegistryTest, ThePeerAddressMustBeAnIpLiteral) {
  auto prepared = registry_.Prepare(Request("10.0.0.1"), kCaller);
  ASSERT_TRUE(prepared.ok());
  v1::ConnectEndpointRequest connect;
  connect.set_endpoint_id(prepared->endpoint_id());
  connect.mutable_peer()->set_address("--copy-check");
  connect.mutable_peer()->set_tcp_port(4242);
  const absl::Status flag = registry_.Connect(connect, kCaller).status();
  EXPECT_TRUE(absl::IsInvalidArgument(flag));
  EXPECT_EQ(flag.message(),
            "the peer's address is '--copy-check'; it must be the peer's data IP as a literal "
            "(e.g. 10.0.0.2 or fd00::2)");
  connect.mutable_peer()->set_address("10.0.0.2");
  connect.mutable_peer()->set_tcp_port(70000);
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Connect(connect, kCaller).status()));
  connect.mutable_peer()->set_tcp_port(4242);
  EXPECT_TRUE(registry_.Connect(connect, kCaller).ok());
  EXPECT_EQ(tally_.connects, 1);
}

// Issue 15: a megabyte field was echoed whole into the error.
TEST_F(EndpointRegistryTest, EchoedFieldsAreClipped) {
  auto request = Request("10.0.0.1");
  request.mutable_spec()->set_engine(std::string(1 << 20, 'e'));
  const absl::Status status = registry_.Prepare(request, kCaller).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_LT(status.message().size(), 300u) << status.message().size();
  EXPECT_NE(status.message().find("(1048576 bytes)"), absl::string_view::npos);
}

// Closing a running endpoint stops its run (the controller closes the
// surviving end of a pair whose other end failed) without waiting for it.
TEST(EndpointRegistryThreadsTest, CloseStopsARunningTestAtOnceAndReaperFrees) {
  Tally tally;
  FakeEngine engine(tally);
  engine.run_for = absl::Seconds(30);
  ::clustercert::testing::SimulatedClock clock;
  EndpointRegistry registry({{"tcp", &engine}}, clock.NowFunction());
  v1::PrepareEndpointRequest request;
  request.mutable_spec()->set_engine("tcp");
  request.mutable_spec()->set_data_ip("10.0.0.1");
  request.set_lease_s(1);
  auto prepared = registry.Prepare(request, kCaller);
  ASSERT_TRUE(prepared.ok());
  v1::RunEndpointRequest run;
  run.set_endpoint_id(prepared->endpoint_id());
  std::thread runner(
      [&] { EXPECT_EQ(registry.Run(run, kCaller).status().code(), absl::StatusCode::kCancelled); });
  ASSERT_TRUE(tally.run_started.WaitFor(absl::Seconds(10)));
  // Close returns while the cancelled run is still held inside the engine:
  // it does not wait for the run.
  EXPECT_TRUE(registry.Close(prepared->endpoint_id(), kCaller).ok());
  EXPECT_FALSE(tally.run_returned.HasBeenNotified());
  EXPECT_EQ(tally.cancels, 1);
  EXPECT_EQ(tally.alive, 1);  // the run holds the last reference
  tally.run_released.Notify();
  runner.join();  // cancelled: not the 30 s run
  EXPECT_EQ(tally.alive, 0);

  auto leased = registry.Prepare(request, kCaller);  // a 1 s lease
  ASSERT_TRUE(leased.ok());
  EXPECT_EQ(registry.ReapExpired(), 0);
  clock.Advance(absl::Seconds(1));
  // The reaper's own period is real time; a short one finds the expired
  // lease at its first tick.
  registry.StartReaper(absl::Milliseconds(1));
  EXPECT_TRUE(tally.WaitUntilNoneAlive(absl::Seconds(10)));
  EXPECT_EQ(registry.active(), 0u);
}

}  // namespace
}  // namespace clustercert::agent::peer
