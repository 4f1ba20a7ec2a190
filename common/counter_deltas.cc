#include "common/counter_deltas.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace clustercert::counters {
namespace {

constexpr char kCounters[] = "counters";

// Error counters: IB PortCounters (counters/), mlx5 and rxe hw_counters.
const std::set<std::string>& ErrorCounters() {
  static const auto* names = new std::set<std::string>{
      // counters/
      "symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
      "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
      "port_rcv_constraint_errors", "port_xmit_constraint_errors", "local_link_integrity_errors",
      "excessive_buffer_overrun_errors", "port_xmit_discards",
      // mlx5 hw_counters
      "out_of_sequence", "out_of_buffer", "local_ack_timeout_err", "packet_seq_err",
      "implied_nak_seq_err", "duplicate_request", "rnr_nak_retry_err", "roce_adp_retrans",
      "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_trans", "req_cqe_error",
      "resp_cqe_error", "req_remote_invalid_request", "req_remote_access_errors",
      "resp_remote_access_errors", "resp_local_length_error", "rx_icrc_encapsulated",
      "req_transport_retries_exceeded", "req_rnr_retries_exceeded",
      // rxe hw_counters
      "rcvd_seq_err", "out_of_seq_request", "retry_exceeded_err", "retry_rnr_exceeded_err",
      "completer_retry_err", "send_err", "rcvd_rnr_err", "send_rnr_err",
      // mlx5 ethtool physical port counters (kernel mlx5 counters.rst)
      "link_down_events_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy", "rx_crc_errors_phy",
      // mlx5 ethtool: packets dropped for lack of PCIe buffer towards the host
      "outbound_pci_buffer_overflow",
      // the netdev's carrier went down or came up (sysfs)
      "carrier_changes"};
  return *names;
}

// Link-level errors by their sysfs name (counters/, and hw_counters/ where
// rxe keeps link_downed) and by their mlx5 ethtool name. Each means the
// wire or the transceiver corrupted or lost data, which no retransmission
// makes acceptable. Left out on purpose: port_rcv_remote_physical_errors
// and port_rcv_switch_relay_errors (a fault on another link or in a switch,
// not this port's cable), port_xmit_discards (a consequence of a link down
// or a stall, counted by the link counters themselves), rx_corrected_bits_phy
// and rx_err_lane_N_phy (errors FEC corrected: no data lost).
const std::set<std::string>& SysfsLinkErrors() {
  static const auto* names = new std::set<std::string>{"symbol_error",
                                                       "link_downed",
                                                       "link_error_recovery",
                                                       "port_rcv_errors",
                                                       "local_link_integrity_errors",
                                                       "excessive_buffer_overrun_errors"};
  return *names;
}

const std::set<std::string>& EthtoolLinkErrors() {
  static const auto* names = new std::set<std::string>{
      "link_down_events_phy",   // = link_downed
      "rx_symbol_err_phy",      // packets dropped for symbol errors (= symbol_error)
      "rx_pcs_symbol_err_phy",  // symbol errors FEC did not correct
      "rx_crc_errors_phy"};     // FCS errors (= port_rcv_errors)
  return *names;
}

// Retransmissions and the losses that cause them. Recovery hides them from
// the bandwidth figure until they are many, so they are judged per GB.
// Left out: the "retries exceeded" counters (retry_exceeded_err,
// req_transport_retries_exceeded, ...) end the QP, so the test itself fails;
// out_of_buffer and rx_out_of_buffer count receive queues without posted
// buffers (the host fell behind), not the fabric.
const std::set<std::string>& HwRetryCounters() {
  static const auto* names = new std::set<std::string>{
      // mlx5 (drivers/infiniband/hw/mlx5/counters.c)
      "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
      "implied_nak_seq_err", "duplicate_request", "roce_adp_retrans", "roce_adp_retrans_to",
      "roce_slow_restart", "roce_slow_restart_trans",
      // rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c)
      "rcvd_seq_err", "out_of_seq_request", "completer_retry_err", "rcvd_rnr_err"};
  return *names;
}

// mlx5's ethtool has no out-of-sequence counter (that lives in hw_counters);
// rx_discards_phy counts packets the port dropped for lack of buffer, which
// on a lossless RoCE priority means PFC did not hold the sender back, and
// each drop costs a go-back-N retransmission.
const std::set<std::string>& EthtoolRetryCounters() {
  static const auto* names = new std::set<std::string>{"rx_discards_phy"};
  return *names;
}

const std::set<std::string>& CongestionCounters() {
  static const auto* names = new std::set<std::string>{
      "np_cnp_sent",    "rp_cnp_handled",         "np_ecn_marked_roce_packets",
      "rp_cnp_ignored", "roce_slow_restart_cnps", "port_xmit_wait"};
  return *names;
}

const std::set<std::string>& TrafficCounters() {
  static const auto* names = new std::set<std::string>{
      "port_xmit_data",     "port_rcv_data", "rcvd_pkts",         "sent_pkts",
      "rdma_sends",         "rdma_recvs",    "rx_write_requests", "rx_read_requests",
      "rx_atomic_requests", "rx_dct_connect"};
  return *names;
}

// counters/ files backed by narrow IB PortCounters fields, which stop at
// their maximum instead of wrapping (IBA 16.1.3.5).
std::optional<uint64_t> SaturationValue(const std::string& source, const std::string& name) {
  if (source != kCounters) return std::nullopt;
  static const auto* widths =
      new std::map<std::string, int>{{"symbol_error", 16},
                                     {"link_error_recovery", 8},
                                     {"link_downed", 8},
                                     {"port_rcv_errors", 16},
                                     {"port_rcv_remote_physical_errors", 16},
                                     {"port_rcv_switch_relay_errors", 16},
                                     {"port_xmit_discards", 16},
                                     {"port_xmit_constraint_errors", 8},
                                     {"port_rcv_constraint_errors", 8},
                                     {"local_link_integrity_errors", 4},
                                     {"excessive_buffer_overrun_errors", 4},
                                     {"VL15_dropped", 16}};
  auto it = widths->find(name);
  if (it == widths->end()) return std::nullopt;
  return (uint64_t{1} << it->second) - 1;
}

// Pause frame counters the ethtool source reports, by priority (-1 = link-
// level 802.3x pause): mlx5 names rx_prioN_pause / tx_prioN_pause and
// rx_pause_ctrl_phy / tx_pause_ctrl_phy. Durations and transitions are not
// frame counts and are left out.
std::optional<int> PauseFramePriority(const std::string& name) {
  if (name == "rx_pause_ctrl_phy" || name == "tx_pause_ctrl_phy") return -1;
  for (const char* direction : {"rx_prio", "tx_prio"}) {
    if (name.size() == 14 && absl::StartsWith(name, direction) && absl::EndsWith(name, "_pause") &&
        name[7] >= '0' && name[7] <= '7') {
      return name[7] - '0';
    }
  }
  return std::nullopt;
}

// What an error counter rising means and what to do about it.
std::string ErrorMeaning(const std::string& name) {
  static const auto* meanings = new std::map<std::string, std::string>{
      {"link_downed", "the link flapped — reseat or replace the cable/transceiver"},
      {"link_error_recovery",
       "the link retrained — reseat or replace the cable/transceiver and check the switch port"},
      {"symbol_error",
       "bit errors on the wire — clean or replace the cable/transceiver, check the switch port"},
      {"port_rcv_errors",
       "packets arrived corrupted — check the cable/transceiver and the sending switch port"},
      {"port_rcv_remote_physical_errors",
       "packets arrived already marked bad by an upstream link — check the links between here "
       "and the sender"},
      {"local_link_integrity_errors",
       "the link's physical error rate crossed its threshold — replace the cable/transceiver"},
      {"excessive_buffer_overrun_errors",
       "the receive buffer overran: flow control is not holding the sender back — check PFC "
       "(RoCE) or credits (IB) on this link"},
      {"port_xmit_discards",
       "the port dropped outgoing packets (link down or stalled) — check the link and the "
       "switch port"},
      {"out_of_buffer",
       "packets were dropped for lack of posted receive buffers — the receiver fell behind"},
      {"local_ack_timeout_err",
       "ACKs timed out and requests were retransmitted — packets are lost on the path; on RoCE "
       "check PFC on the RDMA priority end to end"},
      {"roce_adp_retrans",
       "adaptive retransmission fired — packets are lost on the path; check PFC on the RDMA "
       "priority end to end"},
      {"roce_adp_retrans_to", "retransmissions timed out — packets are lost on the path"},
      {"retry_exceeded_err",
       "a QP gave up after its retry limit — the path loses packets or the peer vanished"},
      {"duplicate_request",
       "the responder saw retransmitted requests — packets or ACKs are lost on the path"},
      {"link_down_events_phy", "the link flapped — reseat or replace the cable/transceiver"},
      {"carrier_changes",
       "the netdev lost its carrier (each flap counts 2) — check the cable and the switch "
       "port's log"},
      {"rx_symbol_err_phy",
       "packets were dropped for symbol errors — clean or replace the cable/transceiver, check "
       "the switch port"},
      {"rx_pcs_symbol_err_phy",
       "symbol errors FEC could not correct: the link's bit error rate is too high — replace "
       "the cable/transceiver"},
      {"rx_crc_errors_phy",
       "frames arrived with bad FCS — check the cable/transceiver and the sending switch port"},
      {"outbound_pci_buffer_overflow",
       "the NIC dropped received packets for lack of PCIe buffer towards the host — check the "
       "NIC's PCIe link (gen/width) and its NUMA placement"},
      {"req_transport_retries_exceeded",
       "a QP gave up after its transport retry limit — the path loses packets or the peer "
       "vanished"},
  };
  auto it = meanings->find(name);
  if (it != meanings->end()) return it->second;
  if (absl::StrContains(name, "seq")) {
    return "packets arrived out of sequence (lost or reordered) — on RoCE check PFC on the RDMA "
           "priority end to end; on IB check the links of the path";
  }
  if (absl::StrContains(name, "rnr")) {
    return "receiver-not-ready: a receive queue had no posted buffer — the receiving side fell "
           "behind";
  }
  if (absl::StrContains(name, "pause_storm")) {
    return "a pause storm: a stuck receiver kept pausing the link — check the host and the NIC";
  }
  if (absl::StrContains(name, "discard") || absl::StrContains(name, "out_of_buffer")) {
    return "the NIC dropped packets for lack of buffer — lossless RoCE needs PFC on the RDMA "
           "priority";
  }
  if (absl::StrContains(name, "cqe") || absl::StrContains(name, "err")) {
    return "work requests completed with errors — see the test's completion status";
  }
  return "an error counter rose — investigate the port";
}

std::string Prefix(const ConcernContext& context) {
  if (context.device.empty()) return "";
  return absl::StrCat(context.device, " port ", context.port, ": ");
}

}  // namespace

bool CountsDataWords(const std::string& name) {
  return name == "port_xmit_data" || name == "port_rcv_data";
}

std::string CounterCategory(const std::string& name) {
  if (ErrorCounters().count(name) > 0 || absl::StrContains(name, "discard") ||
      absl::StrContains(name, "pause_storm") || absl::StrContains(name, "out_of_buffer")) {
    return "error";
  }
  if (CongestionCounters().count(name) > 0 || absl::StrContains(name, "pause")) {
    return "congestion";
  }
  if (TrafficCounters().count(name) > 0 || absl::StrContains(name, "packets")) return "traffic";
  if (auto parsed = ParsePriorityCounter(name); parsed.has_value() && parsed->suffix == "bytes") {
    return "traffic";
  }
  return "other";
}

bool IsDropCounter(const std::string& source, const std::string& name) {
  if (source == "hw_counters") return name == "out_of_buffer";
  if (source != "ethtool") return false;
  static const auto* port_drops =
      new std::set<std::string>{"rx_discards_phy", "tx_discards_phy", "rx_out_of_buffer",
                                "dev_out_of_buffer", "outbound_pci_buffer_overflow"};
  if (port_drops->count(name) > 0) return true;
  auto parsed = ParsePriorityCounter(name);
  return parsed.has_value() && parsed->direction == "rx" &&
         (parsed->suffix == "discards" || parsed->suffix == "buf_discard" ||
          parsed->suffix == "cong_discard");
}

std::optional<PriorityCounterName> ParsePriorityCounter(const std::string& name) {
  // "rx_prio" or "tx_prio", one digit 0..7, '_', a non-empty suffix.
  constexpr size_t kDigit = 7;
  if (name.size() < kDigit + 3 || name[kDigit + 1] != '_') return std::nullopt;
  if (!absl::StartsWith(name, "rx_prio") && !absl::StartsWith(name, "tx_prio")) return std::nullopt;
  if (name[kDigit] < '0' || name[kDigit] > '7') return std::nullopt;
  PriorityCounterName parsed;
  parsed.direction = name.substr(0, 2);
  parsed.priority = name[kDigit] - '0';
  parsed.suffix = name.substr(kDigit + 2);
  return parsed;
}

std::optional<int> ParseLaneErrorCounter(const std::string& name) {
  constexpr absl::string_view kPrefix = "rx_err_lane_";
  constexpr absl::string_view kSuffix = "_phy";
  if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, kSuffix)) return std::nullopt;
  const absl::string_view digits =
      absl::string_view(name).substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  // One or two digits, no leading zero: "rx_err_lane_01_phy" is not mlx5's.
  if (digits.empty() || digits.size() > 2 || (digits.size() == 2 && digits[0] == '0')) {
    return std::nullopt;
  }
  int lane = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    lane = lane * 10 + (c - '0');
  }
  if (lane >= kMaxLanes) return std::nullopt;
  return lane;
}

CounterRole RoleOf(const std::string& source, const std::string& name) {
  if (source == kSysfsSource) {
    return name == kCarrierChanges ? CounterRole::kLinkError : CounterRole::kInformational;
  }
  if (source == "ethtool") {
    if (EthtoolLinkErrors().count(name) > 0) return CounterRole::kLinkError;
    if (EthtoolRetryCounters().count(name) > 0) return CounterRole::kRetry;
    return CounterRole::kInformational;
  }
  if (source != kCounters && source != "hw_counters") return CounterRole::kInformational;
  if (SysfsLinkErrors().count(name) > 0) return CounterRole::kLinkError;
  if (source == "hw_counters" && HwRetryCounters().count(name) > 0) return CounterRole::kRetry;
  return CounterRole::kInformational;
}

std::vector<v1::CounterDelta> DiffCounters(const v1::PortCounters& before,
                                           const v1::PortCounters& after) {
  std::map<std::pair<std::string, std::string>, uint64_t> before_values;
  for (const auto& value : before.values()) {
    before_values[{value.source(), value.name()}] = value.value();
  }
  std::vector<v1::CounterDelta> deltas;
  auto add = [&](const v1::CounterValue& value) -> v1::CounterDelta& {
    auto& delta = deltas.emplace_back();
    delta.set_name(value.name());
    delta.set_source(value.source());
    delta.set_category(CounterCategory(value.name()));
    return delta;
  };
  for (const auto& value : after.values()) {
    auto& delta = add(value);
    delta.set_after(value.value());
    auto it = before_values.find({value.source(), value.name()});
    if (it == before_values.end()) {
      delta.set_note("not read before the test: no delta");
      continue;
    }
    const uint64_t old_value = it->second;
    before_values.erase(it);
    delta.set_before(old_value);
    if (value.value() < old_value) {
      delta.set_note(absl::StrCat("went backwards from ", old_value, " to ", value.value(),
                                  " (counter reset or wrap): no delta"));
      continue;
    }
    delta.set_delta(value.value() - old_value);
    auto saturation = SaturationValue(value.source(), value.name());
    if (saturation.has_value() && value.value() >= *saturation) {
      delta.set_note(absl::StrCat("saturated at ", *saturation,
                                  ": the true change is unknown; clear the port counters "
                                  "(perfquery -x -R) and rerun"));
    }
  }
  for (const auto& value : before.values()) {
    if (before_values.count({value.source(), value.name()}) == 0) continue;
    auto& delta = add(value);
    delta.set_before(value.value());
    delta.set_note("not read after the test: no delta");
  }
  return deltas;
}

std::vector<std::string> CounterConcerns(const std::vector<v1::CounterDelta>& deltas,
                                         const ConcernContext& context) {
  const std::string prefix = Prefix(context);
  std::vector<std::string> concerns;
  std::vector<std::string> ecn_signs;
  std::map<int, std::vector<std::string>> pause_by_priority;  // priority -> "name +N"
  bool pause_read = false;
  for (const auto& delta : deltas) {
    const std::string change = absl::StrCat(delta.name(), " +", delta.delta());
    if (delta.category() == "error") {
      if (delta.delta() > 0) {
        concerns.push_back(
            absl::StrCat(prefix, change, " during the test: ", ErrorMeaning(delta.name())));
      } else if (absl::StartsWith(delta.note(), "saturated")) {
        concerns.push_back(absl::StrCat(prefix, delta.name(), " is ", delta.note()));
      }
      continue;
    }
    if (delta.name() == "np_cnp_sent" || delta.name() == "rp_cnp_handled" ||
        delta.name() == "np_ecn_marked_roce_packets") {
      if (delta.delta() > 0) ecn_signs.push_back(change);
      continue;
    }
    if (auto priority = PauseFramePriority(delta.name()); priority.has_value()) {
      if (!absl::StartsWith(delta.note(), "not read")) pause_read = true;
      if (delta.delta() > 0) pause_by_priority[*priority].push_back(change);
    }
  }
  if (context.rdma_priority >= 0) {
    for (const auto& [priority, changes] : pause_by_priority) {
      if (priority == context.rdma_priority) continue;
      const std::string where = priority < 0 ? std::string("link-level (802.3x global) pause")
                                             : absl::StrCat("pause on priority ", priority);
      concerns.push_back(
          absl::StrCat(prefix, "warning: ", where, " frames rose during the test (",
                       absl::StrJoin(changes, ", "), ") while RDMA traffic uses priority ",
                       context.rdma_priority,
                       ": flow control acts on the wrong traffic — enable PFC on priority ",
                       context.rdma_priority, " only, on the NIC and the switch port"));
    }
  }
  if (!ecn_signs.empty() && pause_by_priority.empty()) {
    const std::string signs = absl::StrJoin(ecn_signs, ", ");
    if (pause_read) {
      concerns.push_back(absl::StrCat(
          prefix, "congestion handled by ECN only (", signs,
          ", no pause frames): informational — ECN slowed the senders and PFC never engaged"));
    } else {
      concerns.push_back(absl::StrCat(
          prefix, "congestion seen (", signs,
          ") but the pause frame counters were not read: informational — whether PFC engaged "
          "is unknown"));
    }
  }
  return concerns;
}

}  // namespace clustercert::counters
