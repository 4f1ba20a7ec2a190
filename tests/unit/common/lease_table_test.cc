#include "common/lease_table.h"

#include <string>

#include "gtest/gtest.h"

namespace clustercert {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

TEST(LeaseTableTest, AnEntryIsFoundOnlyByItsOwner) {
  LeaseTable<int> table;
  table.Add("ep-1", 7, "controller-a", absl::Seconds(30), kStart);
  ASSERT_NE(table.Find("ep-1", "controller-a"), nullptr);
  EXPECT_EQ(table.Find("ep-1", "controller-a")->value, 7);
  EXPECT_EQ(table.Find("ep-1", "controller-b"), nullptr);  // reads as missing
  EXPECT_EQ(table.Find("ep-2", "controller-a"), nullptr);
  LeaseTable<int>::Entry removed;
  EXPECT_FALSE(table.Remove("ep-1", "controller-b", &removed));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.Remove("ep-1", "controller-a", &removed));
  EXPECT_EQ(removed.value, 7);
  EXPECT_EQ(table.size(), 0u);
}

TEST(LeaseTableTest, TouchRenewsAndKeepsALongerExtension) {
  LeaseTable<int> table;
  table.Add("ep-1", 1, "c", absl::Seconds(30), kStart);
  table.Touch("ep-1", "c", kStart + absl::Seconds(20));
  EXPECT_EQ(table.Find("ep-1", "c")->expires, kStart + absl::Seconds(50));
  // A run's extension (set by the registry) is not cut short by a touch.
  table.Find("ep-1", "c")->expires = kStart + absl::Seconds(200);
  table.Touch("ep-1", "c", kStart + absl::Seconds(21));
  EXPECT_EQ(table.Find("ep-1", "c")->expires, kStart + absl::Seconds(200));
  EXPECT_EQ(table.Touch("ep-1", "other", kStart), nullptr);
}

TEST(LeaseTableTest, ExpiredEntriesAreTakenOutAtTheirExpiry) {
  LeaseTable<std::string> table;
  table.Add("short", "s", "c", absl::Seconds(10), kStart);
  table.Add("long", "l", "c", absl::Seconds(60), kStart);
  EXPECT_TRUE(table.TakeExpired(kStart + absl::Seconds(9)).empty());
  auto expired = table.TakeExpired(kStart + absl::Seconds(10));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, "short");
  EXPECT_EQ(expired[0].second.value, "s");
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.TakeAll().size(), 1u);
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace clustercert
