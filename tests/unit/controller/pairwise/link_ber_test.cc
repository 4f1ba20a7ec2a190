// The BER arithmetic of one receiving port over a cell (link_ber.h): bits
// from rx_bits_phy, port_rcv_data or line rate x time, the raw BER from the
// corrected bits, post-FEC errors, lanes, and the rule-of-three bound; and
// the raw BER verdict WithCounterVerdict folds into a cell.
#include "controller/pairwise/link_ber.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "controller/pairwise/pair_verdict.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::testing::HasSubstr;

// A fake counter source: one read of a port, value by value.
class FakeRead {
 public:
  FakeRead& Set(const std::string& source, const std::string& name, uint64_t value) {
    auto* entry = counters_.add_values();
    entry->set_source(source);
    entry->set_name(name);
    entry->set_value(value);
    return *this;
  }
  FakeRead& Ethtool(const std::string& name, uint64_t value) { return Set("ethtool", name, value); }
  FakeRead& Sysfs(const std::string& name, uint64_t value) { return Set("counters", name, value); }
  const v1::PortCounters& counters() const { return counters_; }

 private:
  v1::PortCounters counters_;
};

// An mlx5 RoCE port's PHY counters at `bits` received, `corrected` FEC-
// corrected bits and `post_fec` uncorrected symbol errors, four lanes.
FakeRead Mlx5(uint64_t bits, uint64_t corrected, uint64_t post_fec,
              std::initializer_list<uint64_t> lanes = {0, 0, 0, 0}) {
  FakeRead read;
  read.Ethtool("rx_bits_phy", bits)
      .Ethtool("rx_corrected_bits_phy", corrected)
      .Ethtool("rx_pcs_symbol_err_phy", post_fec)
      .Ethtool("rx_symbol_err_phy", 7)
      .Ethtool("rx_crc_errors_phy", 3);
  int lane = 0;
  for (uint64_t value : lanes)
    read.Ethtool("rx_err_lane_" + std::to_string(lane++) + "_phy", value);
  return read;
}

ReceivingPort Port(const FakeRead& before, const FakeRead& after) {
  ReceivingPort port;
  port.node = "node3";
  port.rail = "mlx5_1";
  port.netdev = "enp65s0f1np1";
  port.before = &before.counters();
  port.after = &after.counters();
  port.line_rate_gbps = 400;
  port.seconds = 10;
  return port;
}

TEST(LinkBerTest, ZeroErrorsInATrillionBitsBoundsBerByTheRuleOfThree) {
  const FakeRead before = Mlx5(5'000, 100, 2);
  const FakeRead after = Mlx5(5'000 + 1'000'000'000'000, 100, 2);
  v1::LinkBer ber = MeasureLinkBer(Port(before, after));
  EXPECT_EQ(ber.node(), "node3");
  EXPECT_EQ(ber.rail(), "mlx5_1");
  EXPECT_EQ(ber.netdev(), "enp65s0f1np1");
  EXPECT_EQ(ber.bits(), 1'000'000'000'000u);
  EXPECT_EQ(ber.bits_source(), "rx_bits_phy");
  EXPECT_EQ(ber.corrected_bits(), 0u);
  EXPECT_DOUBLE_EQ(ber.raw_ber(), 0);
  EXPECT_EQ(ber.post_fec_errors(), 0u);
  // -ln(0.05) / 1e12: the one-sided 95 % bound, about 3 / N.
  EXPECT_NEAR(ber.ber_bound(), -std::log(0.05) / 1e12, 1e-24);
  EXPECT_EQ(ber.statement(),
            "BER < 3.0e-12 at 95 % confidence (1.0e12 bits, no error); raw BER 0 before FEC (0 "
            "corrected bits)");
  EXPECT_THAT(ber.lane_errors(), ::testing::ElementsAre(0u, 0u, 0u, 0u));
}

TEST(LinkBerTest, CorrectedBitsGiveTheRawBerAndLanesTheirShare) {
  const FakeRead before = Mlx5(0, 1'000, 0, {10, 0, 0, 990});
  const FakeRead after = Mlx5(2'000'000'000, 63'000, 0, {10, 5, 0, 62'985});
  v1::LinkBer ber = MeasureLinkBer(Port(before, after));
  EXPECT_EQ(ber.corrected_bits(), 62'000u);
  EXPECT_DOUBLE_EQ(ber.raw_ber(), 62'000.0 / 2e9);
  EXPECT_THAT(ber.lane_errors(), ::testing::ElementsAre(0u, 5u, 0u, 61'995u));
  EXPECT_THAT(ber.statement(), HasSubstr("raw BER 3.1e-5 before FEC (62000 corrected bits)"));
}

TEST(LinkBerTest, PostFecErrorsSumTheUncorrectedSymbolAndCrcCountersAndGiveTheMeasuredRate) {
  const FakeRead before = Mlx5(0, 0, 0);
  FakeRead after = Mlx5(4'000'000'000, 0, 2);
  // rx_symbol_err_phy 7 -> 8 and rx_crc_errors_phy 3 -> 4 on top of Mlx5's.
  after.Ethtool("rx_symbol_err_phy", 8).Ethtool("rx_crc_errors_phy", 4);
  v1::LinkBer ber = MeasureLinkBer(Port(before, after));
  // The later duplicate values win in the fake's map: 2 + 1 + 1.
  EXPECT_EQ(ber.post_fec_errors(), 4u);
  EXPECT_DOUBLE_EQ(ber.ber_bound(), 4 / 4e9);
  EXPECT_THAT(ber.statement(),
              HasSubstr("BER 1.0e-9 measured (4 post-FEC error(s) in 4.0e9 bits)"));
}

TEST(LinkBerTest, WithoutRxBitsPhyTheLineRateTimesTheMeasuredTimeCounts) {
  // Most kernels do not expose rx_bits_phy: 400 Gb/s for 7.5 s is 3e12 bits,
  // which bounds BER below 1e-12 (FACTS.md).
  FakeRead before;
  before.Ethtool("rx_corrected_bits_phy", 0).Ethtool("rx_pcs_symbol_err_phy", 0);
  FakeRead after;
  after.Ethtool("rx_corrected_bits_phy", 30).Ethtool("rx_pcs_symbol_err_phy", 0);
  ReceivingPort port = Port(before, after);
  port.seconds = 7.5;
  v1::LinkBer ber = MeasureLinkBer(port);
  EXPECT_EQ(ber.bits(), 3'000'000'000'000u);
  EXPECT_EQ(ber.bits_source(), "line rate x time");
  EXPECT_LT(ber.ber_bound(), 1e-12);
  EXPECT_DOUBLE_EQ(ber.raw_ber(), 1e-11);
  EXPECT_THAT(ber.statement(),
              HasSubstr("BER < 1.0e-12 at 95 % confidence (3.0e12 bits from line rate x time, "
                        "no error)"));
}

TEST(LinkBerTest, InfinibandCountsPortRcvDataWordsAndSymbolErrors) {
  FakeRead before;
  before.Sysfs("port_rcv_data", 1'000).Sysfs("symbol_error", 4).Sysfs("port_rcv_errors", 0);
  FakeRead after;
  after.Sysfs("port_rcv_data", 1'000 + 250'000'000)
      .Sysfs("symbol_error", 4)
      .Sysfs("port_rcv_errors", 0);
  ReceivingPort port = Port(before, after);
  port.infiniband = true;
  port.netdev.clear();
  v1::LinkBer ber = MeasureLinkBer(port);
  EXPECT_EQ(ber.bits(), uint64_t{250'000'000} * 32);  // 4-byte words
  EXPECT_EQ(ber.bits_source(), "port_rcv_data");
  EXPECT_EQ(ber.post_fec_errors(), 0u);
  EXPECT_FALSE(ber.has_raw_ber());
  EXPECT_THAT(ber.statement(), HasSubstr("BER < 3.7e-10 at 95 % confidence (8.0e9 bits from "
                                         "port_rcv_data, no error)"));
}

TEST(LinkBerTest, AVethHasNoPhyCountersAndSoNoBound) {
  FakeRead after;
  after.Set("sysfs", "carrier_changes", 2);
  FakeRead before_veth;
  before_veth.Set("sysfs", "carrier_changes", 2);
  ReceivingPort port = Port(before_veth, after);
  port.rail = "enp0s1";
  port.netdev = "enp0s1";
  v1::LinkBer ber = MeasureLinkBer(port);
  EXPECT_EQ(ber.bits_source(), "line rate x time");  // the rate is known
  EXPECT_EQ(ber.ber_bound(), 0);
  EXPECT_EQ(ber.statement(),
            "enp0s1 has no post-FEC error counters (rx_pcs_symbol_err_phy, rx_symbol_err_phy, "
            "rx_crc_errors_phy): the driver keeps none, so no BER bound");
}

TEST(LinkBerTest, NoBitCounterAndNoLineRateIsNoBoundNamingTheCounter) {
  FakeRead before;
  before.Ethtool("rx_pcs_symbol_err_phy", 0);
  FakeRead after;
  after.Ethtool("rx_pcs_symbol_err_phy", 0);
  ReceivingPort port = Port(before, after);
  port.line_rate_gbps = 0;
  v1::LinkBer ber = MeasureLinkBer(port);
  EXPECT_EQ(ber.bits(), 0u);
  EXPECT_EQ(ber.ber_bound(), 0);
  EXPECT_EQ(ber.statement(),
            "enp65s0f1np1 has no PHY bit counters (rx_bits_phy) and its line rate is unknown: no "
            "BER bound");
}

TEST(LinkBerTest, CountersNotReadOrGoneBackwardsAreNeverZero) {
  const FakeRead empty;
  const FakeRead after = Mlx5(1'000'000, 5, 0);
  v1::LinkBer unread = MeasureLinkBer(Port(empty, after));
  EXPECT_EQ(unread.ber_bound(), 0);
  EXPECT_THAT(unread.statement(), HasSubstr("were not read both before and after"));

  // A reset between the reads: the corrected bits say nothing; no raw BER.
  const FakeRead before = Mlx5(0, 900, 0);
  const FakeRead reset = Mlx5(1'000'000, 5, 0);
  v1::LinkBer ber = MeasureLinkBer(Port(before, reset));
  EXPECT_FALSE(ber.has_corrected_bits());
  EXPECT_FALSE(ber.has_raw_ber());
  // A lane with no usable delta empties the lane list rather than leave a gap.
  const FakeRead lanes_before = Mlx5(0, 0, 0, {0, 9, 0, 0});
  const FakeRead lanes_after = Mlx5(1'000'000, 0, 0, {0, 1, 0, 0});
  EXPECT_EQ(MeasureLinkBer(Port(lanes_before, lanes_after)).lane_errors_size(), 0);
}

TEST(LinkBerTest, HostileValuesNeitherOverflowNorDivideByZero) {
  FakeRead before;
  before.Sysfs("port_rcv_data", 0).Sysfs("symbol_error", 0);
  FakeRead after;
  after.Sysfs("port_rcv_data", UINT64_MAX).Sysfs("symbol_error", UINT64_MAX);
  ReceivingPort port = Port(before, after);
  port.infiniband = true;
  v1::LinkBer ber = MeasureLinkBer(port);
  EXPECT_GT(ber.bits(), 0u);
  EXPECT_TRUE(std::isfinite(ber.ber_bound()));

  // A time no agent measures (NaN, absurdly long) counts no bits, or a
  // bounded number of them.
  const FakeRead clean = FakeRead().Ethtool("rx_pcs_symbol_err_phy", 0);
  ReceivingPort by_time = Port(clean, clean);
  by_time.seconds = std::nan("");
  EXPECT_EQ(MeasureLinkBer(by_time).bits(), 0u);
  by_time.seconds = 1e300;
  EXPECT_GT(MeasureLinkBer(by_time).bits(), 0u);
  EXPECT_TRUE(std::isfinite(MeasureLinkBer(by_time).ber_bound()));
}

TEST(LinkBerTest, FormatRateKeepsTwoDigitsAndCarries) {
  EXPECT_EQ(FormatRate(3e-12), "3.0e-12");
  EXPECT_EQ(FormatRate(3.14e-5), "3.1e-5");
  EXPECT_EQ(FormatRate(9.96e-5), "1.0e-4");
  EXPECT_EQ(FormatRate(1e12), "1.0e12");
  EXPECT_EQ(FormatRate(0), "0");
}

// The raw BER verdict of a cell (pair_verdict.h WithCounterVerdict).
v1::PairResult CellWithBer(double raw_ber) {
  v1::PairResult pair;
  pair.set_client("node1");
  pair.set_server("node3");
  pair.set_rail("mlx5_1");
  pair.set_test("write_bw");
  pair.set_ok(true);
  v1::LinkBer* ber = pair.add_ber();
  ber->set_node("node3");
  ber->set_rail("mlx5_1");
  ber->set_netdev("enp65s0f1np1");
  ber->set_bits(2'000'000'000);
  ber->set_bits_source("rx_bits_phy");
  ber->set_corrected_bits(static_cast<uint64_t>(std::llround(raw_ber * 2e9)));
  ber->set_raw_ber(raw_ber);
  return pair;
}

v1::Finding Passing() {
  v1::Finding finding;
  finding.set_id("pairwise.bandwidth");
  finding.set_status(v1::Finding::pass);
  finding.set_severity(v1::Finding::error);
  finding.set_observed("390 Gb/s");
  return finding;
}

TEST(RawBerVerdictTest, RawBerOverThePlansLimitFailsWithTheCableRemedy) {
  plan::Pairwise plan;
  plan.max_raw_ber = 1e-6;
  v1::Finding finding = WithCounterVerdict(plan, CellWithBer(3.1e-5), Passing());
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_THAT(finding.message(),
              HasSubstr("node3 mlx5_1 saw raw BER 3.1e-5 > 1.0e-6 under load (62000 corrected "
                        "bits in 2.0e9 bits): FEC is hiding a marginal cable/transceiver"));
  EXPECT_THAT(finding.expected(), HasSubstr("raw BER <= 1.0e-6"));
  EXPECT_THAT(finding.remedy(),
              HasSubstr("Reseat, clean or replace the cable/transceiver of node3 mlx5_1 (run "
                        "mlxlink -d mlx5_1 -c -m for its cable info)"));
}

TEST(RawBerVerdictTest, RawBerAtOrUnderTheLimitLeavesTheCellAlone) {
  plan::Pairwise plan;
  plan.max_raw_ber = 1e-6;
  v1::Finding finding = WithCounterVerdict(plan, CellWithBer(1e-6), Passing());
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.observed(), "390 Gb/s");
  // The default, the IEEE 802.3 PAM4 pre-FEC requirement, passes 3.1e-5.
  EXPECT_DOUBLE_EQ(plan::Pairwise{}.max_raw_ber, 2.4e-4);
  EXPECT_EQ(WithCounterVerdict({}, CellWithBer(3.1e-5), Passing()).status(), v1::Finding::pass);
  EXPECT_EQ(WithCounterVerdict({}, CellWithBer(3e-4), Passing()).status(), v1::Finding::fail);
}

TEST(RawBerVerdictTest, APlainNetdevGetsTheEthtoolRemedy) {
  v1::PairResult pair = CellWithBer(1e-3);
  pair.mutable_ber(0)->set_rail("enp0s1");
  pair.mutable_ber(0)->set_netdev("enp0s1");
  v1::Finding finding = WithCounterVerdict({}, pair, Passing());
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.remedy(), HasSubstr("(run ethtool -m enp0s1 for its module)"));
}

}  // namespace
}  // namespace clustercert::controller::pairwise
