#include "agent/peer/tcp_engine.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/tcp_socket.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/child_processes.h"
#include "tests/support/environment_skip.h"
#include "tests/support/stepping_clock.h"

namespace clustercert::agent::peer {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

v1::PeerTestSpec Spec(const std::string& test, const std::string& ip = "127.0.0.1") {
  v1::PeerTestSpec spec;
  spec.set_engine("tcp");
  spec.set_test(test);
  spec.set_role("client");
  spec.set_data_ip(ip);
  return spec;
}

v1::PeerTestSpec Bandwidth(uint32_t streams, double seconds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_streams(streams);
  spec.set_duration_s(seconds);
  spec.set_message_bytes(128 * 1024);
  return spec;
}

// A prepared and connected server/client pair over loopback.
struct Pair {
  std::unique_ptr<PeerEndpoint> server;
  std::unique_ptr<PeerEndpoint> client;
};

// `clock` judges the endpoints' deadlines; it must outlive the pair.
Pair Connected(v1::PeerTestSpec spec, absl::Time deadline, Clock& clock = RealClock()) {
  TcpEngine engine(clock);
  Pair pair;
  spec.set_role("server");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  EXPECT_TRUE(server.ok()) << server.status();
  spec.set_role("client");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  EXPECT_TRUE(client.ok()) << client.status();
  if (!server.ok() || !client.ok()) return pair;
  pair.server = *std::move(server);
  pair.client = *std::move(client);
  EXPECT_TRUE(pair.server->Connect(pair.client->local_info(), deadline).ok());
  absl::Status connected = pair.client->Connect(pair.server->local_info(), deadline);
  EXPECT_TRUE(connected.ok()) << connected;
  return pair;
}

struct Results {
  absl::StatusOr<v1::PeerTestResult> server = absl::UnknownError("not run");
  absl::StatusOr<v1::PeerTestResult> client = absl::UnknownError("not run");
};

// Runs both sides at once, as the controller does, each on its own thread.
Results RunBoth(Pair& pair, absl::Time deadline) {
  Results results;
  if (pair.server == nullptr || pair.client == nullptr) return results;
  std::thread server([&] { results.server = pair.server->Run(deadline); });
  std::thread client([&] { results.client = pair.client->Run(deadline); });
  server.join();
  client.join();
  return results;
}

Results RunSpec(const v1::PeerTestSpec& spec, absl::Duration limit = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + limit;
  Pair pair = Connected(spec, deadline);
  return RunBoth(pair, deadline);
}

void ExpectSaneBandwidth(const v1::BandwidthStats& stats, double min_seconds) {
  EXPECT_GT(stats.iterations(), 0u);
  EXPECT_GE(stats.seconds(), min_seconds);
  EXPECT_LT(stats.seconds(), min_seconds + 5);
  EXPECT_GT(stats.avg_gbps(), 0.01);
  EXPECT_EQ(stats.peak_gbps(), 0);  // TCP has no completions to time, as perftest -D
  EXPECT_NEAR(stats.avg_gbps(),
              stats.message_bytes() * stats.iterations() * 8.0 / stats.seconds() / 1e9,
              1e-6 * stats.avg_gbps());
}

TEST(TcpEngineTest, OneStreamForHalfASecond) {
  Results results = RunSpec(Bandwidth(1, 0.5));
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_EQ(results.server->role(), "server");
  EXPECT_EQ(results.client->role(), "client");
  EXPECT_EQ(results.server->memory_path(), "host");
  EXPECT_EQ(results.server->detail(), "tcp, 1 stream, receiver side (client->server)");
  EXPECT_THAT(results.client->detail(), HasSubstr("sender side"));
  ExpectSaneBandwidth(results.server->bandwidth(), 0.3);
  ExpectSaneBandwidth(results.client->bandwidth(), 0.5);
  EXPECT_EQ(results.server->bandwidth().message_bytes(), 128u * 1024);
  // Receiver bytes == sender bytes.
  EXPECT_EQ(results.server->bandwidth().iterations(), results.client->bandwidth().iterations());
  ASSERT_EQ(results.server->stream_gbps_size(), 1);
}

TEST(TcpEngineTest, FourStreamsForHalfASecond) {
  Results results = RunSpec(Bandwidth(4, 0.5));
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_EQ(results.server->detail(), "tcp, 4 streams, receiver side (client->server)");
  ExpectSaneBandwidth(results.server->bandwidth(), 0.3);
  ExpectSaneBandwidth(results.client->bandwidth(), 0.5);
  EXPECT_EQ(results.server->bandwidth().iterations(), results.client->bandwidth().iterations());
  // Each stream's own rate; none exceeds the whole, and together they carry it.
  ASSERT_EQ(results.server->stream_gbps_size(), 4);
  double sum = 0;
  for (double gbps : results.server->stream_gbps()) {
    EXPECT_GT(gbps, 0);
    EXPECT_LE(gbps, results.server->bandwidth().avg_gbps() * 1.05);
    sum += gbps;
  }
  EXPECT_GE(sum, results.server->bandwidth().avg_gbps() * 0.9);
}

TEST(TcpEngineTest, IterationsModeMovesExactlyStreamsTimesIterationsMessages) {
  v1::PeerTestSpec spec = Spec("send_bw");
  spec.set_streams(3);
  spec.set_iterations(250);
  spec.set_message_bytes(65536 + 17);  // not a page multiple on purpose
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_EQ(results.server->bandwidth().iterations(), 750u);
  EXPECT_EQ(results.client->bandwidth().iterations(), 750u);
  EXPECT_EQ(results.server->bandwidth().message_bytes(), 65536u + 17);
}

TEST(TcpEngineTest, DefaultsFollowPerftest) {
  v1::PeerTestSpec spec = Spec("read_bw");  // no size, streams or iterations
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  EXPECT_EQ(results.server->bandwidth().message_bytes(), 65536u);
  EXPECT_EQ(results.server->bandwidth().iterations(), 1000u);
}

TEST(TcpEngineTest, BidirectionalEachSideReportsWhatItReceived) {
  v1::PeerTestSpec spec = Bandwidth(2, 0.5);
  spec.set_bidirectional(true);
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_THAT(results.server->detail(), AllOf(HasSubstr("2 streams each way, bidirectional"),
                                              HasSubstr("receiver side (client->server)")));
  EXPECT_THAT(results.client->detail(), HasSubstr("receiver side (server->client)"));
  ExpectSaneBandwidth(results.server->bandwidth(), 0.3);
  ExpectSaneBandwidth(results.client->bandwidth(), 0.3);
}

TEST(TcpEngineTest, BidirectionalIterations) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_bidirectional(true);
  spec.set_streams(2);
  spec.set_iterations(100);
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_EQ(results.server->bandwidth().iterations(), 200u);
  EXPECT_EQ(results.client->bandwidth().iterations(), 200u);
}

TEST(TcpEngineTest, LatencyThousandIterations) {
  v1::PeerTestSpec spec = Spec("send_lat");
  spec.set_iterations(1000);
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  const v1::LatencyStats& latency = results.client->latency();
  EXPECT_EQ(latency.samples(), 1000u);
  EXPECT_GT(latency.min_us(), 0);
  EXPECT_LE(latency.min_us(), latency.typical_us());
  EXPECT_LE(latency.typical_us(), latency.p99_us());
  EXPECT_LE(latency.p99_us(), latency.p999_us());
  EXPECT_LE(latency.p999_us(), latency.max_us());
  EXPECT_LE(latency.min_us(), latency.avg_us());
  EXPECT_LE(latency.avg_us(), latency.max_us());
  EXPECT_THAT(results.client->detail(),
              AllOf(HasSubstr("2-byte ping-pong"), HasSubstr("one-way = RTT/2")));
  EXPECT_FALSE(results.server->has_latency());
  EXPECT_THAT(results.server->detail(), HasSubstr("1000 2-byte messages echoed"));
}

TEST(TcpEngineTest, LatencyForADurationWithLargeMessages) {
  v1::PeerTestSpec spec = Spec("read_lat");
  spec.set_duration_s(0.2);
  spec.set_message_bytes(1 << 20);
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_GT(results.client->latency().samples(), 0u);
  EXPECT_THAT(results.client->detail(), HasSubstr("round trip"));
}

TEST(TcpEngineTest, Ipv6Loopback) {
  v1::PeerTestSpec spec = Spec("write_bw", "::1");
  spec.set_iterations(50);
  TcpEngine engine;
  spec.set_role("server");
  if (!engine.Prepare(spec).ok()) SKIP_FOR_ENVIRONMENT("ipv6") << "no IPv6 loopback here";
  Results results = RunSpec(spec);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  ASSERT_TRUE(results.client.ok()) << results.client.status();
  EXPECT_EQ(results.server->bandwidth().iterations(), 50u);
}

struct BadSpec {
  std::string name;
  std::function<void(v1::PeerTestSpec&)> change;
  std::string message;
};

TEST(TcpEngineTest, RejectsSpecsOutOfBounds) {
  const std::vector<BadSpec> cases = {
      {"1 TB buffer", [](auto& s) { s.set_message_bytes(uint64_t{1} << 40); },
       "message_bytes 1099511627776 is outside 1..67108864 (64 MiB)"},
      {"65 streams", [](auto& s) { s.set_streams(65); }, "streams 65 is outside 1..64"},
      {"long duration", [](auto& s) { s.set_duration_s(3601); },
       "duration_s 3601 is outside 0 < duration_s <= 3600"},
      {"negative duration", [](auto& s) { s.set_duration_s(-1); }, "duration_s -1 is outside"},
      {"iterations", [](auto& s) { s.set_iterations(100'000'001); },
       "iterations 100000001 is outside 1..100000000"},
      {"host name", [](auto& s) { s.set_data_ip("node7.example"); },
       "data_ip \"node7.example\" is not a literal IPv4 or IPv6 address"},
      {"unspecified", [](auto& s) { s.set_data_ip("0.0.0.0"); },
       "data_ip 0.0.0.0 is the unspecified address"},
      {"test", [](auto& s) { s.set_test("atomic_bw"); }, "test \"atomic_bw\" is not one of"},
      {"role", [](auto& s) { s.set_role("both"); }, "role \"both\" is neither server nor client"},
      {"engine", [](auto& s) { s.set_engine("verbs"); }, "engine \"verbs\""},
      {"memory", [](auto& s) { s.set_memory("cuda:0"); }, "memory \"cuda:0\" is not supported"},
      {"latency streams",
       [](auto& s) {
         s.set_test("write_lat");
         s.set_streams(2);
       },
       "streams 2 is outside 1..1 for write_lat"},
      {"latency bidirectional",
       [](auto& s) {
         s.set_test("send_lat");
         s.set_bidirectional(true);
       },
       "bidirectional is not supported for send_lat"},
      {"latency iterations",
       [](auto& s) {
         s.set_test("send_lat");
         s.set_iterations(20'000'000);
       },
       "iterations 20000000 is outside 1..10000000 for send_lat"},
  };
  TcpEngine engine;
  for (const BadSpec& bad : cases) {
    v1::PeerTestSpec spec = Spec("write_bw");
    bad.change(spec);
    absl::StatusOr<std::unique_ptr<PeerEndpoint>> endpoint = engine.Prepare(spec);
    EXPECT_TRUE(absl::IsInvalidArgument(endpoint.status()))
        << bad.name << ": " << endpoint.status();
    EXPECT_THAT(std::string(endpoint.status().message()), HasSubstr(bad.message)) << bad.name;
  }
}

TEST(TcpEngineTest, ClientPrepareTouchesNoNetwork) {
  TcpEngine engine;
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(Spec("write_bw"));
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->local_info().address(), "127.0.0.1");
  EXPECT_EQ((*client)->local_info().tcp_port(), 0u);
  absl::StatusOr<v1::PeerTestResult> early = (*client)->Run(absl::Now() + absl::Seconds(1));
  EXPECT_TRUE(absl::IsFailedPrecondition(early.status())) << early.status();
}

TEST(TcpEngineTest, ServerWithoutClientReachesItsDeadline) {
  TcpEngine engine;
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_streams(2);
  spec.set_role("server");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_NE((*server)->local_info().tcp_port(), 0u);
  v1::EndpointInfo client;
  client.set_address("127.0.0.1");
  const absl::Time start = absl::Now();
  ASSERT_TRUE((*server)->Connect(client, start + absl::Seconds(1)).ok());
  absl::StatusOr<v1::PeerTestResult> result = (*server)->Run(start + absl::Milliseconds(300));
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(absl::IsDeadlineExceeded(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("0 of 2 streams connected before the deadline"));
  EXPECT_GE(took, absl::Milliseconds(290));
  EXPECT_LT(took, absl::Milliseconds(800));
}

TEST(TcpEngineTest, ClientFailsQuicklyWhenServerIsDestroyedMidRun) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  Pair pair = Connected(Bandwidth(2, 10), deadline);
  ASSERT_NE(pair.client, nullptr);
  absl::StatusOr<v1::PeerTestResult> result;
  absl::Time destroyed;
  std::thread client([&] { result = pair.client->Run(deadline); });
  // Mid-run: the client has sent data (into socket buffers nobody reads).
  EXPECT_TRUE(process::testing::WaitUntil([&] { return pair.client->Progress().bytes() > 0; }));
  destroyed = absl::Now();
  pair.server.reset();  // never ran: its pending streams are reset
  client.join();
  EXPECT_LT(absl::Now() - destroyed, absl::Seconds(2));
  EXPECT_TRUE(absl::IsUnavailable(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()),
              AllOf(HasSubstr("peer 127.0.0.1:"), HasSubstr("closed the connection after")));
}

TEST(TcpEngineTest, ClientFailsQuicklyWhenServerRunEndsEarly) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_streams(4);
  spec.set_iterations(100'000'000);  // far more than the server's deadline allows
  Pair pair = Connected(spec, deadline);
  ASSERT_NE(pair.client, nullptr);
  absl::StatusOr<v1::PeerTestResult> client_result;
  std::thread client([&] { client_result = pair.client->Run(deadline); });
  absl::StatusOr<v1::PeerTestResult> server_result =
      pair.server->Run(absl::Now() + absl::Milliseconds(400));
  const absl::Time server_done = absl::Now();
  pair.server.reset();
  client.join();
  EXPECT_TRUE(absl::IsDeadlineExceeded(server_result.status())) << server_result.status();
  EXPECT_THAT(std::string(server_result.status().message()), HasSubstr("reached its deadline"));
  EXPECT_LT(absl::Now() - server_done, absl::Seconds(2));
  EXPECT_TRUE(absl::IsUnavailable(client_result.status())) << client_result.status();
}

TEST(TcpEngineTest, ServerFailsWhenClientIsDestroyedMidRun) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_iterations(1000);
  Pair pair = Connected(spec, deadline);
  ASSERT_NE(pair.server, nullptr);
  pair.client.reset();  // connected, sent headers, never sent data
  absl::StatusOr<v1::PeerTestResult> result = pair.server->Run(deadline);
  EXPECT_TRUE(absl::IsDataLoss(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("delivered 0 bytes"));
}

// A client that connected and then moves nothing (a frozen peer, a dead
// link): the server ends as no progress after no_progress_s, not at its
// deadline 30 s away. On a clock where each look finds 0.3 s gone, the
// server's first look after it starts receiving already finds the client
// silent for no_progress_s, so no real 0.3 s passes (the deadline, 100 looks
// away, is not reached on the way).
TEST(TcpEngineTest, ServerWhoseClientMovesNothingEndsAsNoProgress) {
  ::clustercert::testing::SteppingClock clock(absl::Milliseconds(300));
  const absl::Time deadline = clock.Peek() + absl::Seconds(30);
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_streams(2);
  spec.set_iterations(1000);
  spec.set_no_progress_s(0.3);
  Pair pair = Connected(spec, deadline, clock);
  ASSERT_NE(pair.server, nullptr);
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::PeerTestResult> result = pair.server->Run(deadline);  // the client never runs
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(absl::IsDeadlineExceeded(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()),
              AllOf(HasSubstr("stalled: no data moved for 0.3 s"), HasSubstr(" of 2, receiving"),
                    HasSubstr("pairwise.no_progress_s")));
}

TEST(TcpEngineTest, ConnectToClosedPortNamesAddressAndPort) {
  uint16_t port = 0;
  {
    absl::StatusOr<SocketAddress> any = SocketAddress::FromLiteral("127.0.0.1", 0);
    ASSERT_TRUE(any.ok());
    absl::StatusOr<TcpSocket> listener = TcpSocket::Listen(*any, RealClock());
    ASSERT_TRUE(listener.ok()) << listener.status();
    port = listener->LocalAddress()->port();
  }  // closed: nobody listens there now
  TcpEngine engine;
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(Spec("write_bw"));
  ASSERT_TRUE(client.ok());
  v1::EndpointInfo server;
  server.set_address("127.0.0.1");
  server.set_tcp_port(port);
  absl::Status connected = (*client)->Connect(server, absl::Now() + absl::Seconds(2));
  EXPECT_TRUE(absl::IsUnavailable(connected)) << connected;
  EXPECT_THAT(std::string(connected.message()),
              AllOf(HasSubstr(absl::StrCat("cannot connect to 127.0.0.1:", port)),
                    HasSubstr("Connection refused")));
}

TEST(TcpEngineTest, ConnectRejectsAServerInfoWithoutPort) {
  TcpEngine engine;
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(Spec("write_bw"));
  ASSERT_TRUE(client.ok());
  v1::EndpointInfo server;
  server.set_address("127.0.0.1");
  absl::Status connected = (*client)->Connect(server, absl::Now() + absl::Seconds(1));
  EXPECT_TRUE(absl::IsInvalidArgument(connected)) << connected;
  EXPECT_THAT(std::string(connected.message()), HasSubstr("tcp_port 0, outside 1..65535"));
}

TEST(TcpEngineTest, ServerDropsStrayConnections) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_iterations(20);
  TcpEngine engine;
  spec.set_role("server");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  ASSERT_TRUE(server.ok());
  // Something else connects first and sends what is not our header.
  absl::StatusOr<SocketAddress> local = SocketAddress::FromLiteral("127.0.0.1", 0);
  absl::StatusOr<SocketAddress> target =
      SocketAddress::FromLiteral("127.0.0.1", (*server)->local_info().tcp_port());
  absl::StatusOr<TcpSocket> stray = TcpSocket::Connect(*local, *target, deadline, RealClock());
  ASSERT_TRUE(stray.ok()) << stray.status();
  const std::string junk = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_TRUE(stray->SendAll(junk.data(), junk.size(), deadline, nullptr).ok());

  spec.set_role("client");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*server)->Connect((*client)->local_info(), deadline).ok());
  ASSERT_TRUE((*client)->Connect((*server)->local_info(), deadline).ok());
  Pair pair{*std::move(server), *std::move(client)};
  Results results = RunBoth(pair, deadline);
  ASSERT_TRUE(results.server.ok()) << results.server.status();
  EXPECT_EQ(results.server->bandwidth().iterations(), 20u);
}

TEST(TcpEngineTest, MismatchedSpecsFailOnBothSides) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  TcpEngine engine;
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_iterations(10);
  spec.set_role("server");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  spec.set_role("client");
  spec.set_message_bytes(4096);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  ASSERT_TRUE(server.ok() && client.ok());
  ASSERT_TRUE((*server)->Connect((*client)->local_info(), deadline).ok());
  ASSERT_TRUE((*client)->Connect((*server)->local_info(), deadline).ok());
  Pair pair{*std::move(server), *std::move(client)};
  Results results = RunBoth(pair, deadline);
  EXPECT_TRUE(absl::IsFailedPrecondition(results.server.status())) << results.server.status();
  EXPECT_THAT(std::string(results.server.status().message()),
              HasSubstr("the controller must give both sides the same spec"));
  EXPECT_FALSE(results.client.ok());
  EXPECT_LT(absl::Now(), deadline);
}

TEST(TcpEngineTest, DirectionMismatchFailsAtOnceNotAtTheDeadline) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  TcpEngine engine;
  v1::PeerTestSpec spec = Bandwidth(1, 1);
  spec.set_role("server");
  spec.set_bidirectional(true);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  spec.set_role("client");
  spec.set_bidirectional(false);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  ASSERT_TRUE(server.ok() && client.ok());
  ASSERT_TRUE((*server)->Connect((*client)->local_info(), deadline).ok());
  ASSERT_TRUE((*client)->Connect((*server)->local_info(), deadline).ok());
  Pair pair{*std::move(server), *std::move(client)};
  const absl::Time start = absl::Now();
  Results results = RunBoth(pair, deadline);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(absl::IsFailedPrecondition(results.server.status())) << results.server.status();
  EXPECT_THAT(std::string(results.server.status().message()),
              HasSubstr("opened a forward stream (1 of 1, 131072-byte messages) that does not "
                        "belong to this server's write_bw with 1 stream of 131072-byte "
                        "messages, bidirectional"));
  EXPECT_TRUE(absl::IsUnavailable(results.client.status())) << results.client.status();
}

TEST(TcpEngineTest, DurationBeyondTheDeadlineFailsAtOnce) {
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  Pair pair = Connected(Bandwidth(1, 30), deadline);
  ASSERT_NE(pair.client, nullptr);
  const absl::Time start = absl::Now();
  Results results = RunBoth(pair, deadline);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(results.client.status())) << results.client.status();
  EXPECT_THAT(std::string(results.client.status().message()),
              HasSubstr("less than its duration_s 30.0"));
  EXPECT_TRUE(absl::IsDeadlineExceeded(results.server.status())) << results.server.status();
}

TEST(TcpEngineTest, FailedConnectLeavesNothingOpenAndRunRefuses) {
  TcpEngine engine;
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_streams(4);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  ASSERT_TRUE(client.ok());
  v1::EndpointInfo nowhere;
  nowhere.set_address("127.0.0.1");
  nowhere.set_tcp_port(1);
  EXPECT_FALSE((*client)->Connect(nowhere, absl::Now() + absl::Seconds(2)).ok());
  absl::StatusOr<v1::PeerTestResult> result = (*client)->Run(absl::Now() + absl::Seconds(2));
  EXPECT_TRUE(absl::IsFailedPrecondition(result.status())) << result.status();
}

}  // namespace
}  // namespace clustercert::agent::peer
