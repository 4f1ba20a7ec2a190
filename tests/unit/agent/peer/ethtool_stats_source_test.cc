// The live ethtool source on whatever machine runs the tests: it must answer
// with a Status (this sandbox's lo and eth0 may have no statistics), never
// crash, and keep only pause/discard/out_of_buffer and link health statistics
// when it reads.
#include "agent/peer/ethtool_stats_source.h"

#include <net/if.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace clustercert::agent::peer {
namespace {

TEST(EthtoolStatsSourceTest, KeepsOnlyCongestionAndLossStatistics) {
  EXPECT_TRUE(IsKeptEthtoolStat("rx_pause_ctrl_phy"));
  EXPECT_TRUE(IsKeptEthtoolStat("tx_prio3_pause"));
  EXPECT_TRUE(IsKeptEthtoolStat("rx_discards_phy"));
  EXPECT_TRUE(IsKeptEthtoolStat("rx_out_of_buffer"));
  EXPECT_FALSE(IsKeptEthtoolStat("rx_packets"));
  EXPECT_FALSE(IsKeptEthtoolStat("tx_bytes_phy"));
}

TEST(EthtoolStatsSourceTest, KeepsTheMlx5LinkHealthCountersTheVerdictJudges) {
  for (const char* name : {"link_down_events_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy",
                           "rx_crc_errors_phy", "rx_corrected_bits_phy", "rx_bits_phy"}) {
    EXPECT_TRUE(IsKeptEthtoolStat(name)) << name;
  }
  // Near misses are not kept: the set is exact names, not substrings.
  EXPECT_FALSE(IsKeptEthtoolStat("rx_symbol_err"));
  EXPECT_FALSE(IsKeptEthtoolStat("link_down_events_phy "));
  EXPECT_FALSE(IsKeptEthtoolStat(""));
}

TEST(EthtoolStatsSourceTest, KeepsTheMlx5PerLanePreFecErrors) {
  // en_stats.c: rx_err_lane_<N>_phy from PPCNT phy_corrected_bits_lane<N>.
  for (const char* name :
       {"rx_err_lane_0_phy", "rx_err_lane_3_phy", "rx_err_lane_7_phy", "rx_err_lane_15_phy"}) {
    EXPECT_TRUE(IsKeptEthtoolStat(name)) << name;
  }
  for (const char* name :
       {"rx_err_lane_16_phy", "rx_err_lane_01_phy", "rx_err_lane__phy", "rx_err_lane_x_phy",
        "rx_err_lane_0", "tx_err_lane_0_phy", "rx_err_lane_100_phy"}) {
    EXPECT_FALSE(IsKeptEthtoolStat(name)) << name;
  }
}

TEST(EthtoolStatsSourceTest, KeepsTheMlx5PerPriorityTrafficAndPauseStatistics) {
  for (int priority = 0; priority <= 7; ++priority) {
    for (const char* direction : {"rx", "tx"}) {
      for (const char* suffix : {"bytes", "packets", "pause", "pause_duration"}) {
        const std::string name = absl::StrCat(direction, "_prio", priority, "_", suffix);
        EXPECT_TRUE(IsKeptEthtoolStat(name)) << name;
      }
    }
  }
  EXPECT_TRUE(IsKeptEthtoolStat("rx_prio3_discards"));
  EXPECT_TRUE(IsKeptEthtoolStat("rx_prio3_buf_discard"));
  EXPECT_TRUE(IsKeptEthtoolStat("outbound_pci_buffer_overflow"));
  // 802.1p has priorities 0..7 only, and the per-queue and vport byte
  // counters say nothing about the priority.
  EXPECT_FALSE(IsKeptEthtoolStat("rx_prio8_bytes"));
  EXPECT_FALSE(IsKeptEthtoolStat("tx_prio_bytes"));
  EXPECT_FALSE(IsKeptEthtoolStat("tx_prio3_bytes_phy"));
  EXPECT_FALSE(IsKeptEthtoolStat("rx0_bytes"));
  EXPECT_FALSE(IsKeptEthtoolStat("rx_vport_rdma_unicast_bytes"));
  EXPECT_FALSE(IsKeptEthtoolStat("rx_prio3_marked"));
}

TEST(EthtoolStatsSourceTest, LiveLoopbackAnswersWithAStatus) {
  IoctlEthtoolStatsSource source;
  auto stats = source.Read("lo");
  if (!stats.ok()) {
    EXPECT_NE(stats.status().message().find("lo"), std::string::npos) << stats.status();
    return;
  }
  for (const auto& [name, value] : *stats) EXPECT_TRUE(IsKeptEthtoolStat(name)) << name;
}

TEST(EthtoolStatsSourceTest, LiveEth0AnswersWithAStatus) {
  IoctlEthtoolStatsSource source;
  auto stats = source.Read("eth0");
  if (!stats.ok()) {
    EXPECT_NE(stats.status().message().find("eth0"), std::string::npos) << stats.status();
    return;
  }
  for (const auto& [name, value] : *stats) EXPECT_TRUE(IsKeptEthtoolStat(name)) << name;
}

TEST(EthtoolStatsSourceTest, UnknownNetdevIsAnError) {
  IoctlEthtoolStatsSource source;
  auto stats = source.Read("ccnosuchdev0");
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("ccnosuchdev0"), std::string::npos) << stats.status();
}

TEST(EthtoolStatsSourceTest, BadNamesAreInvalidArgument) {
  IoctlEthtoolStatsSource source;
  EXPECT_EQ(source.Read("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.Read(std::string(IFNAMSIZ, 'x')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace clustercert::agent::peer
