#include "common/host_port.h"
#include "gtest/gtest.h"

namespace clustercert {
namespace {

TEST(HostPortTest, ParsesIpv4HostNamesAndBracketedIpv6) {
  absl::StatusOr<HostPort> endpoint = ParseHostPort("192.168.100.11:7070");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->host, "192.168.100.11");
  EXPECT_EQ(endpoint->port, 7070);

  endpoint = ParseHostPort("Node1.Example.org:1");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->host, "node1.example.org");

  endpoint = ParseHostPort("[::1]:7070");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->host, "::1");
  EXPECT_EQ(endpoint->ToString(), "[::1]:7070");

  endpoint = ParseHostPort("[FD00::11]:65535");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->ToString(), "[fd00::11]:65535");
}

TEST(HostPortTest, SaysWhatIsWrong) {
  const auto reason = [](const char* text) {
    return std::string(ParseHostPort(text).status().message());
  };
  EXPECT_EQ(reason("10.0.0.1"), "the port is missing");
  EXPECT_EQ(reason("10.0.0.1:"), "the port is missing");
  EXPECT_EQ(reason("10.0.0.1:0"), "the port 0 is outside 1..65535");
  EXPECT_EQ(reason("10.0.0.1:65536"), "the port 65536 is outside 1..65535");
  EXPECT_EQ(reason("10.0.0.1:123456"), "the port 123456 is outside 1..65535");
  EXPECT_EQ(reason("10.0.0.1:http"), "the port http is not a number");
  EXPECT_EQ(reason(":7070"), "the host is empty");
  EXPECT_EQ(reason("10.0.0.300:7070"), "10.0.0.300 is not a valid IPv4 address");
  EXPECT_EQ(reason("fd00::11:7070"), "an IPv6 address needs brackets, as in [fd00::11]:7070");
  EXPECT_EQ(reason("[fd00::11:7070"), "the '[' before the IPv6 address is never closed");
  EXPECT_EQ(reason("[fd00::zz]:7070"), "fd00::zz is not a valid IPv6 address");
  EXPECT_EQ(reason("[::1]7070"), "the port is missing");
  EXPECT_EQ(reason("node 1:7070"), "the host contains ' '");
}

TEST(HostPortTest, IsIpAddress) {
  EXPECT_TRUE(IsIpAddress("10.10.1.1"));
  EXPECT_TRUE(IsIpAddress("fd00::1"));
  EXPECT_FALSE(IsIpAddress("10.10.1"));
  EXPECT_FALSE(IsIpAddress("node1"));
  EXPECT_FALSE(IsIpAddress("10.10.1.1:7070"));
}

}  // namespace
}  // namespace clustercert
