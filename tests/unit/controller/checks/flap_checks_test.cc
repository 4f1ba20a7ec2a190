// port.flap (flap_checks.h): a rail port's link-down counters after the
// inventory against after the last phase; any rise fails that port only,
// a failed or reset read is unknown, never a pass.
#include "controller/checks/flap_checks.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::HasSubstr;

FlapRead Read(uint64_t carrier, uint64_t link_downed, uint64_t down_events) {
  FlapRead read;
  auto add = [&](const std::string& source, const std::string& name, uint64_t value) {
    auto* entry = read.counters.add_values();
    entry->set_source(source);
    entry->set_name(name);
    entry->set_value(value);
  };
  add("sysfs", "carrier_changes", carrier);
  add("counters", "link_downed", link_downed);
  add("ethtool", "link_down_events_phy", down_events);
  // Not a flap counter: left out of LinkFlaps.
  add("counters", "symbol_error", 12);
  return read;
}

FlapRead Failed(const std::string& why) {
  FlapRead read;
  read.error = why;
  return read;
}

TEST(FlapChecksTest, SteadyCountersPassAndKeepOnlyTheFlapCounters) {
  v1::LinkFlaps flaps = FlapsOver("node2", "mlx5_0", "enp65s0f0np0", Read(2, 0, 0), Read(2, 0, 0));
  EXPECT_EQ(flaps.node(), "node2");
  EXPECT_EQ(flaps.rail(), "mlx5_0");
  EXPECT_EQ(flaps.netdev(), "enp65s0f0np0");
  ASSERT_EQ(flaps.counters_size(), 3);
  EXPECT_EQ(flaps.counters(0).name(), "carrier_changes");
  v1::Finding finding = JudgeFlaps(flaps);
  EXPECT_EQ(finding.id(), "port.flap");
  EXPECT_EQ(finding.status(), v1::Finding::pass);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_EQ(finding.node(), "node2");
  EXPECT_EQ(finding.device(), "mlx5_0");
  EXPECT_THAT(finding.message(), HasSubstr("node2 mlx5_0 kept its link through the run"));
}

TEST(FlapChecksTest, ACarrierLostAndBackFailsAsOneFlap) {
  v1::Finding finding =
      JudgeFlaps(FlapsOver("node2", "data0", "data0", Read(2, 0, 0), Read(4, 0, 0)));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_EQ(finding.observed(), "carrier_changes +2");
  EXPECT_EQ(finding.message(),
            "node2 data0 lost its link 1 time during the run (carrier_changes +2): check the "
            "cable and the switch port's log.");
  EXPECT_THAT(finding.remedy(), HasSubstr("switch port's log"));
}

TEST(FlapChecksTest, TheLinkDownCountersCountEachFlapAndTheLargestCountWins) {
  v1::Finding finding =
      JudgeFlaps(FlapsOver("node3", "mlx5_1", "enp1", Read(10, 1, 100), Read(12, 4, 103)));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_THAT(finding.message(),
              HasSubstr("lost its link 3 times during the run (carrier_changes +2, link_downed "
                        "+3, link_down_events_phy +3)"));
}

TEST(FlapChecksTest, AFailedReadIsUnknownWithItsReason) {
  v1::LinkFlaps flaps = FlapsOver("node4", "mlx5_0", "", Read(2, 0, 0),
                                  Failed("node4 did not answer ReadPortCounters in 10 s"));
  EXPECT_EQ(flaps.counters_size(), 0);
  EXPECT_THAT(flaps.error(), HasSubstr("after the last phase: node4 did not answer"));
  v1::Finding finding = JudgeFlaps(flaps);
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_THAT(finding.message(), HasSubstr("node4 did not answer ReadPortCounters"));
}

TEST(FlapChecksTest, NoFlapCounterIsSkippedOneReadOnOneSideOrAResetIsUnknownNeverPass) {
  // A captured tree, or a veth under an agent that predates carrier_changes:
  // nothing can be watched, a skip with the reason, never a pass.
  FlapRead bare;
  auto* value = bare.counters.add_values();
  value->set_source("ethtool");
  value->set_name("rx_discards_phy");
  v1::Finding none = JudgeFlaps(FlapsOver("node1", "eth1", "eth1", bare, bare));
  EXPECT_EQ(none.status(), v1::Finding::skipped);
  EXPECT_THAT(none.message(), HasSubstr("no link-down counter"));

  // carrier_changes read after the inventory only: nothing compares.
  FlapRead first = bare;
  auto* carrier = first.counters.add_values();
  carrier->set_source("sysfs");
  carrier->set_name("carrier_changes");
  carrier->set_value(2);
  v1::Finding one_sided = JudgeFlaps(FlapsOver("node1", "eth1", "eth1", first, bare));
  EXPECT_EQ(one_sided.status(), v1::Finding::unknown);

  v1::Finding reset =
      JudgeFlaps(FlapsOver("node1", "mlx5_0", "enp1", Read(9, 0, 0), Read(2, 0, 0)));
  EXPECT_EQ(reset.status(), v1::Finding::unknown);
  EXPECT_THAT(reset.message(), HasSubstr("carrier_changes went backwards"));
}

TEST(FlapChecksTest, ACounterReadOnOneSideOnlyLeavesTheOthersToJudge) {
  FlapRead first;
  auto* carrier = first.counters.add_values();
  carrier->set_source("sysfs");
  carrier->set_name("carrier_changes");
  carrier->set_value(2);
  // The last read also has link_down_events_phy (say ethtool answered only
  // then): not read before, so no delta, and the carrier still judges.
  const FlapRead last = Read(2, 0, 7);
  v1::LinkFlaps flaps = FlapsOver("node1", "mlx5_0", "enp1", first, last);
  EXPECT_EQ(flaps.counters_size(), 3);
  EXPECT_EQ(JudgeFlaps(flaps).status(), v1::Finding::pass);
}

TEST(FlapChecksTest, EachPortIsJudgedOnItsOwn) {
  google::protobuf::RepeatedPtrField<v1::LinkFlaps> flaps;
  *flaps.Add() = FlapsOver("node1", "data0", "data0", Read(2, 0, 0), Read(2, 0, 0));
  *flaps.Add() = FlapsOver("node2", "data0", "data0", Read(2, 0, 0), Read(4, 0, 0));
  *flaps.Add() = FlapsOver("node3", "data0", "data0", Read(2, 0, 0), Read(2, 0, 0));
  std::vector<v1::Finding> findings = JudgeAllFlaps(flaps);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].status(), v1::Finding::pass);
  EXPECT_EQ(findings[1].status(), v1::Finding::fail);
  EXPECT_EQ(findings[1].node(), "node2");
  EXPECT_EQ(findings[2].status(), v1::Finding::pass);
}

}  // namespace
}  // namespace clustercert::controller::checks
