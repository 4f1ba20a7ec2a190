#pragma once

#include <cstdint>
#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/counters.pb.h"

// What one receiving port's counters prove about its bit error rate over one
// stretch of traffic (a pairwise cell), and the rule of three that
// turns "no error in N bits" into a bound. Pure arithmetic over two counter
// reads, so `controller verify` and the tests need no agent.
namespace clustercert::controller::pairwise {

// -ln(0.05): with zero errors in N bits, BER < this / N at 95 % confidence
// (one-sided; the rule of three, ~3/N).
inline constexpr double kRuleOfThree = 2.995732273553991;

// How the bits a port received were counted (LinkBer.bits_source).
inline constexpr char kBitsFromPhy[] = "rx_bits_phy";
inline constexpr char kBitsFromLineRate[] = "line rate x time";
inline constexpr char kBitsFromPortRcvData[] = "port_rcv_data";

// One receiving end of a stretch of traffic.
struct ReceivingPort {
  std::string node;
  std::string rail;    // the RDMA device; the data netdev on fabric.type ethernet
  std::string netdev;  // may be empty on InfiniBand
  bool infiniband = false;
  const v1::PortCounters* before = nullptr;
  const v1::PortCounters* after = nullptr;
  double line_rate_gbps = 0;  // 0: unknown
  double seconds = 0;         // how long the traffic ran (the cell's measured time)
};

// The port's LinkBer:
//   bits: Δrx_bits_phy (mlx5 ethtool); on InfiniBand Δport_rcv_data x 32
//     (it counts 4-byte words); else line rate x seconds when both are known.
//   corrected_bits / raw_ber: Δrx_corrected_bits_phy, and it over bits.
//   post_fec_errors: Ethernet Δ(rx_pcs_symbol_err_phy + rx_symbol_err_phy +
//     rx_crc_errors_phy); InfiniBand Δ(symbol_error + port_rcv_errors).
//   lane_errors: Δrx_err_lane_N_phy, lane 0 first, up to the highest lane read.
//   ber_bound and statement: with no post-FEC error, kRuleOfThree / bits
//     ("BER < 3.0e-12 at 95 % confidence (1.0e12 bits, no error)"); with
//     errors, errors / bits. No bound (0) when the bits or the error counters
//     are unknown: the statement says why, naming the port and the counter.
// A counter whose delta is unusable (read on one side only, went backwards)
// counts as not read, never as zero.
v1::LinkBer MeasureLinkBer(const ReceivingPort& port);

// "3.0e-12": two significant digits, always an exponent.
std::string FormatRate(double value);

// A LinkBer whose raw (pre-FEC) BER is over `max_raw_ber`: true when its
// raw_ber is known and above it.
bool RawBerTooHigh(const v1::LinkBer& ber, double max_raw_ber);

// "node3 mlx5_1 saw raw BER 3.1e-05 > 1.0e-06 under load: ..." and the
// remedy, for a LinkBer RawBerTooHigh judged.
std::string RawBerSentence(const v1::LinkBer& ber, double max_raw_ber);
std::string RawBerRemedy(const v1::LinkBer& ber);

}  // namespace clustercert::controller::pairwise
