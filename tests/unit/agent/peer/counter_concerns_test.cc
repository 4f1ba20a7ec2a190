// CounterConcerns: the sentences a pair's report carries when a port's error
// counters rose or its congestion was handled without (or with misplaced) PFC.
#include <string>
#include <vector>

#include "agent/peer/port_counters.h"
#include "common/counter_deltas.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::peer {
namespace {

using ::clustercert::counters::ConcernContext;
using ::clustercert::counters::CounterCategory;
using ::clustercert::counters::CounterConcerns;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

v1::CounterDelta Delta(const std::string& source, const std::string& name, uint64_t delta,
                       const std::string& note = "") {
  v1::CounterDelta d;
  d.set_source(source);
  d.set_name(name);
  d.set_before(100);
  d.set_after(100 + delta);
  d.set_delta(delta);
  d.set_category(CounterCategory(name));
  d.set_note(note);
  return d;
}

const ConcernContext kMlx5_0{"mlx5_0", 1, 3};

TEST(CounterConcernsTest, LinkFlapNamesThePortAndTheFix) {
  EXPECT_THAT(CounterConcerns({Delta("counters", "link_downed", 2)}, kMlx5_0),
              ElementsAre("mlx5_0 port 1: link_downed +2 during the test: the link flapped — "
                          "reseat or replace the cable/transceiver"));
}

TEST(CounterConcernsTest, WithoutContextTheSentenceStartsWithTheCounter) {
  EXPECT_THAT(CounterConcerns({Delta("counters", "symbol_error", 57)}),
              ElementsAre(StartsWith("symbol_error +57 during the test: bit errors on the wire")));
}

TEST(CounterConcernsTest, OneSentencePerRisingErrorCounter) {
  auto concerns = CounterConcerns(
      {Delta("counters", "symbol_error", 5), Delta("counters", "port_xmit_data", 123456),
       Delta("hw_counters", "out_of_sequence", 12),
       Delta("hw_counters", "local_ack_timeout_err", 0), Delta("hw_counters", "rcvd_seq_err", 3),
       Delta("ethtool", "rx_discards_phy", 9)},
      kMlx5_0);
  ASSERT_EQ(concerns.size(), 4u);
  EXPECT_THAT(concerns[0], StartsWith("mlx5_0 port 1: symbol_error +5 during the test"));
  EXPECT_THAT(concerns[1], StartsWith("mlx5_0 port 1: out_of_sequence +12 during the test: "
                                      "packets arrived out of sequence"));
  EXPECT_THAT(concerns[2], StartsWith("mlx5_0 port 1: rcvd_seq_err +3"));
  EXPECT_THAT(concerns[3],
              HasSubstr("rx_discards_phy +9 during the test: the NIC dropped packets"));
}

TEST(CounterConcernsTest, CleanPortHasNoConcerns) {
  EXPECT_THAT(CounterConcerns(
                  {Delta("counters", "link_downed", 0), Delta("counters", "port_xmit_data", 99999),
                   Delta("hw_counters", "ack_deferred", 4), Delta("ethtool", "rx_prio3_pause", 0)},
                  kMlx5_0),
              IsEmpty());
}

TEST(CounterConcernsTest, BackwardsErrorCounterIsNotAConcern) {
  EXPECT_THAT(CounterConcerns({Delta("counters", "link_downed", 0,
                                     "went backwards from 5 to 0 (counter reset or wrap): "
                                     "no delta")},
                              kMlx5_0),
              IsEmpty());
}

TEST(CounterConcernsTest, SaturatedErrorCounterIsAConcern) {
  EXPECT_THAT(
      CounterConcerns({Delta("counters", "symbol_error", 0,
                             "saturated at 65535: the true change is unknown; clear the port "
                             "counters (perfquery -x -R) and rerun")},
                      kMlx5_0),
      ElementsAre(StartsWith("mlx5_0 port 1: symbol_error is saturated at 65535")));
}

TEST(CounterConcernsTest, EcnWithoutPauseFramesIsInformational) {
  auto concerns = CounterConcerns(
      {Delta("hw_counters", "np_cnp_sent", 40), Delta("hw_counters", "rp_cnp_handled", 38),
       Delta("hw_counters", "np_ecn_marked_roce_packets", 40),
       Delta("ethtool", "rx_prio3_pause", 0), Delta("ethtool", "tx_prio3_pause", 0)},
      kMlx5_0);
  EXPECT_THAT(concerns,
              ElementsAre("mlx5_0 port 1: congestion handled by ECN only (np_cnp_sent +40, "
                          "rp_cnp_handled +38, np_ecn_marked_roce_packets +40, no pause "
                          "frames): informational — ECN slowed the senders and PFC never "
                          "engaged"));
}

TEST(CounterConcernsTest, EcnWithUnreadPauseCountersSaysUnknown) {
  auto concerns = CounterConcerns({Delta("hw_counters", "np_ecn_marked_roce_packets", 7)}, kMlx5_0);
  ASSERT_EQ(concerns.size(), 1u);
  EXPECT_THAT(concerns[0], HasSubstr("pause frame counters were not read"));
  EXPECT_THAT(concerns[0], HasSubstr("informational"));
}

TEST(CounterConcernsTest, EcnWithPauseOnTheRdmaPriorityIsHealthy) {
  EXPECT_THAT(CounterConcerns(
                  {Delta("hw_counters", "np_cnp_sent", 40), Delta("ethtool", "rx_prio3_pause", 120),
                   Delta("ethtool", "tx_prio3_pause", 15)},
                  kMlx5_0),
              IsEmpty());
}

TEST(CounterConcernsTest, PauseOnAnotherPriorityIsAWarning) {
  auto concerns = CounterConcerns(
      {Delta("hw_counters", "np_cnp_sent", 40), Delta("ethtool", "rx_prio3_pause", 0),
       Delta("ethtool", "rx_prio4_pause", 120), Delta("ethtool", "tx_prio4_pause", 6),
       Delta("ethtool", "rx_prio4_pause_duration", 5000)},
      kMlx5_0);
  ASSERT_EQ(concerns.size(), 1u) << concerns[0];
  EXPECT_EQ(concerns[0],
            "mlx5_0 port 1: warning: pause on priority 4 frames rose during the test "
            "(rx_prio4_pause +120, tx_prio4_pause +6) while RDMA traffic uses priority 3: flow "
            "control acts on the wrong traffic — enable PFC on priority 3 only, on the NIC and "
            "the switch port");
}

TEST(CounterConcernsTest, GlobalPauseIsAWarning) {
  auto concerns = CounterConcerns({Delta("ethtool", "tx_pause_ctrl_phy", 30)}, kMlx5_0);
  ASSERT_EQ(concerns.size(), 1u);
  EXPECT_THAT(concerns[0], HasSubstr("warning: link-level (802.3x global) pause frames rose"));
}

TEST(CounterConcernsTest, UnknownRdmaPriorityJudgesNoPause) {
  ConcernContext context{"mlx5_0", 1, -1};
  EXPECT_THAT(CounterConcerns({Delta("ethtool", "rx_prio4_pause", 120)}, context), IsEmpty());
}

}  // namespace
}  // namespace clustercert::agent::peer
