#include "common/ip_subnet.h"

#include "gtest/gtest.h"

namespace clustercert {
namespace {

TEST(IpSubnetTest, ParseClearsHostBits) {
  auto subnet = IpSubnet::Parse("10.201.1.7/24");
  ASSERT_TRUE(subnet.has_value());
  EXPECT_EQ(subnet->ToString(), "10.201.1.0/24");
  EXPECT_EQ(IpSubnet::Parse("fd00::5:1/64")->ToString(), "fd00::/64");
  EXPECT_EQ(IpSubnet::Of("172.16.5.9", 12)->ToString(), "172.16.0.0/12");
}

TEST(IpSubnetTest, RejectsWhatIsNotACidr) {
  EXPECT_FALSE(IpSubnet::Parse("10.0.0.1").has_value());
  EXPECT_FALSE(IpSubnet::Parse("10.0.0.1/33").has_value());
  EXPECT_FALSE(IpSubnet::Parse("10.0.0.1/x").has_value());
  EXPECT_FALSE(IpSubnet::Parse("node1/24").has_value());
  EXPECT_FALSE(IpSubnet::Of("10.0.0.1", -1).has_value());
}

TEST(IpSubnetTest, ContainsComparesTheNetworkBits) {
  auto subnet = *IpSubnet::Parse("10.201.2.0/24");
  EXPECT_TRUE(subnet.Contains("10.201.2.3"));
  EXPECT_TRUE(subnet.Contains("::ffff:10.201.2.3"));
  EXPECT_FALSE(subnet.Contains("10.201.1.3"));
  EXPECT_FALSE(subnet.Contains("fd00::1"));
  EXPECT_FALSE(subnet.Contains("not-an-ip"));
  EXPECT_TRUE(IpSubnet::Parse("0.0.0.0/0")->Contains("8.8.8.8"));
}

TEST(IpSubnetTest, OverlapsWhenOneHoldsTheOther) {
  auto wide = *IpSubnet::Parse("192.168.0.0/16");
  auto narrow = *IpSubnet::Parse("192.168.7.0/24");
  auto other = *IpSubnet::Parse("10.0.0.0/8");
  EXPECT_TRUE(wide.Overlaps(narrow));
  EXPECT_TRUE(narrow.Overlaps(wide));
  EXPECT_FALSE(wide.Overlaps(other));
  EXPECT_FALSE(wide.Overlaps(*IpSubnet::Parse("fd00::/8")));
}

TEST(IpSubnetTest, PrefixLengthOfMask) {
  const unsigned char v4[] = {255, 255, 255, 0};
  const unsigned char odd[] = {255, 0, 255, 0};
  const unsigned char v4_20[] = {255, 255, 240, 0};
  EXPECT_EQ(PrefixLengthOfMask(v4, 4), 24);
  EXPECT_EQ(PrefixLengthOfMask(v4_20, 4), 20);
  EXPECT_EQ(PrefixLengthOfMask(odd, 4), -1);
}

}  // namespace
}  // namespace clustercert
