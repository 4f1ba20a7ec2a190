#include "common/host_port.h"

#include "gtest/gtest.h"

namespace clustercert {
namespace {

TEST(HostPortTest, Loopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.3.0.9"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_FALSE(IsLoopbackHost("192.168.100.11"));
  // A DNS name that only starts like a loopback address is not one.
  EXPECT_FALSE(IsLoopbackHost("127.example.com"));
  EXPECT_FALSE(IsLoopbackHost("::ffff:10.0.0.1"));
}

}  // namespace
}  // namespace clustercert
