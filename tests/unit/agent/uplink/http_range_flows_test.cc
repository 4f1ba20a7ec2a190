#include "agent/uplink/http_range_flows.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/uplink/uplink_flows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"
#include "tests/support/nginx_server.h"

namespace clustercert::agent::uplink {
namespace {

using ::clustercert::testing::NginxServer;
using ::testing::AllOf;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kObjectBytes = uint64_t{64} << 20;

TEST(SplitRangesTest, SplitsEvenly) {
  EXPECT_THAT(SplitRanges(100, 4), ElementsAre(ByteRange{0, 24}, ByteRange{25, 49},
                                               ByteRange{50, 74}, ByteRange{75, 99}));
}

TEST(SplitRangesTest, FirstRangesTakeTheRemainder) {
  EXPECT_THAT(SplitRanges(10, 3), ElementsAre(ByteRange{0, 3}, ByteRange{4, 6}, ByteRange{7, 9}));
}

TEST(SplitRangesTest, OneFlowTakesTheWholeObject) {
  EXPECT_THAT(SplitRanges(1048576, 1), ElementsAre(ByteRange{0, 1048575}));
}

TEST(SplitRangesTest, MoreFlowsThanBytesGivesFewerRangesNeverEmptyOnes) {
  EXPECT_THAT(SplitRanges(3, 8), ElementsAre(ByteRange{0, 0}, ByteRange{1, 1}, ByteRange{2, 2}));
  EXPECT_TRUE(SplitRanges(0, 4).empty());
  EXPECT_TRUE(SplitRanges(5, 0).empty());
}

TEST(SplitRangesTest, CoversAHugeObjectContiguously) {
  const uint64_t size = (uint64_t{1} << 40) + 7;
  const std::vector<ByteRange> ranges = SplitRanges(size, 1024);
  ASSERT_EQ(ranges.size(), 1024u);
  uint64_t next = 0;
  for (const ByteRange& range : ranges) {
    EXPECT_EQ(range.first, next);
    EXPECT_GE(range.size(), size / 1024);
    EXPECT_LE(range.size(), size / 1024 + 1);
    next = range.last + 1;
  }
  EXPECT_EQ(next, size);
}

TEST(ParseContentRangeTotalTest, ReadsTheTotal) {
  EXPECT_EQ(*ParseContentRangeTotal("bytes 0-0/1048576"), 1048576u);
  EXPECT_EQ(*ParseContentRangeTotal("  bytes 100-199/67108864\r\n"), 67108864u);
  EXPECT_EQ(*ParseContentRangeTotal("Bytes 0-0/1"), 1u);
}

TEST(ParseContentRangeTotalTest, UnsatisfiedRangeOfAnEmptyObjectIsZero) {
  EXPECT_EQ(*ParseContentRangeTotal("bytes */0"), 0u);
}

TEST(ParseContentRangeTotalTest, RejectsUnknownOrMalformedValues) {
  for (const char* value : {"", "bytes 0-0/*", "items 0-0/5", "bytes 0-0/", "bytes 0-9/5",
                            "bytes 0-0/-1", "bytes 5-1/10", "bytes 0-0", "bytes x-0/5"}) {
    EXPECT_EQ(ParseContentRangeTotal(value).status().code(), absl::StatusCode::kInvalidArgument)
        << value;
  }
}

TEST(SummariseTest, AggregatesOverTheEarliestFirstToTheLatestLastByte) {
  const SteadyClock::time_point t0 = SteadyClock::now();
  FlowsResult result;
  result.flows = {{1'000'000'000, 0, 3}, {500'000'000, 0, 2}};
  const std::vector<FlowWindow> windows = {
      {t0, t0 + std::chrono::seconds(1)},
      {t0 + std::chrono::milliseconds(500), t0 + std::chrono::seconds(2)}};
  Summarise(result, windows);
  EXPECT_DOUBLE_EQ(result.flows[0].seconds, 1.0);
  EXPECT_DOUBLE_EQ(result.flows[1].seconds, 1.5);
  EXPECT_EQ(result.total_bytes, 1'500'000'000u);
  EXPECT_DOUBLE_EQ(result.seconds, 2.0);
  EXPECT_DOUBLE_EQ(result.aggregate_gbps, 6.0);
  EXPECT_DOUBLE_EQ(FlowGbps(result.flows[0]), 8.0);
  EXPECT_NEAR(FlowGbps(result.flows[1]), 500'000'000.0 * 8 / 1.5 / 1e9, 1e-12);
}

TEST(SummariseTest, AFlowWithoutBytesHasNoTimeAndDoesNotStretchTheWindow) {
  const SteadyClock::time_point t0 = SteadyClock::now();
  FlowsResult result;
  result.flows = {{0, 0, 1}, {250'000'000, 0, 1}};
  const std::vector<FlowWindow> windows = {{t0 - std::chrono::seconds(10), t0},
                                           {t0, t0 + std::chrono::milliseconds(500)}};
  Summarise(result, windows);
  EXPECT_EQ(result.flows[0].seconds, 0);
  EXPECT_EQ(FlowGbps(result.flows[0]), 0);
  EXPECT_DOUBLE_EQ(result.seconds, 0.5);
  EXPECT_DOUBLE_EQ(result.aggregate_gbps, 4.0);
}

TEST(SummariseTest, NoBytesOrNoTimeGivesZeroRates) {
  FlowsResult result;
  result.flows = {{0, 0, 1}};
  Summarise(result, std::vector<FlowWindow>{{}});
  EXPECT_EQ(result.total_bytes, 0u);
  EXPECT_EQ(result.seconds, 0);
  EXPECT_EQ(result.aggregate_gbps, 0);
  // One burst at one instant: bytes but no measurable time.
  const SteadyClock::time_point t0 = SteadyClock::now();
  result.flows = {{4096, 0, 1}};
  Summarise(result, std::vector<FlowWindow>{{t0, t0}});
  EXPECT_EQ(result.total_bytes, 4096u);
  EXPECT_EQ(result.aggregate_gbps, 0);
  EXPECT_EQ(FlowGbps(result.flows[0]), 0);
}

TEST(ValidateFlowSpecTest, RejectsOutOfRangeValues) {
  FlowSpec spec;
  EXPECT_TRUE(ValidateFlowSpec(spec, "t").ok());
  spec.flows = 0;
  EXPECT_EQ(ValidateFlowSpec(spec, "t").code(), absl::StatusCode::kInvalidArgument);
  spec.flows = kMaxFlows + 1;
  EXPECT_EQ(ValidateFlowSpec(spec, "t").code(), absl::StatusCode::kInvalidArgument);
  spec.flows = kMaxFlows;
  EXPECT_TRUE(ValidateFlowSpec(spec, "t").ok());
  spec.duration = absl::ZeroDuration();
  EXPECT_EQ(ValidateFlowSpec(spec, "t").code(), absl::StatusCode::kInvalidArgument);
  spec.duration = absl::InfiniteDuration();
  EXPECT_EQ(ValidateFlowSpec(spec, "t").code(), absl::StatusCode::kInvalidArgument);
  spec.duration = absl::Seconds(1);
  spec.bind_ip = "eth0";
  EXPECT_THAT(ValidateFlowSpec(spec, "t").message(), HasSubstr("\"eth0\""));
  spec.bind_ip = "fd00::2";
  EXPECT_TRUE(ValidateFlowSpec(spec, "t").ok());
}

// A loopback port that refuses connections: bound, never listening, and
// held for the test so nothing else takes it.
class RefusingPort {
 public:
  RefusingPort() : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), length);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~RefusingPort() { close(fd_); }
  uint16_t port() const { return port_; }
  // Turns it into one that completes handshakes but never answers.
  void ListenWithoutAccepting() { listen(fd_, 16); }

 private:
  int fd_;
  uint16_t port_ = 0;
};

// A listening socket on 127.0.0.1 with a kernel-chosen port, for the
// in-test servers below.
int ListenOnLoopback(uint16_t* port) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  bind(listener, reinterpret_cast<sockaddr*>(&address), length);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  listen(listener, 16);
  *port = ntohs(address.sin_port);
  return listener;
}

// A minimal HTTP/1.0-style server unlike nginx: it ignores Range, sends no
// Content-Length (on GET or HEAD) and ends each body by closing. Serves one
// connection at a time until destroyed.
class LengthlessServer {
 public:
  static constexpr size_t kBodyBytes = 100 * 1024;

  LengthlessServer() {
    listener_ = ListenOnLoopback(&port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~LengthlessServer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  std::string Url() const { return absl::StrCat("http://127.0.0.1:", port_, "/stream"); }
  int heads() const { return heads_; }

 private:
  void Serve() {
    const std::string body(kBodyBytes, 'x');
    while (!stop_) {
      pollfd entry{listener_, POLLIN, 0};
      if (poll(&entry, 1, 20) != 1) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        pollfd readable{fd, POLLIN, 0};
        if (poll(&readable, 1, 1000) != 1) break;
        const ssize_t got = read(fd, buffer, sizeof(buffer));
        if (got <= 0) break;
        request.append(buffer, static_cast<size_t>(got));
      }
      const bool head = request.rfind("HEAD ", 0) == 0;
      heads_ += head ? 1 : 0;
      std::string answer = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
      if (!head) answer += body;
      // Loopback takes 100 KiB at once; a client that hung up just loses it.
      (void)send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      close(fd);
    }
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> heads_{0};
  std::thread thread_;
};

TEST(LengthlessServerTest, OneFlowReadsWholeBodiesOfUnknownSize) {
  LengthlessServer server;
  FlowSpec spec;
  spec.duration = absl::Milliseconds(300);
  spec.deadline = absl::Now() + absl::Seconds(10);
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server.Url(), spec, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->flows.size(), 1u);
  EXPECT_EQ(result->object_bytes, 0u);
  EXPECT_GT(result->flows[0].requests, 1u);
  EXPECT_GE(result->flows[0].bytes, LengthlessServer::kBodyBytes * (result->flows[0].requests - 1));
  EXPECT_THAT(result->detail, HasSubstr("size unknown"));
  EXPECT_EQ(server.heads(), 1);  // asked for the size once, in vain
}

TEST(LengthlessServerTest, SeveralFlowsNeedRanges) {
  LengthlessServer server;
  FlowSpec spec;
  spec.flows = 3;
  spec.duration = absl::Milliseconds(300);
  spec.deadline = absl::Now() + absl::Seconds(10);
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server.Url(), spec, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("3 flows cannot each read a part"));
}

// A server that honours Range but serves one connection at a time, keeping
// it alive: of N flows connecting together, all but one get nothing.
class OneConnectionServer {
 public:
  static constexpr uint64_t kObjectBytes = 1 << 20;

  OneConnectionServer() {
    listener_ = ListenOnLoopback(&port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneConnectionServer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  std::string Url() const { return absl::StrCat("http://127.0.0.1:", port_, "/shard.tar"); }

 private:
  void Serve() {
    const std::string zeros(kObjectBytes, '\0');
    while (!stop_) {
      pollfd entry{listener_, POLLIN, 0};
      if (poll(&entry, 1, 20) != 1) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string pending;
      char buffer[4096];
      while (!stop_) {
        const size_t end = pending.find("\r\n\r\n");
        if (end == std::string::npos) {
          pollfd readable{fd, POLLIN, 0};
          if (poll(&readable, 1, 20) != 1) continue;
          const ssize_t got = read(fd, buffer, sizeof(buffer));
          if (got <= 0) break;  // the client closed: serve the next one
          pending.append(buffer, static_cast<size_t>(got));
          continue;
        }
        const std::string request = pending.substr(0, end);
        pending.erase(0, end + 4);
        uint64_t first = 0;
        uint64_t last = kObjectBytes - 1;
        const size_t range = request.find("Range: bytes=");
        if (range != std::string::npos) {
          sscanf(request.c_str() + range, "Range: bytes=%" SCNu64 "-%" SCNu64, &first, &last);
        }
        const std::string answer =
            absl::StrCat("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes ", first, "-", last,
                         "/", kObjectBytes, "\r\nContent-Length: ", last - first + 1, "\r\n\r\n",
                         absl::string_view(zeros).substr(first, last - first + 1));
        if (send(fd, answer.data(), answer.size(), MSG_NOSIGNAL) < 0) break;
      }
      close(fd);
    }
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(OneConnectionServerTest, FlowsThatGetNoBytesFailTheRun) {
  OneConnectionServer server;
  FlowSpec spec;
  spec.flows = 3;
  spec.duration = absl::Milliseconds(300);
  spec.deadline = absl::Now() + absl::Seconds(10);
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server.Url(), spec, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(result.status().message(),
              AllOf(HasSubstr("2 of 3 flows received no bytes"), HasSubstr(server.Url())));
}

TEST(OneConnectionServerTest, OneFlowIsServed) {
  OneConnectionServer server;
  FlowSpec spec;
  spec.duration = absl::Milliseconds(200);
  spec.deadline = absl::Now() + absl::Seconds(10);
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server.Url(), spec, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->object_bytes, OneConnectionServer::kObjectBytes);
  EXPECT_GT(result->flows[0].bytes, 0u);
}

class HttpRangeFlowsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new NginxServer(kObjectBytes);
    start_ = new absl::Status(server_->Start());
  }
  static void TearDownTestSuite() {
    delete server_;
    delete start_;
    server_ = nullptr;
    start_ = nullptr;
  }
  void SetUp() override {
    if (absl::IsNotFound(*start_)) SKIP_FOR_ENVIRONMENT("nginx") << start_->message();
    ASSERT_TRUE(start_->ok()) << *start_;
  }

  static FlowSpec Spec(int flows, absl::Duration duration = absl::Milliseconds(500)) {
    FlowSpec spec;
    spec.flows = flows;
    spec.duration = duration;
    spec.deadline = absl::Now() + duration + absl::Seconds(20);
    return spec;
  }

  static void ExpectConsistent(const FlowsResult& result) {
    uint64_t total = 0;
    for (const FlowTally& flow : result.flows) {
      EXPECT_GT(flow.bytes, 0u);
      EXPECT_GE(flow.requests, 1u);
      EXPECT_GT(flow.seconds, 0);
      EXPECT_LE(flow.seconds, result.seconds + 1e-9);
      total += flow.bytes;
    }
    EXPECT_EQ(result.total_bytes, total);
    ASSERT_GT(result.seconds, 0);
    EXPECT_THAT(result.aggregate_gbps,
                DoubleNear(static_cast<double>(total) * 8 / result.seconds / 1e9, 1e-9));
  }

  static NginxServer* server_;
  static absl::Status* start_;
};

NginxServer* HttpRangeFlowsTest::server_ = nullptr;
absl::Status* HttpRangeFlowsTest::start_ = nullptr;

TEST_F(HttpRangeFlowsTest, OneFlowReadsForTheDuration) {
  const absl::Time start = absl::Now();
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server_->ObjectUrl(), Spec(1), nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
  ASSERT_EQ(result->flows.size(), 1u);
  ExpectConsistent(*result);
  EXPECT_LE(result->seconds, 0.6);
  EXPECT_EQ(result->object_bytes, kObjectBytes);
  EXPECT_THAT(result->detail, HasSubstr("http GET, 1 range flow over a 67108864-byte object"));
}

TEST_F(HttpRangeFlowsTest, FourFlowsEachReadTheirPart) {
  std::atomic<uint64_t> moved{0};
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server_->ObjectUrl(), Spec(4), &moved);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->flows.size(), 4u);
  ExpectConsistent(*result);
  EXPECT_EQ(moved.load(), result->total_bytes);
  EXPECT_THAT(result->detail, HasSubstr("4 range flows over a 67108864-byte object"));
}

TEST_F(HttpRangeFlowsTest, SmallObjectIsRequestedAgainUntilTheDurationEnds) {
  ASSERT_TRUE(server_->WriteObject("small.bin", 64 * 1024).ok());
  absl::StatusOr<FlowsResult> result =
      RunHttpRangeFlows(server_->Url("/small.bin"), Spec(2, absl::Milliseconds(300)), nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->flows.size(), 2u);
  ExpectConsistent(*result);
  for (const FlowTally& flow : result->flows) {
    EXPECT_GT(flow.requests, 1u);
    // Whole 32 KiB parts, plus at most the part in flight at the end.
    EXPECT_GE(flow.bytes, uint64_t{32 * 1024} * (flow.requests - 1));
    EXPECT_LE(flow.bytes, uint64_t{32 * 1024} * flow.requests);
  }
}

TEST_F(HttpRangeFlowsTest, DurationStopsAFlowMidTransfer) {
  // Sparse, so it costs no disk; no loopback reads 1 GiB in 50 ms.
  ASSERT_TRUE(server_->WriteObject("huge.bin", uint64_t{1} << 30).ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<FlowsResult> result =
      RunHttpRangeFlows(server_->Url("/huge.bin"), Spec(1, absl::Milliseconds(50)), nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(result->flows[0].requests, 1u);
  EXPECT_GT(result->flows[0].bytes, 0u);
  EXPECT_LT(result->flows[0].bytes, uint64_t{1} << 30);
}

TEST_F(HttpRangeFlowsTest, MoreFlowsThanBytesRunsOneFlowPerByte) {
  ASSERT_TRUE(server_->WriteObject("tiny.bin", 3).ok());
  absl::StatusOr<FlowsResult> result =
      RunHttpRangeFlows(server_->Url("/tiny.bin"), Spec(8, absl::Milliseconds(200)), nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->flows.size(), 3u);
  EXPECT_EQ(result->object_bytes, 3u);
  EXPECT_THAT(result->detail, HasSubstr("8 flows asked; the object has only 3 bytes"));
}

TEST_F(HttpRangeFlowsTest, BindsToTheGivenLocalAddress) {
  FlowSpec spec = Spec(2, absl::Milliseconds(200));
  spec.bind_ip = "127.0.0.1";
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server_->ObjectUrl(), spec, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConsistent(*result);
}

TEST_F(HttpRangeFlowsTest, BindingToAForeignAddressFails) {
  FlowSpec spec = Spec(1, absl::Milliseconds(200));
  spec.bind_ip = "192.0.2.1";  // TEST-NET-1: on no host
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server_->ObjectUrl(), spec, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("bind_ip"));
}

TEST_F(HttpRangeFlowsTest, MissingObjectNamesTheStatusAndTheUrl) {
  const std::string url = server_->Url("/no/such/shard.tar");
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(url, Spec(2), nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound) << result.status();
  EXPECT_THAT(result.status().message(),
              AllOf(HasSubstr(absl::StrCat("GET ", url)), HasSubstr("404 Not Found"),
                    HasSubstr("check the object path")));
}

TEST_F(HttpRangeFlowsTest, ServerIgnoringRangeFailsWithSeveralFlows) {
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server_->NoRangeUrl(), Spec(4), nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  EXPECT_THAT(
      result.status().message(),
      AllOf(HasSubstr(server_->NoRangeUrl()), HasSubstr("ignores Range requests"),
            HasSubstr("4 flows cannot each read a part"), HasSubstr("enable range requests")));
}

TEST_F(HttpRangeFlowsTest, ServerIgnoringRangeWorksWithOneFlow) {
  absl::StatusOr<FlowsResult> result =
      RunHttpRangeFlows(server_->NoRangeUrl(), Spec(1, absl::Milliseconds(300)), nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConsistent(*result);
  EXPECT_EQ(result->object_bytes, kObjectBytes);
}

TEST_F(HttpRangeFlowsTest, EmptyObjectFails) {
  ASSERT_TRUE(server_->WriteObject("empty.bin", 0).ok());
  absl::StatusOr<FlowsResult> result =
      RunHttpRangeFlows(server_->Url("/empty.bin"), Spec(4), nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("zero-length object"));
}

TEST_F(HttpRangeFlowsTest, NothingListeningIsUnavailableWithinTheDeadline) {
  RefusingPort port;
  const std::string url = absl::StrCat("http://127.0.0.1:", port.port(), "/shard.tar");
  FlowSpec spec = Spec(4);
  spec.deadline = absl::Now() + absl::Seconds(2);
  const absl::Time start = absl::Now();
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(url, spec, nullptr);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  EXPECT_THAT(result.status().message(), AllOf(HasSubstr(url), HasSubstr("could not connect")));
}

TEST_F(HttpRangeFlowsTest, ServerThatNeverAnswersHitsTheDeadline) {
  RefusingPort port;
  port.ListenWithoutAccepting();
  const std::string url = absl::StrCat("http://127.0.0.1:", port.port(), "/shard.tar");
  FlowSpec spec = Spec(2);
  spec.deadline = absl::Now() + spec.duration + absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(url, spec, nullptr);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr(url));
}

TEST_F(HttpRangeFlowsTest, DeadlineShorterThanTheDurationFailsAtOnce) {
  FlowSpec spec = Spec(2, absl::Seconds(5));
  spec.deadline = absl::Now() + absl::Seconds(1);
  const absl::Time start = absl::Now();
  absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server_->ObjectUrl(), spec, nullptr);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(100));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("cannot run for 5s"));
}

TEST_F(HttpRangeFlowsTest, BadSpecOrUrlIsInvalidArgument) {
  EXPECT_EQ(RunHttpRangeFlows(server_->ObjectUrl(), Spec(0), nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunHttpRangeFlows("gopher2://x/y", Spec(1), nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace clustercert::agent::uplink
