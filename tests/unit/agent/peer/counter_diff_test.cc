// DiffCounters and the classification behind it: deltas per counter, a
// counter that went backwards or was read on one side only, saturated IB
// counters, and the words-to-bytes helper.
#include <string>
#include <tuple>
#include <vector>

#include "agent/peer/port_counters.h"
#include "common/counter_deltas.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::peer {
namespace {

using ::clustercert::counters::CounterCategory;
using ::clustercert::counters::CountsDataWords;
using ::clustercert::counters::DataWordsToBytes;
using ::clustercert::counters::DiffCounters;
using ::clustercert::counters::kBytesPerDataWord;

using inventory::testing::FixtureRoot;

v1::PortCounters Counters(std::vector<std::tuple<std::string, std::string, uint64_t>> values) {
  v1::PortCounters counters;
  counters.set_device("mlx5_0");
  counters.set_port(1);
  for (const auto& [source, name, value] : values) {
    auto* entry = counters.add_values();
    entry->set_source(source);
    entry->set_name(name);
    entry->set_value(value);
  }
  return counters;
}

TEST(CounterDiffTest, IncreasesAreDeltasWithCategories) {
  auto before = Counters({{"counters", "link_downed", 1},
                          {"counters", "port_xmit_data", 1000},
                          {"hw_counters", "np_cnp_sent", 10},
                          {"hw_counters", "ack_deferred", 4}});
  auto after = Counters({{"counters", "link_downed", 3},
                         {"counters", "port_xmit_data", 251000},
                         {"hw_counters", "np_cnp_sent", 10},
                         {"hw_counters", "ack_deferred", 9}});
  std::vector<v1::CounterDelta> deltas = DiffCounters(before, after);
  ASSERT_EQ(deltas.size(), 4u);
  EXPECT_EQ(deltas[0].name(), "link_downed");
  EXPECT_EQ(deltas[0].source(), "counters");
  EXPECT_EQ(deltas[0].before(), 1u);
  EXPECT_EQ(deltas[0].after(), 3u);
  EXPECT_EQ(deltas[0].delta(), 2u);
  EXPECT_EQ(deltas[0].category(), "error");
  EXPECT_EQ(deltas[0].note(), "");
  EXPECT_EQ(deltas[1].delta(), 250000u);
  EXPECT_EQ(deltas[1].category(), "traffic");
  EXPECT_EQ(DataWordsToBytes(deltas[1].delta()), 1000000u);
  EXPECT_EQ(deltas[2].delta(), 0u);
  EXPECT_EQ(deltas[2].category(), "congestion");
  EXPECT_EQ(deltas[3].category(), "other");
}

TEST(CounterDiffTest, BackwardsCounterHasZeroDeltaAndANote) {
  auto deltas = DiffCounters(Counters({{"hw_counters", "out_of_sequence", 500}}),
                             Counters({{"hw_counters", "out_of_sequence", 20}}));
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].before(), 500u);
  EXPECT_EQ(deltas[0].after(), 20u);
  EXPECT_EQ(deltas[0].delta(), 0u);
  EXPECT_EQ(deltas[0].note(), "went backwards from 500 to 20 (counter reset or wrap): no delta");
}

TEST(CounterDiffTest, CounterOnOneSideOnlyHasANote) {
  auto deltas = DiffCounters(Counters({{"counters", "symbol_error", 5}}),
                             Counters({{"ethtool", "rx_prio3_pause", 40}}));
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0].name(), "rx_prio3_pause");
  EXPECT_EQ(deltas[0].delta(), 0u);
  EXPECT_EQ(deltas[0].note(), "not read before the test: no delta");
  EXPECT_EQ(deltas[1].name(), "symbol_error");
  EXPECT_EQ(deltas[1].before(), 5u);
  EXPECT_EQ(deltas[1].note(), "not read after the test: no delta");
}

TEST(CounterDiffTest, SameNameInTwoSourcesIsTwoCounters) {
  auto deltas =
      DiffCounters(Counters({{"counters", "link_downed", 1}, {"hw_counters", "link_downed", 4}}),
                   Counters({{"counters", "link_downed", 2}, {"hw_counters", "link_downed", 4}}));
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0].delta(), 1u);
  EXPECT_EQ(deltas[1].delta(), 0u);
}

TEST(CounterDiffTest, SaturatedIbCounterIsNoted) {
  auto deltas = DiffCounters(Counters({{"counters", "symbol_error", 65000},
                                       {"counters", "link_downed", 255},
                                       {"hw_counters", "link_downed", 255}}),
                             Counters({{"counters", "symbol_error", 65535},
                                       {"counters", "link_downed", 255},
                                       {"hw_counters", "link_downed", 255}}));
  ASSERT_EQ(deltas.size(), 3u);
  EXPECT_EQ(deltas[0].delta(), 535u);
  EXPECT_EQ(deltas[0].note().rfind("saturated at 65535", 0), 0u) << deltas[0].note();
  EXPECT_EQ(deltas[1].note().rfind("saturated at 255", 0), 0u) << deltas[1].note();
  EXPECT_EQ(deltas[2].note(), "");  // rxe's hw_counters are 64-bit
}

TEST(CounterDiffTest, HealthyToBrokenFixtureShowsOnlyThePlantedFlap) {
  SysfsView healthy(FixtureRoot("roce-healthy"));
  SysfsView broken(FixtureRoot("roce-broken"));
  auto before = PortCounterReader(healthy, nullptr).Read("mlx5_0", 1, "");
  auto after = PortCounterReader(broken, nullptr).Read("mlx5_0", 1, "");
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(after.ok()) << after.status();
  std::vector<v1::CounterDelta> deltas = DiffCounters(*before, *after);
  ASSERT_EQ(deltas.size(), 50u);
  std::vector<std::string> moved;
  for (const auto& delta : deltas) {
    EXPECT_EQ(delta.note(), "") << delta.name();
    if (delta.delta() > 0) moved.push_back(delta.name() + " +" + std::to_string(delta.delta()));
  }
  EXPECT_EQ(moved, (std::vector<std::string>{"link_downed +3", "symbol_error +57"}));
}

TEST(CounterCategoryTest, ClassifiesTheKnownCounters) {
  for (const char* name : {"symbol_error",
                           "link_downed",
                           "link_error_recovery",
                           "port_rcv_errors",
                           "port_rcv_remote_physical_errors",
                           "local_link_integrity_errors",
                           "excessive_buffer_overrun_errors",
                           "port_xmit_discards",
                           "out_of_sequence",
                           "local_ack_timeout_err",
                           "packet_seq_err",
                           "implied_nak_seq_err",
                           "rcvd_seq_err",
                           "retry_exceeded_err",
                           "duplicate_request",
                           "roce_adp_retrans",
                           "rnr_nak_retry_err",
                           "req_cqe_error",
                           "resp_cqe_error",
                           "out_of_buffer",
                           "rx_discards_phy",
                           "rx_out_of_buffer",
                           "tx_pause_storm_error_events"}) {
    EXPECT_EQ(CounterCategory(name), "error") << name;
  }
  for (const char* name :
       {"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets", "rp_cnp_ignored",
        "port_xmit_wait", "rx_prio3_pause", "tx_pause_ctrl_phy", "rx_prio3_pause_duration"}) {
    EXPECT_EQ(CounterCategory(name), "congestion") << name;
  }
  for (const char* name :
       {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
        "unicast_xmit_packets", "rcvd_pkts", "sent_pkts", "rx_write_requests"}) {
    EXPECT_EQ(CounterCategory(name), "traffic") << name;
  }
  for (const char* name : {"VL15_dropped", "ack_deferred", "req_cqe_flush_error",
                           "resp_cqe_flush_error", "lifespan", "something_new"}) {
    EXPECT_EQ(CounterCategory(name), "other") << name;
  }
}

TEST(CounterCategoryTest, DataCountersCountFourByteWords) {
  EXPECT_TRUE(CountsDataWords("port_xmit_data"));
  EXPECT_TRUE(CountsDataWords("port_rcv_data"));
  EXPECT_FALSE(CountsDataWords("port_xmit_packets"));
  EXPECT_EQ(kBytesPerDataWord, 4u);
  EXPECT_EQ(DataWordsToBytes(2418733902117u), 9674935608468u);
}

}  // namespace
}  // namespace clustercert::agent::peer
