#include "controller/plan/closest_key.h"

#include "gtest/gtest.h"

namespace clustercert::controller::plan {
namespace {

const std::vector<std::string> kFabricKeys = {"type", "link_rate_gbps", "active_mtu",
                                              "min_netdev_mtu", "roce"};

TEST(ClosestKeyTest, SuggestsLikelyTypos) {
  EXPECT_EQ(ClosestKey("link_rate_gpbs", kFabricKeys), "link_rate_gbps");  // swapped letters
  EXPECT_EQ(ClosestKey("link_rate", kFabricKeys), "");                     // too far
  EXPECT_EQ(ClosestKey("activ_mtu", kFabricKeys), "active_mtu");           // dropped letter
  EXPECT_EQ(ClosestKey("Type", kFabricKeys), "type");                      // case
  EXPECT_EQ(ClosestKey("rocee", kFabricKeys), "roce");
}

TEST(ClosestKeyTest, StaysQuietWhenNothingIsClose) {
  EXPECT_EQ(ClosestKey("pfc", {"gid_index", "pfc_priority", "dscp", "trust", "ecn"}), "");
  EXPECT_EQ(ClosestKey("monitoring", kFabricKeys), "");
  EXPECT_EQ(ClosestKey("x", {}), "");
}

TEST(ClosestKeyTest, Distance) {
  EXPECT_EQ(TypoDistance("gbps", "gpbs"), 1);
  EXPECT_EQ(TypoDistance("abc", "abc"), 0);
  EXPECT_EQ(TypoDistance("", "abc"), 3);
  EXPECT_EQ(TypoDistance("kitten", "sitting"), 3);
}

}  // namespace
}  // namespace clustercert::controller::plan
