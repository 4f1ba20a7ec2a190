// The uplink's reach (issue 15): what ParseUplinkUrl, ParseUplinkTcpAddress
// and CheckDestination let a request connect to, and the SSRF requests seen
// against RunUplinkFlows replayed against the runners themselves.
#include "common/uplink_target.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/uplink/http_range_flows.h"
#include "agent/uplink/tcp_send_flows.h"
#include "agent/uplink/uplink_flows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::uplink {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

FlowSpec Spec(int flows = 1, absl::Duration duration = absl::Milliseconds(200)) {
  FlowSpec spec;
  spec.flows = flows;
  spec.duration = duration;
  spec.deadline = absl::Now() + duration + absl::Seconds(5);
  return spec;
}

TEST(ParseUplinkUrlTest, AcceptsHttpAndHttpsToOneHost) {
  auto url = ParseUplinkUrl("http://10.10.9.1:9000/bucket/shard-000.tar");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->host, "10.10.9.1");
  EXPECT_EQ(url->port, 9000);
  url = ParseUplinkUrl("HTTPS://Storage-1.example.com/a?b=c");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "storage-1.example.com");
  EXPECT_EQ(url->port, 443);
  url = ParseUplinkUrl("http://[fd00::9]:8080/x");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "fd00::9");
  EXPECT_TRUE(ParseUplinkUrl("http://127.0.0.1:8080/shard").ok());  // an agent's own sink
  EXPECT_TRUE(ParseUplinkUrl("http://localhost/shard").ok());
}

struct Refusal {
  const char* url;
  const char* clause;
};

TEST(ParseUplinkUrlTest, RefusesOtherSchemesAndHostsThatReachNoSingleServer) {
  for (const Refusal& refusal : {
           Refusal{"file:///etc/passwd", "the scheme file is not http or https"},
           Refusal{"gopher://127.0.0.1:6379/_SET%20x%201", "the scheme gopher is not"},
           Refusal{"dict://127.0.0.1:11211/stat", "the scheme dict is not"},
           Refusal{"ftp://10.10.9.1/shard", "the scheme ftp is not"},
           Refusal{"ldap://10.10.9.1/", "the scheme ldap is not"},
           Refusal{"10.10.9.1/shard", "does not start with http:// or https://"},
           Refusal{"http://user:pass@10.10.9.1/x", "user information before '@'"},
           Refusal{"http://10.10.9.1@169.254.169.254/x", "user information"},
           Refusal{"http://10.10.9.1/x\r\nHost: evil", "control character"},
           Refusal{"http://10.10.9.1/a b", "space"},
           Refusal{"http://10.10.9.1\\@evil/", "backslash"},
           Refusal{"http://0.0.0.0:6379/", "unspecified"},
           Refusal{"http://0.1.2.3/", "unspecified"},
           Refusal{"http://224.0.0.1/", "multicast"},
           Refusal{"http://255.255.255.255/", "broadcast"},
           Refusal{"http://[::]/", "unspecified"},
           Refusal{"http://[ff02::1]/", "multicast"},
           Refusal{"http://[::ffff:0.0.0.0]/", "unspecified"},
           Refusal{"http://[fe80::1%25eth0]/", "not an IPv6 address"},
           Refusal{"http://2130706433/", "not a dotted-quad IPv4 address"},
           Refusal{"http://0x7f000001/", "not a dotted-quad IPv4 address"},
           Refusal{"http://127.1/", "not a dotted-quad IPv4 address"},
           Refusal{"http://storage_1/", "is not a DNS name"},
           Refusal{"http://-storage/", "is not a DNS name"},
           Refusal{"http:///x", "the host is missing"},
           Refusal{"http://10.10.9.1:0/", "the port '0' is not a number from 1 to 65535"},
           Refusal{"http://10.10.9.1:65536/", "the port '65536'"},
           Refusal{"http://10.10.9.1:/", "the port ''"},
           Refusal{"http://10.10.9.1:80x/", "the port '80x'"},
       }) {
    auto parsed = ParseUplinkUrl(refusal.url);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << refusal.url;
    EXPECT_THAT(parsed.status().message(), HasSubstr(refusal.clause)) << refusal.url;
    // Control characters never come back in the message.
    EXPECT_THAT(parsed.status().message(), Not(HasSubstr("\r"))) << refusal.url;
  }
  EXPECT_THAT(ParseUplinkUrl(std::string(3000, 'a')).status().message(), HasSubstr("longer"));
  EXPECT_THAT(
      ParseUplinkUrl(absl::StrCat("http://", std::string(64, 'a'), ".com/")).status().message(),
      HasSubstr("is not a DNS name"));
}

TEST(ParseUplinkTcpAddressTest, AcceptsLiteralAddressesOnly) {
  auto parsed = ParseUplinkTcpAddress("10.10.9.1:5201");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->port, 5201);
  EXPECT_TRUE(ParseUplinkTcpAddress("[fd00::9]:5201").ok());
  for (const Refusal& refusal : {
           Refusal{"storage1:5201", "not a literal IP address"},
           Refusal{"localhost:5201", "not a literal IP address"},
           Refusal{"0.0.0.0:22", "unspecified"},
           Refusal{"[::]:22", "unspecified"},
           Refusal{"224.0.0.251:5353", "multicast"},
           Refusal{"[ff02::1]:5201", "multicast"},
           Refusal{"255.255.255.255:5201", "broadcast"},
           Refusal{"[::ffff:224.0.0.1]:5201", "multicast"},
           Refusal{"10.10.9.1:0", "outside 1..65535"},
           Refusal{"10.10.9.1:70000", "outside 1..65535"},
           Refusal{"10.10.9.1", "port is missing"},
           Refusal{"10.10.9.1:52\n01", "control character"},
       }) {
    auto result = ParseUplinkTcpAddress(refusal.url);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << refusal.url;
    EXPECT_THAT(result.status().message(), HasSubstr(refusal.clause)) << refusal.url;
  }
}

TEST(CheckDestinationTest, RefusesWhatANameCouldResolveTo) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  inet_pton(AF_INET, "0.0.0.0", &v4.sin_addr);
  EXPECT_THAT(CheckDestination(reinterpret_cast<sockaddr*>(&v4)).message(),
              HasSubstr("unspecified"));
  inet_pton(AF_INET, "239.1.2.3", &v4.sin_addr);
  EXPECT_THAT(CheckDestination(reinterpret_cast<sockaddr*>(&v4)).message(), HasSubstr("multicast"));
  inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr);
  EXPECT_TRUE(CheckDestination(reinterpret_cast<sockaddr*>(&v4)).ok());
  sockaddr unix_address{};
  unix_address.sa_family = AF_UNIX;
  EXPECT_FALSE(CheckDestination(&unix_address).ok());
}

TEST(CheckDestinationTest, RefusesThisHostsDirectedBroadcastAddresses) {
  ifaddrs* list = nullptr;
  ASSERT_EQ(getifaddrs(&list), 0);
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, freeifaddrs);
  const sockaddr* broadcast = nullptr;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if ((entry->ifa_flags & IFF_BROADCAST) != 0 && entry->ifa_broadaddr != nullptr &&
        entry->ifa_broadaddr->sa_family == AF_INET) {
      broadcast = entry->ifa_broadaddr;
      break;
    }
  }
  if (broadcast == nullptr)
    SKIP_FOR_ENVIRONMENT("ipv4-broadcast") << "no IPv4 interface with a broadcast address here";
  EXPECT_THAT(CheckDestination(broadcast).message(), HasSubstr("is the broadcast address of"));
}

TEST(UplinkSsrfTest, HttpRunnerRefusesOtherSchemesBeforeConnecting) {
  for (const char* url : {"file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL",
                          "dict://127.0.0.1:11211/stat", "ftp://127.0.0.1/", "scp://127.0.0.1/x",
                          "http://0.0.0.0:6379/", "http://user@127.0.0.1/"}) {
    const absl::Time start = absl::Now();
    absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(url, Spec(), nullptr);
    EXPECT_LT(absl::Now() - start, absl::Milliseconds(100)) << url;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(result.status().message(),
                AllOf(HasSubstr("is refused"), HasSubstr("uplink.targets[].url")))
        << url;
    // Nothing of /etc/passwd: the file was never opened.
    EXPECT_THAT(result.status().message(), Not(HasSubstr("root:"))) << url;
  }
}

TEST(UplinkSsrfTest, TcpRunnerRefusesAddressesThatReachNoSingleServer) {
  for (const char* address : {"0.0.0.0:22", "[::]:22", "224.0.0.1:5201", "255.255.255.255:5201",
                              "[ff02::1]:5201", "localhost:22"}) {
    absl::StatusOr<FlowsResult> result = RunTcpSendFlows(address, Spec(), nullptr);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(result.status().message(),
                AllOf(HasSubstr("is refused"), HasSubstr("uplink.targets[].address")))
        << address;
  }
}

TEST(UplinkSsrfTest, ThousandFlowsAndUnboundedDurationsAreRefused) {
  // 1,024 flows per call ran the agent out of file descriptors.
  absl::StatusOr<FlowsResult> many = RunTcpSendFlows("127.0.0.1:5201", Spec(1024), nullptr);
  EXPECT_EQ(many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(many.status().message(), AllOf(HasSubstr("1024 flows"), HasSubstr("1 to 64")));
  EXPECT_EQ(RunHttpRangeFlows("http://127.0.0.1:1/x", Spec(65), nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  FlowSpec long_run = Spec(1, absl::Hours(10));
  absl::StatusOr<FlowsResult> hours = RunTcpSendFlows("127.0.0.1:5201", long_run, nullptr);
  EXPECT_EQ(hours.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(hours.status().message(), AllOf(HasSubstr("10h"), HasSubstr("at most 2m")));
  EXPECT_TRUE(ValidateFlowSpec(Spec(kMaxFlows, kMaxDuration), "t").ok());
}

// Answers every request with a redirect to `location`, counting requests.
class RedirectingServer {
 public:
  explicit RedirectingServer(std::string location) : location_(std::move(location)) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), length);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    listen(listener_, 16);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RedirectingServer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  std::string Url() const { return absl::StrCat("http://127.0.0.1:", port_, "/shard.tar"); }
  int requests() const { return requests_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd entry{listener_, POLLIN, 0};
      if (poll(&entry, 1, 20) != 1) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      char buffer[4096];
      pollfd readable{fd, POLLIN, 0};
      if (poll(&readable, 1, 1000) == 1 && read(fd, buffer, sizeof(buffer)) > 0) ++requests_;
      const std::string answer = absl::StrCat("HTTP/1.1 302 Found\r\nLocation: ", location_,
                                              "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      (void)send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      close(fd);
    }
  }

  std::string location_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST(UplinkSsrfTest, RedirectsAreNotFollowedToAnyScheme) {
  for (const char* location :
       {"file:///etc/passwd", "gopher://127.0.0.1:6379/_x", "http://127.0.0.1:1/elsewhere"}) {
    RedirectingServer server(location);
    absl::StatusOr<FlowsResult> result = RunHttpRangeFlows(server.Url(), Spec(), nullptr);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << location;
    EXPECT_THAT(result.status().message(),
                AllOf(HasSubstr("302 Found"), HasSubstr("does not follow"),
                      HasSubstr("give the final URL")))
        << location;
    EXPECT_EQ(server.requests(), 1) << location;
  }
}

}  // namespace
}  // namespace clustercert::agent::uplink
