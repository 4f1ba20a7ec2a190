#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clustercert/v1/counters.pb.h"

// What port counters mean between two reads: deltas, their category, and the
// sentences worth telling an engineer. Shared by the agent (which reads the
// counters) and the controller (which diffs the reads around each test).
namespace clustercert::counters {

// counters/port_xmit_data and counters/port_rcv_data count 4-byte words.
inline constexpr uint64_t kBytesPerDataWord = 4;

// True for the counters that count 4-byte words (port_xmit_data, port_rcv_data).
bool CountsDataWords(const std::string& name);

// Words of port_xmit_data / port_rcv_data to bytes.
constexpr uint64_t DataWordsToBytes(uint64_t words) { return words * kBytesPerDataWord; }

// What a counter says about a test: "error" (link flaps, bit errors, loss
// and retransmission, drops), "congestion" (CNPs, ECN marks, pause frames,
// credit waits), "traffic" (data and packet counts, mlx5's per-priority
// rx/tx_prio<N>_bytes and _packets among them) or "other" (counters that
// judge nothing, e.g. VL15_dropped, ack_deferred, flush errors from teardown).
std::string CounterCategory(const std::string& name);

// How a pair cell's verdict treats a counter that rose during its test.
enum class CounterRole {
  kInformational,  // shown (and maybe a concern sentence), never judged
  // A link-level error: any rise fails the cell with severity error, even at
  // line rate. counters/ (and rxe's hw_counters/) symbol_error, link_downed,
  // link_error_recovery, port_rcv_errors, local_link_integrity_errors,
  // excessive_buffer_overrun_errors; mlx5 ethtool link_down_events_phy,
  // rx_symbol_err_phy, rx_pcs_symbol_err_phy, rx_crc_errors_phy; the
  // netdev's sysfs carrier_changes.
  kLinkError,
  // A retransmission or loss that recovery hides: judged per GB moved
  // against pairwise.max_retries_per_gb (a warning). mlx5 hw_counters
  // out_of_sequence, packet_seq_err, local_ack_timeout_err, rnr_nak_retry_err,
  // implied_nak_seq_err, duplicate_request, roce_adp_retrans(_to),
  // roce_slow_restart(_trans); rxe rcvd_seq_err, out_of_seq_request,
  // completer_retry_err, rcvd_rnr_err; ethtool rx_discards_phy.
  kRetry,
};

// `source` is counters | hw_counters | ethtool | sysfs (a CounterValue's source).
CounterRole RoleOf(const std::string& source, const std::string& name);

// A counter that counts packets the port or the NIC dropped. On a lossless
// RoCE fabric any rise means PFC did not hold a sender back (or the buffer
// headroom was too small), so lossless.drops fails the test on it. mlx5
// ethtool (kernel mlx5 counters.rst and en_stats.c): rx_discards_phy and
// tx_discards_phy (the physical port), rx_prio<N>_discards (per priority,
// for lack of port buffer), rx_prio<N>_buf_discard and rx_prio<N>_cong_discard
// (per host buffer and congestion), rx_out_of_buffer and dev_out_of_buffer
// (no receive buffer in the host queue or the device queue),
// outbound_pci_buffer_overflow (no PCIe buffer towards the host); mlx5
// hw_counters out_of_buffer.
bool IsDropCounter(const std::string& source, const std::string& name);

// An mlx5 per-priority ethtool statistic split into its parts:
// "tx_prio3_bytes" -> {"tx", 3, "bytes"}, "rx_prio0_pause_duration" ->
// {"rx", 0, "pause_duration"}. Priorities are 802.1p, 0..7.
struct PriorityCounterName {
  std::string direction;  // rx | tx
  int priority = 0;
  std::string suffix;  // bytes | packets | pause | pause_duration | discards | ...
};
std::optional<PriorityCounterName> ParsePriorityCounter(const std::string& name);

// mlx5's per-lane pre-FEC error counters are rx_err_lane_<N>_phy, N from 0
// (en_stats.c has lanes 0..3); a name with a lane at or above kMaxLanes is
// not one of them, which bounds what a hostile agent can make us keep.
inline constexpr int kMaxLanes = 16;
// "rx_err_lane_2_phy" -> 2; nullopt for any other name.
std::optional<int> ParseLaneErrorCounter(const std::string& name);

// The counter the agent reads from /sys/class/net/<netdev>/carrier_changes
// (source "sysfs"): how often the netdev's carrier went down or came up, so
// one link flap adds 2.
inline constexpr char kCarrierChanges[] = "carrier_changes";
inline constexpr char kSysfsSource[] = "sysfs";

// How every counter moved between two reads of the same port, in `after`'s
// order, then the counters read only before. A counter that went backwards
// (reset or wrap) gets delta 0 and a note; one read on only one side gets
// delta 0 and a note; one pinned at its IB width's maximum (the 16-bit
// symbol_error at 65535) keeps its delta and a note that it saturated.
std::vector<v1::CounterDelta> DiffCounters(const v1::PortCounters& before,
                                           const v1::PortCounters& after);

// Names the port in concern sentences and says which priority carries RDMA.
struct ConcernContext {
  std::string device;     // "mlx5_0"; empty: sentences start with the counter
  uint32_t port = 0;      // 1
  int rdma_priority = 3;  // the RoCE traffic's 802.1p priority; -1 when unknown
};

// Sentences for what the deltas show, each naming the counter, the change and
// the fix, without the node (the caller prefixes it): one per error counter
// that rose ("mlx5_0 port 1: link_downed +2 during the test: the link flapped
// — reseat or replace the cable/transceiver"), a warning when pause frames
// rose on a priority other than the RDMA one, and an informational sentence
// when CNPs or ECN marks rose with no pause frames ("congestion handled by ECN
// only"). Empty when the port stayed clean.
std::vector<std::string> CounterConcerns(const std::vector<v1::CounterDelta>& deltas,
                                         const ConcernContext& context = {});

}  // namespace clustercert::counters
