// A ConnectX-7 RoCE port as a 6.x kernel shows it, read before and after a
// test: every counter the pair verdict judges (counters::RoleOf) must be
// among what PortCounterReader and the ethtool filter actually keep, and the
// diff must classify the rises the verdict acts on.
//
// Shapes: counters/ is the IB PortCounters set the kernel's sysfs.c lists
// for an mlx5 port (as in the roce-healthy fixture); hw_counters/ is
// drivers/infiniband/hw/mlx5/counters.c's basic, out-of-sequence,
// retransmission, extended error (with req_transport_retries_exceeded and
// req_rnr_retries_exceeded, which CX-7 firmware reports), RoCE acceleration,
// congestion and extended PPCNT counters, plus `lifespan`; the ethtool names
// are mlx5e's `ethtool -S` names from the kernel's
// Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst
// in the order mlx5e prints its groups (software, vport, 802.3/2863/2819
// physical, physical statistical, per-priority, PCIe, per-ring).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/peer/ethtool_stats_source.h"
#include "agent/peer/port_counters.h"
#include "common/counter_deltas.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::peer {
namespace {

using ::clustercert::counters::CounterCategory;
using ::clustercert::counters::CounterRole;
using ::clustercert::counters::DiffCounters;
using ::clustercert::counters::RoleOf;
using inventory::testing::TempSysfsTree;
using ::testing::ElementsAreArray;

constexpr char kPort[] = "/sys/class/infiniband/mlx5_0/ports/1";

const std::vector<std::string>& Cx7HwCounters() {
  static const auto* names = new std::vector<std::string>{
      "rx_write_requests",
      "rx_read_requests",
      "rx_atomic_requests",
      "rx_dct_connect",
      "out_of_buffer",
      "out_of_sequence",
      "duplicate_request",
      "rnr_nak_retry_err",
      "packet_seq_err",
      "implied_nak_seq_err",
      "local_ack_timeout_err",
      "resp_local_length_error",
      "resp_cqe_error",
      "req_cqe_error",
      "req_remote_invalid_request",
      "req_remote_access_errors",
      "resp_remote_access_errors",
      "resp_cqe_flush_error",
      "req_cqe_flush_error",
      "req_transport_retries_exceeded",
      "req_rnr_retries_exceeded",
      "roce_adp_retrans",
      "roce_adp_retrans_to",
      "roce_slow_restart",
      "roce_slow_restart_cnps",
      "roce_slow_restart_trans",
      "rp_cnp_ignored",
      "rp_cnp_handled",
      "np_ecn_marked_roce_packets",
      "np_cnp_sent",
      "rx_icrc_encapsulated",
  };
  return *names;
}

const std::vector<std::string>& Cx7EthtoolNames() {
  static const auto* names = new std::vector<std::string>(absl::StrSplit(
      R"(
rx_packets rx_bytes tx_packets tx_bytes tx_tso_packets tx_tso_bytes rx_lro_packets
rx_csum_unnecessary rx_csum_none rx_csum_complete tx_csum_partial tx_queue_stopped
tx_queue_wake tx_queue_dropped tx_cqe_err tx_recover rx_wqe_err rx_buff_alloc_err
rx_recover ch_events ch_poll ch_arm ch_eq_rearm rx_out_of_buffer rx_if_down_packets
rx_steer_missed_packets rx_vport_unicast_packets rx_vport_unicast_bytes
tx_vport_unicast_packets tx_vport_unicast_bytes rx_vport_rdma_unicast_packets
rx_vport_rdma_unicast_bytes tx_vport_rdma_unicast_packets tx_vport_rdma_unicast_bytes
tx_packets_phy rx_packets_phy rx_crc_errors_phy tx_bytes_phy rx_bytes_phy tx_multicast_phy
tx_broadcast_phy rx_multicast_phy rx_broadcast_phy rx_in_range_len_errors_phy
rx_out_of_range_len_phy rx_oversize_pkts_phy rx_symbol_err_phy tx_mac_control_phy
rx_mac_control_phy rx_unsupported_op_phy rx_pause_ctrl_phy tx_pause_ctrl_phy
rx_discards_phy tx_discards_phy tx_errors_phy rx_undersize_pkts_phy rx_fragments_phy
rx_jabbers_phy rx_64_bytes_phy rx_65_to_127_bytes_phy rx_128_to_255_bytes_phy
rx_256_to_511_bytes_phy rx_512_to_1023_bytes_phy rx_1024_to_1518_bytes_phy
rx_1519_to_2047_bytes_phy rx_2048_to_4095_bytes_phy rx_4096_to_8191_bytes_phy
rx_8192_to_10239_bytes_phy link_down_events_phy rx_bits_phy rx_pcs_symbol_err_phy
rx_corrected_bits_phy rx_err_lane_0_phy rx_err_lane_1_phy rx_err_lane_2_phy
rx_err_lane_3_phy rx_buffer_passed_thres_phy rx_prio0_bytes rx_prio0_packets
rx_prio0_discards tx_prio0_bytes tx_prio0_packets rx_prio3_bytes rx_prio3_packets
rx_prio3_discards tx_prio3_bytes tx_prio3_packets rx_prio3_pause rx_prio3_pause_duration
tx_prio3_pause tx_prio3_pause_duration rx_prio3_pause_transition
tx_pause_storm_warning_events tx_pause_storm_error_events module_unplug module_bus_stuck
module_high_temp module_bad_shorted rx_pci_signal_integrity tx_pci_signal_integrity
outbound_pci_buffer_overflow outbound_pci_stalled_rd outbound_pci_stalled_wr
outbound_pci_stalled_rd_events outbound_pci_stalled_wr_events rx0_packets rx0_bytes
rx0_wqe_err rx0_buff_alloc_err tx0_packets tx0_bytes tx0_cqe_err tx0_recover
)",
      absl::ByAnyChar(" \n"), absl::SkipEmpty()));
  return *names;
}

// The ethtool source as the live one filters: only the kept names of a full
// CX-7 list, with the values a test sets.
class Cx7Ethtool : public EthtoolStatsSource {
 public:
  absl::StatusOr<std::map<std::string, uint64_t>> Read(const std::string&) override {
    std::map<std::string, uint64_t> kept;
    for (const std::string& name : Cx7EthtoolNames()) {
      if (!IsKeptEthtoolStat(name)) continue;
      auto it = values.find(name);
      kept[name] = it == values.end() ? 0 : it->second;
    }
    return kept;
  }
  std::map<std::string, uint64_t> values;
};

// roce-healthy's mlx5_0 with its hw_counters/ replaced by a CX-7's.
class Cx7Port {
 public:
  Cx7Port() : tree_("roce-healthy") {
    const std::filesystem::path hw = tree_.root() / "sys/devices/pci0000:40/0000:40:01.1" /
                                     "0000:41:00.0/infiniband/mlx5_0/ports/1/hw_counters";
    std::filesystem::remove_all(hw);
    std::filesystem::create_directories(hw);
    Set("hw_counters", "lifespan", 12);
    for (const std::string& name : Cx7HwCounters()) Set("hw_counters", name, 0);
  }

  void Set(const std::string& dir, const std::string& name, uint64_t value) {
    tree_.Write(absl::StrCat(kPort, "/", dir, "/", name), absl::StrCat(value, "\n"));
  }

  v1::PortCounters Read(Cx7Ethtool& ethtool) const {
    SysfsView view(tree_.root());
    absl::StatusOr<v1::PortCounters> read = PortCounterReader(view, &ethtool, [] {
                                              return absl::FromUnixSeconds(1700000000);
                                            }).Read("mlx5_0", 1, "enp65s0f0np0");
    EXPECT_TRUE(read.ok()) << read.status();
    return read.value_or(v1::PortCounters());
  }

 private:
  TempSysfsTree tree_;
};

std::optional<v1::CounterDelta> Find(const std::vector<v1::CounterDelta>& deltas,
                                     const std::string& source, const std::string& name) {
  for (const auto& delta : deltas) {
    if (delta.source() == source && delta.name() == name) return delta;
  }
  return std::nullopt;
}

TEST(ConnectX7CountersTest, EveryJudgedCounterIsReadFromSysfsOrEthtool) {
  Cx7Port port;
  Cx7Ethtool ethtool;
  v1::PortCounters read = port.Read(ethtool);
  EXPECT_EQ(read.unknowns_size(), 0) << read.DebugString();
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& value : read.values()) seen.insert({value.source(), value.name()});
  EXPECT_EQ(seen.count({"hw_counters", "lifespan"}), 0u);
  // 33 ethtool statistics (the four per-lane pre-FEC error counters among
  // them), + 1: the netdev's sysfs carrier_changes.
  EXPECT_EQ(seen.size(), 21 + Cx7HwCounters().size() + 33 + 1) << read.DebugString();
  EXPECT_EQ(seen.count({"sysfs", "carrier_changes"}), 1u);
  EXPECT_EQ(RoleOf("sysfs", "carrier_changes"), CounterRole::kLinkError);

  for (const char* name : {"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
                           "local_link_integrity_errors", "excessive_buffer_overrun_errors"}) {
    EXPECT_EQ(seen.count({"counters", name}), 1u) << name;
    EXPECT_EQ(RoleOf("counters", name), CounterRole::kLinkError) << name;
  }
  for (const char* name : {"link_down_events_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy",
                           "rx_crc_errors_phy"}) {
    EXPECT_EQ(seen.count({"ethtool", name}), 1u) << name;
    EXPECT_EQ(RoleOf("ethtool", name), CounterRole::kLinkError) << name;
  }
  for (const char* name :
       {"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
        "implied_nak_seq_err", "duplicate_request", "roce_adp_retrans", "roce_adp_retrans_to",
        "roce_slow_restart", "roce_slow_restart_trans"}) {
    EXPECT_EQ(seen.count({"hw_counters", name}), 1u) << name;
    EXPECT_EQ(RoleOf("hw_counters", name), CounterRole::kRetry) << name;
  }
  EXPECT_EQ(seen.count({"ethtool", "rx_discards_phy"}), 1u);
  EXPECT_EQ(RoleOf("ethtool", "rx_discards_phy"), CounterRole::kRetry);
  // Every role the verdict acts on is backed by a counter this port has.
  for (const auto& [source, name] : seen) {
    if (RoleOf(source, name) == CounterRole::kInformational) continue;
    EXPECT_NE(CounterCategory(name), "traffic") << source << "/" << name;
    EXPECT_NE(CounterCategory(name), "other") << source << "/" << name;
  }
}

TEST(ConnectX7CountersTest, TheEthtoolFilterKeepsLossPauseLinkHealthAndPriorityTraffic) {
  std::vector<std::string> kept;
  for (const std::string& name : Cx7EthtoolNames()) {
    if (IsKeptEthtoolStat(name)) kept.push_back(name);
  }
  EXPECT_THAT(kept, ElementsAreArray(std::vector<std::string>{
                        "rx_out_of_buffer",
                        "rx_crc_errors_phy",
                        "rx_symbol_err_phy",
                        "rx_pause_ctrl_phy",
                        "tx_pause_ctrl_phy",
                        "rx_discards_phy",
                        "tx_discards_phy",
                        "link_down_events_phy",
                        "rx_bits_phy",
                        "rx_pcs_symbol_err_phy",
                        "rx_corrected_bits_phy",
                        "rx_err_lane_0_phy",
                        "rx_err_lane_1_phy",
                        "rx_err_lane_2_phy",
                        "rx_err_lane_3_phy",
                        "rx_prio0_bytes",
                        "rx_prio0_packets",
                        "rx_prio0_discards",
                        "tx_prio0_bytes",
                        "tx_prio0_packets",
                        "rx_prio3_bytes",
                        "rx_prio3_packets",
                        "rx_prio3_discards",
                        "tx_prio3_bytes",
                        "tx_prio3_packets",
                        "rx_prio3_pause",
                        "rx_prio3_pause_duration",
                        "tx_prio3_pause",
                        "tx_prio3_pause_duration",
                        "rx_prio3_pause_transition",
                        "tx_pause_storm_warning_events",
                        "tx_pause_storm_error_events",
                        "outbound_pci_buffer_overflow",
                    }));
}

TEST(ConnectX7CountersTest, AFlapAndRetriesDuringATestAreDeltasTheVerdictJudges) {
  Cx7Port port;
  Cx7Ethtool ethtool;
  port.Set("counters", "link_downed", 2);
  port.Set("hw_counters", "out_of_sequence", 4294967000);  // a 32-bit q counter near its wrap
  port.Set("hw_counters", "packet_seq_err", 10);
  ethtool.values = {{"rx_corrected_bits_phy", 1000}, {"rx_bits_phy", 1000000}};
  const v1::PortCounters before = port.Read(ethtool);

  port.Set("counters", "link_downed", 3);
  port.Set("counters", "symbol_error", 3);
  port.Set("hw_counters", "out_of_sequence", 12);  // wrapped
  port.Set("hw_counters", "packet_seq_err", 510);
  port.Set("hw_counters", "np_cnp_sent", 44);
  ethtool.values = {{"rx_corrected_bits_phy", 99000},
                    {"rx_bits_phy", 900000000},
                    {"link_down_events_phy", 1},
                    {"rx_prio3_pause", 77}};
  const std::vector<v1::CounterDelta> deltas = DiffCounters(before, port.Read(ethtool));

  auto link = Find(deltas, "counters", "link_downed");
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(link->delta(), 1u);
  EXPECT_EQ(link->category(), "error");
  auto symbols = Find(deltas, "counters", "symbol_error");
  ASSERT_TRUE(symbols.has_value());
  EXPECT_EQ(symbols->delta(), 3u);
  auto phy_flap = Find(deltas, "ethtool", "link_down_events_phy");
  ASSERT_TRUE(phy_flap.has_value());
  EXPECT_EQ(phy_flap->delta(), 1u);
  EXPECT_EQ(phy_flap->category(), "error");
  auto wrapped = Find(deltas, "hw_counters", "out_of_sequence");
  ASSERT_TRUE(wrapped.has_value());
  EXPECT_EQ(wrapped->delta(), 0u);
  EXPECT_EQ(wrapped->note(),
            "went backwards from 4294967000 to 12 (counter reset or wrap): no delta");
  auto retries = Find(deltas, "hw_counters", "packet_seq_err");
  ASSERT_TRUE(retries.has_value());
  EXPECT_EQ(retries->delta(), 500u);
  EXPECT_EQ(RoleOf(retries->source(), retries->name()), CounterRole::kRetry);
  auto corrected = Find(deltas, "ethtool", "rx_corrected_bits_phy");
  ASSERT_TRUE(corrected.has_value());
  EXPECT_EQ(corrected->delta(), 98000u);
  EXPECT_EQ(corrected->category(), "other");  // FEC corrected it: nothing lost
  EXPECT_EQ(RoleOf("ethtool", "rx_corrected_bits_phy"), CounterRole::kInformational);
  auto pause = Find(deltas, "ethtool", "rx_prio3_pause");
  ASSERT_TRUE(pause.has_value());
  EXPECT_EQ(pause->category(), "congestion");
}

TEST(ConnectX7CountersTest, RolesDependOnTheSource) {
  // rxe keeps link_downed in hw_counters; a same-named ethtool statistic
  // from another driver is not assumed to mean the same.
  EXPECT_EQ(RoleOf("hw_counters", "link_downed"), CounterRole::kLinkError);
  EXPECT_EQ(RoleOf("ethtool", "link_downed"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("ethtool", "out_of_sequence"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("counters", "out_of_sequence"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("hw_counters", "rx_symbol_err_phy"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("", "link_downed"), CounterRole::kInformational);
  EXPECT_EQ(RoleOf("garbage", "symbol_error"), CounterRole::kInformational);
  // rxe's own names.
  for (const char* name :
       {"rcvd_seq_err", "out_of_seq_request", "completer_retry_err", "rcvd_rnr_err"}) {
    EXPECT_EQ(RoleOf("hw_counters", name), CounterRole::kRetry) << name;
  }
  // Informational on purpose (see counter_deltas.cc for why each is not judged).
  for (const auto& [source, name] : std::vector<std::pair<std::string, std::string>>{
           {"counters", "port_rcv_remote_physical_errors"},
           {"counters", "port_xmit_discards"},
           {"counters", "port_xmit_wait"},
           {"hw_counters", "out_of_buffer"},
           {"hw_counters", "req_transport_retries_exceeded"},
           {"hw_counters", "retry_exceeded_err"},
           {"hw_counters", "np_cnp_sent"},
           {"ethtool", "rx_out_of_buffer"},
           {"ethtool", "rx_err_lane_0_phy"},
           {"ethtool", "tx_discards_phy"},
           {"ethtool", "rx_prio3_pause"}}) {
    EXPECT_EQ(RoleOf(source, name), CounterRole::kInformational) << source << "/" << name;
  }
}

TEST(ConnectX7CountersTest, NewErrorNamesHaveCategoriesAndSentences) {
  for (const char* name :
       {"link_down_events_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy", "rx_crc_errors_phy",
        "req_transport_retries_exceeded", "req_rnr_retries_exceeded"}) {
    EXPECT_EQ(CounterCategory(name), "error") << name;
  }
  for (const char* name : {"rx_corrected_bits_phy", "rx_bits_phy", "rx_err_lane_0_phy"}) {
    EXPECT_EQ(CounterCategory(name), "other") << name;
  }
  v1::CounterDelta flap;
  flap.set_source("ethtool");
  flap.set_name("link_down_events_phy");
  flap.set_delta(1);
  flap.set_category(CounterCategory(flap.name()));
  EXPECT_THAT(counters::CounterConcerns({flap}, {"mlx5_0", 1, 3}),
              ElementsAreArray(std::vector<std::string>{
                  "mlx5_0 port 1: link_down_events_phy +1 during the test: the link flapped — "
                  "reseat or replace the cable/transceiver"}));
}

}  // namespace
}  // namespace clustercert::agent::peer
