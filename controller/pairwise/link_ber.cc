#include "controller/pairwise/link_ber.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/counter_deltas.h"

namespace clustercert::controller::pairwise {
namespace {

constexpr char kEthtool[] = "ethtool";
constexpr char kCounters[] = "counters";
// IB's port_rcv_data counts 4-byte words (counter_deltas.h).
constexpr uint64_t kBitsPerDataWord = counters::kBytesPerDataWord * 8;
// A threshold compared at exactly its value must not flip on the last bit.
constexpr double kRelativeSlack = 1e-9;
// More bits than this are not believed from line rate x time (2^62: 146
// years at 1 Tb/s); it keeps the conversion to uint64 defined.
constexpr double kMaxBits = 4.6e18;

// The counters after FEC: what it could not correct. mlx5 counters.rst:
// rx_pcs_symbol_err_phy "symbol errors that wasn't corrected by FEC",
// rx_symbol_err_phy packets dropped for symbol errors, rx_crc_errors_phy FCS
// errors. On InfiniBand HDR/NDR, symbol_error counts the errors left after
// FEC (ibdiagnet's BER section), port_rcv_errors the packets dropped for them.
const std::vector<const char*>& EthernetPostFec() {
  static const auto* names = new std::vector<const char*>{"rx_pcs_symbol_err_phy",
                                                          "rx_symbol_err_phy", "rx_crc_errors_phy"};
  return *names;
}
const std::vector<const char*>& InfinibandPostFec() {
  static const auto* names = new std::vector<const char*>{"symbol_error", "port_rcv_errors"};
  return *names;
}

using Key = std::pair<std::string, std::string>;  // source, name

std::map<Key, uint64_t> ValuesOf(const v1::PortCounters* counters) {
  std::map<Key, uint64_t> values;
  if (counters == nullptr) return values;
  for (const auto& value : counters->values())
    values[{value.source(), value.name()}] = value.value();
  return values;
}

// The two reads of one port: a counter's delta only when both reads have it
// and it did not go backwards (a reset or a wrap says nothing of the traffic).
class Deltas {
 public:
  Deltas(const v1::PortCounters* before, const v1::PortCounters* after)
      : before_(ValuesOf(before)), after_(ValuesOf(after)) {}

  bool AnyRead() const { return !before_.empty() && !after_.empty(); }

  std::optional<uint64_t> Of(const std::string& source, const std::string& name) const {
    auto b = before_.find({source, name});
    auto a = after_.find({source, name});
    if (b == before_.end() || a == after_.end() || a->second < b->second) return std::nullopt;
    return a->second - b->second;
  }

  // The sum of the named counters' deltas; nullopt when none could be read.
  std::optional<uint64_t> Sum(const std::string& source,
                              const std::vector<const char*>& names) const {
    std::optional<uint64_t> sum;
    for (const char* name : names) {
      std::optional<uint64_t> delta = Of(source, name);
      if (!delta) continue;
      const uint64_t so_far = sum.value_or(0);
      sum = *delta > std::numeric_limits<uint64_t>::max() - so_far
                ? std::numeric_limits<uint64_t>::max()
                : so_far + *delta;
    }
    return sum;
  }

  // rx_err_lane_N_phy for lanes 0..the highest read; empty when a lane in
  // between has no usable delta (a gap would read as a clean lane).
  std::vector<uint64_t> Lanes() const {
    int highest = -1;
    for (const auto& [key, value] : after_) {
      if (key.first != kEthtool) continue;
      if (auto lane = counters::ParseLaneErrorCounter(key.second))
        highest = std::max(highest, *lane);
    }
    std::vector<uint64_t> lanes;
    for (int lane = 0; lane <= highest; ++lane) {
      std::optional<uint64_t> delta = Of(kEthtool, absl::StrCat("rx_err_lane_", lane, "_phy"));
      if (!delta) return {};
      lanes.push_back(*delta);
    }
    return lanes;
  }

 private:
  std::map<Key, uint64_t> before_;
  std::map<Key, uint64_t> after_;
};

// Bits the port received, and how they were counted; 0 when unknown.
std::pair<uint64_t, const char*> BitsReceived(const ReceivingPort& port, const Deltas& deltas) {
  if (auto phy = deltas.Of(kEthtool, "rx_bits_phy"); phy && *phy > 0) return {*phy, kBitsFromPhy};
  if (port.infiniband) {
    if (auto words = deltas.Of(kCounters, "port_rcv_data"); words && *words > 0) {
      const uint64_t cap = std::numeric_limits<uint64_t>::max() / kBitsPerDataWord;
      return {std::min(*words, cap) * kBitsPerDataWord, kBitsFromPortRcvData};
    }
  }
  if (!std::isfinite(port.line_rate_gbps) || !std::isfinite(port.seconds) ||
      port.line_rate_gbps <= 0 || port.seconds <= 0) {
    return {0, ""};
  }
  // An absurd product (1e300 s) is capped, not infinite.
  const double bits = std::min(port.line_rate_gbps * 1e9 * port.seconds, kMaxBits);
  if (bits < 1) return {0, ""};
  return {static_cast<uint64_t>(bits), kBitsFromLineRate};
}

std::string CounterList(const std::vector<const char*>& names) {
  return absl::StrJoin(names, ", ");
}

// Why a port has no bound, or "" when it has one.
std::string NoBoundReason(const ReceivingPort& port, const Deltas& deltas, uint64_t bits,
                          const std::optional<uint64_t>& errors) {
  const std::string who = port.netdev.empty() ? port.rail : port.netdev;
  if (!deltas.AnyRead()) {
    return absl::StrCat(who,
                        ": its counters were not read both before and after the traffic, "
                        "so no BER bound");
  }
  const auto& post_fec = port.infiniband ? InfinibandPostFec() : EthernetPostFec();
  if (!errors) {
    return absl::StrCat(who, " has no post-FEC error counters (", CounterList(post_fec),
                        "): the driver keeps none, so no BER bound");
  }
  if (bits == 0) {
    return absl::StrCat(who, " has no PHY bit counters (",
                        port.infiniband ? "port_rcv_data" : "rx_bits_phy",
                        ") and its line rate is unknown: no BER bound");
  }
  return "";
}

// "1.0e12 bits" or "1.0e12 bits from line rate x time".
std::string BitsText(uint64_t bits, const std::string& source) {
  std::string text = absl::StrCat(FormatRate(static_cast<double>(bits)), " bits");
  if (source != kBitsFromPhy) absl::StrAppend(&text, " from ", source);
  return text;
}

void SetBound(v1::LinkBer& ber) {
  const auto bits = static_cast<double>(ber.bits());
  const std::string counted = BitsText(ber.bits(), ber.bits_source());
  if (ber.post_fec_errors() == 0) {
    ber.set_ber_bound(kRuleOfThree / bits);
    ber.set_statement(absl::StrCat("BER < ", FormatRate(ber.ber_bound()), " at 95 % confidence (",
                                   counted, ", no error)"));
  } else {
    ber.set_ber_bound(static_cast<double>(ber.post_fec_errors()) / bits);
    ber.set_statement(absl::StrCat("BER ", FormatRate(ber.ber_bound()), " measured (",
                                   ber.post_fec_errors(), " post-FEC error(s) in ", counted, ")"));
  }
  if (ber.has_raw_ber()) {
    absl::StrAppend(ber.mutable_statement(), "; raw BER ", FormatRate(ber.raw_ber()),
                    " before FEC (", ber.corrected_bits(), " corrected bits)");
  }
}

}  // namespace

std::string FormatRate(double value) {
  if (!std::isfinite(value)) return absl::StrCat(value);
  if (value == 0) return "0";
  int exponent = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  double mantissa = value / std::pow(10.0, exponent);
  // 9.96e-5 rounds to 10.0: carry into the exponent.
  if (std::fabs(std::round(mantissa * 10) / 10) >= 10) {
    ++exponent;
    mantissa /= 10;
  }
  return absl::StrFormat("%.1fe%d", mantissa, exponent);
}

v1::LinkBer MeasureLinkBer(const ReceivingPort& port) {
  v1::LinkBer ber;
  ber.set_node(port.node);
  ber.set_rail(port.rail);
  ber.set_netdev(port.netdev);
  const Deltas deltas(port.before, port.after);
  const auto [bits, source] = BitsReceived(port, deltas);
  ber.set_bits(bits);
  ber.set_bits_source(source);
  if (auto corrected = deltas.Of(kEthtool, "rx_corrected_bits_phy")) {
    ber.set_corrected_bits(*corrected);
    if (bits > 0) ber.set_raw_ber(static_cast<double>(*corrected) / static_cast<double>(bits));
  }
  const std::optional<uint64_t> errors = port.infiniband
                                             ? deltas.Sum(kCounters, InfinibandPostFec())
                                             : deltas.Sum(kEthtool, EthernetPostFec());
  ber.set_post_fec_errors(errors.value_or(0));
  for (uint64_t lane : deltas.Lanes()) ber.add_lane_errors(lane);
  if (std::string why = NoBoundReason(port, deltas, bits, errors); !why.empty()) {
    ber.set_statement(std::move(why));
    return ber;
  }
  SetBound(ber);
  return ber;
}

bool RawBerTooHigh(const v1::LinkBer& ber, double max_raw_ber) {
  return ber.has_raw_ber() && std::isfinite(ber.raw_ber()) &&
         ber.raw_ber() > max_raw_ber * (1 + kRelativeSlack);
}

std::string RawBerSentence(const v1::LinkBer& ber, double max_raw_ber) {
  return absl::StrCat(ber.node(), " ", ber.rail().empty() ? ber.netdev() : ber.rail(),
                      " saw raw BER ", FormatRate(ber.raw_ber()), " > ", FormatRate(max_raw_ber),
                      " under load (", ber.corrected_bits(), " corrected bits in ",
                      BitsText(ber.bits(), ber.bits_source()),
                      "): FEC is hiding a marginal cable/transceiver");
}

std::string RawBerRemedy(const v1::LinkBer& ber) {
  const std::string port = ber.rail().empty() ? ber.netdev() : ber.rail();
  // mlxlink addresses an RDMA device; a plain netdev's module is read by ethtool.
  const bool rdma = !ber.rail().empty() && ber.rail() != ber.netdev();
  return absl::StrCat("Reseat, clean or replace the cable/transceiver of ", ber.node(), " ", port,
                      rdma ? absl::StrCat(" (run mlxlink -d ", port, " -c -m for its cable info)")
                           : absl::StrCat(" (run ethtool -m ", port, " for its module)"),
                      ", then re-run.");
}

}  // namespace clustercert::controller::pairwise
