// The lossless verdicts' view of the counters: which are drops, which carry
// a priority, and what category the per-priority traffic counters get.
#include "common/counter_deltas.h"

#include <string>

#include "gtest/gtest.h"

namespace clustercert::counters {
namespace {

TEST(CounterDeltasTest, PerPriorityBytesAndPacketsAreTraffic) {
  for (const char* name :
       {"rx_prio0_bytes", "tx_prio3_bytes", "rx_prio7_packets", "tx_prio3_packets"}) {
    EXPECT_EQ(CounterCategory(name), "traffic") << name;
  }
  // Pause counters and durations stay congestion, per-priority discards errors.
  EXPECT_EQ(CounterCategory("rx_prio3_pause"), "congestion");
  EXPECT_EQ(CounterCategory("tx_prio3_pause_duration"), "congestion");
  EXPECT_EQ(CounterCategory("rx_prio3_discards"), "error");
  EXPECT_EQ(CounterCategory("rx_prio3_buf_discard"), "error");
  EXPECT_EQ(CounterCategory("outbound_pci_buffer_overflow"), "error");
  // Not a priority: left as it was.
  EXPECT_EQ(CounterCategory("rx_prio8_bytes"), "other");
  EXPECT_EQ(CounterCategory("rx_bytes_phy"), "other");
}

TEST(CounterDeltasTest, ParsesPerPriorityNames) {
  auto bytes = ParsePriorityCounter("tx_prio3_bytes");
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(bytes->direction, "tx");
  EXPECT_EQ(bytes->priority, 3);
  EXPECT_EQ(bytes->suffix, "bytes");

  auto duration = ParsePriorityCounter("rx_prio0_pause_duration");
  ASSERT_TRUE(duration.has_value());
  EXPECT_EQ(duration->direction, "rx");
  EXPECT_EQ(duration->priority, 0);
  EXPECT_EQ(duration->suffix, "pause_duration");

  EXPECT_EQ(ParsePriorityCounter("rx_prio7_cong_discard")->suffix, "cong_discard");
  for (const char* name : {"rx_prio8_bytes", "rx_prio_bytes", "rx_prio3", "rx_prio3_",
                           "xx_prio3_bytes", "rx_prio33_bytes", "tx_pause_ctrl_phy", ""}) {
    EXPECT_FALSE(ParsePriorityCounter(name).has_value()) << name;
  }
}

TEST(CounterDeltasTest, DropCountersAreTheMlx5Drops) {
  for (const char* name : {"rx_discards_phy", "tx_discards_phy", "rx_out_of_buffer",
                           "dev_out_of_buffer", "outbound_pci_buffer_overflow", "rx_prio0_discards",
                           "rx_prio3_discards", "rx_prio3_buf_discard", "rx_prio3_cong_discard"}) {
    EXPECT_TRUE(IsDropCounter("ethtool", name)) << name;
  }
  EXPECT_TRUE(IsDropCounter("hw_counters", "out_of_buffer"));
  // The right name under the wrong source, and the counters that are not drops.
  EXPECT_FALSE(IsDropCounter("ethtool", "out_of_buffer"));
  EXPECT_FALSE(IsDropCounter("hw_counters", "rx_discards_phy"));
  EXPECT_FALSE(IsDropCounter("counters", "port_xmit_discards"));
  for (const char* name :
       {"rx_prio3_pause", "rx_prio3_bytes", "tx_prio3_discards", "rx_prio3_marked",
        "rx_buffer_passed_thres_phy", "tx_pause_storm_error_events", "rx_crc_errors_phy"}) {
    EXPECT_FALSE(IsDropCounter("ethtool", name)) << name;
  }
}

TEST(CounterDeltasTest, RolesAreUnchangedByTheDropList) {
  EXPECT_EQ(RoleOf("ethtool", "rx_discards_phy"), CounterRole::kRetry);
  EXPECT_EQ(RoleOf("ethtool", "rx_prio3_discards"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("hw_counters", "out_of_buffer"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("ethtool", "tx_prio3_bytes"), CounterRole::kInformational);
}

}  // namespace
}  // namespace clustercert::counters
