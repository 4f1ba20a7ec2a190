#include "common/host_port.h"

#include "gtest/gtest.h"

namespace clustercert {
namespace {

TEST(HostPortTest, ParsesIpv4NameAndBracketedIpv6) {
  auto a = ParseHostPort("192.168.100.11:7070");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "192.168.100.11");
  EXPECT_EQ(a->port, 7070);
  auto b = ParseHostPort("node1.lab:17071");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "node1.lab");
  auto c = ParseHostPort("[::1]:7070");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
}

TEST(HostPortTest, RejectsWithAFix) {
  for (const char* bad : {"7070", "host:", "host:99999", "host:http", "::1:7070", "[::1]7070", ":7070"}) {
    auto parsed = ParseHostPort(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
  }
  EXPECT_NE(ParseHostPort("::1:7070").status().message().find("[::1]:7070"), absl::string_view::npos);
}

TEST(HostPortTest, Loopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.3.0.9"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("192.168.100.11"));
}

}  // namespace
}  // namespace clustercert
