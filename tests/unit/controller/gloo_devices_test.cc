// collectives.transport for gloo judges the device each rank's gloo created
// (its Device::str(), sent as a note), not the rank's echo of its arguments.
#include "controller/collectives/gloo_devices.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controller/collectives/collective_verdicts.h"

namespace clustercert::controller {
namespace {

plan::Plan GlooPlan() {
  plan::Plan plan;
  plan.collectives.enabled = true;
  plan.collectives.backend = plan::CollectiveBackend::kGloo;
  return plan;
}

v1::CollectiveSweep TwoNodeSweep(const std::vector<std::string>& notes) {
  v1::CollectiveSweep sweep;
  sweep.set_scope("2-node");
  sweep.add_nodes("node1");
  sweep.add_nodes("node2");
  sweep.set_ranks(2);
  sweep.set_ok(true);
  sweep.set_backend("gloo");
  sweep.set_expected_transport("ibverbs");
  for (const auto& note : notes) sweep.add_notes(note);
  RecordGlooDevices(notes, sweep);
  return sweep;
}

v1::Finding TransportOf(const v1::CollectiveSweep& sweep) {
  for (const auto& finding : JudgeSweep(GlooPlan(), sweep, sweep.expected_transport())) {
    if (finding.id() == "collectives.transport") return finding;
  }
  ADD_FAILURE() << "no collectives.transport finding";
  return {};
}

const std::string kIb1 = "node1 rank 0: transport ibverbs mlx5_0 port 1 gid 3";
const std::string kIb2 = "node2 rank 1: transport ibverbs mlx5_0 port 1 gid 3";
const std::string kIbDevice1 =
    "node1 rank 0: device ibverbs, pci=0000:17:00.0, dev=mlx5_0, "
    "port=1, index=3";
const std::string kIbDevice2 =
    "node2 rank 1: device ibverbs, pci=0000:17:00.0, dev=mlx5_0, "
    "port=1, index=3";

TEST(GlooDevices, RecordsWhatEachRankAskedAndWhatGlooCreated) {
  const v1::CollectiveSweep sweep = TwoNodeSweep(
      {kIb1, kIbDevice1, kIb2,
       "node2 rank 1: device tcp, pci=, iface=eth1, speed=25000, addr=[10.0.0.2]; bound "
       "[10.0.0.2]:40123"});
  ASSERT_EQ(sweep.gloo_devices_size(), 2);
  const v1::GlooDevice& first = sweep.gloo_devices(0);
  EXPECT_EQ(first.node(), "node1");
  EXPECT_EQ(first.rank(), 0);
  EXPECT_EQ(first.asked(), "ibverbs mlx5_0 port 1 gid 3");
  EXPECT_EQ(first.transport(), "ibverbs");
  EXPECT_EQ(first.ib_device(), "mlx5_0");
  const v1::GlooDevice& second = sweep.gloo_devices(1);
  EXPECT_EQ(second.transport(), "tcp");
  EXPECT_EQ(second.interface(), "eth1");
  EXPECT_EQ(second.address(), "10.0.0.2");
  EXPECT_EQ(second.bound(), "[10.0.0.2]:40123");
  EXPECT_EQ(sweep.transport(), "mixed");
}

TEST(GlooDevices, PassesWhenEveryDeviceIsThePlannedOne) {
  const v1::Finding finding = TransportOf(TwoNodeSweep({kIb1, kIbDevice1, kIb2, kIbDevice2}));
  EXPECT_EQ(finding.status(), v1::Finding::pass) << finding.message();
  EXPECT_EQ(finding.observed(), "gloo ibverbs mlx5_0 port 1 gid 3 x2");
  EXPECT_EQ(finding.expected(), "gloo ibverbs");
}

// The worker was asked for ibverbs (its echo says so) but its device is tcp:
// the echo alone would have passed.
TEST(GlooDevices, FailsNamingTheNodeThePlanAndWhatGlooCreated) {
  const v1::Finding finding = TransportOf(
      TwoNodeSweep({kIb1, kIbDevice1, kIb2,
                    "node2 rank 1: device tcp, pci=, iface=eth1, speed=25000, addr=[10.0.0.2]"}));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.severity(), v1::Finding::error);
  EXPECT_NE(finding.message().find(
                "node2 rank 1: the plan asks for gloo ibverbs, gloo created tcp on eth1 10.0.0.2"),
            std::string::npos)
      << finding.message();
  EXPECT_EQ(finding.message().find("node1"), std::string::npos) << finding.message();
  EXPECT_FALSE(finding.remedy().empty());
}

// Every rank echoes ibverbs, every device is tcp: the old check, reading
// the echo, passed this.
TEST(GlooDevices, FailsWhenEveryEchoIsRightAndEveryDeviceWrong) {
  const std::string tcp = ": device tcp, pci=, iface=eth1, speed=25000, addr=[10.0.0.9]";
  const v1::CollectiveSweep sweep =
      TwoNodeSweep({kIb1, "node1 rank 0" + tcp, kIb2, "node2 rank 1" + tcp});
  EXPECT_EQ(sweep.transport(), "tcp");
  const v1::Finding finding = TransportOf(sweep);
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_EQ(finding.observed(), "gloo tcp on eth1 10.0.0.9 x2");
  EXPECT_NE(finding.message().find("node1 rank 0: the plan asks for gloo ibverbs, gloo created "
                                   "tcp on eth1 10.0.0.9; node2 rank 1: "),
            std::string::npos)
      << finding.message();
}

TEST(GlooDevices, FailsAnIbverbsDeviceOtherThanTheRailAskedFor) {
  const v1::Finding finding = TransportOf(TwoNodeSweep(
      {kIb1, kIbDevice1, kIb2,
       "node2 rank 1: device ibverbs, pci=0000:31:00.0, dev=mlx5_1, port=1, index=0"}));
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_NE(finding.message().find("node2 rank 1: the plan asks for ibverbs mlx5_0 port 1 gid 3, "
                                   "gloo created ibverbs mlx5_1 port 1 gid 0"),
            std::string::npos)
      << finding.message();
}

TEST(GlooDevices, FailsATcpDeviceOnAnotherAddressThanTheDataAddress) {
  v1::CollectiveSweep sweep =
      TwoNodeSweep({"node1 rank 0: transport tcp 10.0.0.1",
                    "node1 rank 0: device tcp, pci=, iface=eth1, speed=25000, addr=[10.0.0.1]",
                    "node2 rank 1: transport tcp 10.0.0.2",
                    "node2 rank 1: device tcp, pci=, iface=eno1, speed=1000, addr=[192.168.1.2]"});
  sweep.set_expected_transport("tcp");
  const v1::Finding finding = TransportOf(sweep);
  EXPECT_EQ(finding.status(), v1::Finding::fail);
  EXPECT_NE(finding.message().find("node2 rank 1: the plan gives the data address 10.0.0.2, "
                                   "gloo's tcp device bound tcp on eno1 192.168.1.2"),
            std::string::npos)
      << finding.message();
}

// A worker that only echoes its arguments (older than the controller) is
// never a pass.
TEST(GlooDevices, AnEchoWithoutADeviceIsUnknown) {
  const v1::CollectiveSweep sweep = TwoNodeSweep({kIb1, kIb2});
  EXPECT_TRUE(sweep.transport().empty());
  const v1::Finding finding = TransportOf(sweep);
  EXPECT_EQ(finding.status(), v1::Finding::unknown);
  EXPECT_NE(finding.message().find("node1 rank 0, node2 rank 1 did not report the device"),
            std::string::npos)
      << finding.message();
}

TEST(GlooDevices, FewerRanksReportedThanRanIsUnknown) {
  v1::CollectiveSweep sweep = TwoNodeSweep({kIb1, kIbDevice1});
  EXPECT_EQ(TransportOf(sweep).status(), v1::Finding::unknown);
  sweep.clear_gloo_devices();
  sweep.clear_transport();
  EXPECT_EQ(TransportOf(sweep).status(), v1::Finding::unknown);  // nobody said anything
}

// A certificate from before the ranks reported their device keeps the rule
// it was judged by, so `verify` still recomputes it as recorded.
TEST(GlooDevices, AnOlderCertificateKeepsItsRule) {
  v1::CollectiveSweep sweep;
  sweep.set_scope("2-node");
  sweep.add_nodes("node1");
  sweep.add_nodes("node2");
  sweep.set_ranks(2);
  sweep.set_ok(true);
  sweep.set_transport("tcp");
  sweep.add_notes("node1 rank 0: transport tcp 127.0.0.1");
  sweep.set_expected_transport("tcp");
  EXPECT_EQ(TransportOf(sweep).status(), v1::Finding::pass);
  sweep.set_expected_transport("ibverbs");
  EXPECT_EQ(TransportOf(sweep).status(), v1::Finding::fail);
}

TEST(GlooDevices, IgnoresNotesOfAnotherShapeAndCapsTheRanks) {
  std::vector<std::string> notes = {"no rank here", "node1 rank x: device tcp",
                                    "node1 rank -1: device tcp", "sweep capped at 4 bytes"};
  for (int rank = 0; rank < kMaxGlooDevices + 10; ++rank) {
    notes.push_back("n rank " + std::to_string(rank) + ": device tcp, iface=lo, addr=[127.0.0.1]");
  }
  v1::CollectiveSweep sweep;
  RecordGlooDevices(notes, sweep);
  EXPECT_EQ(sweep.gloo_devices_size(), kMaxGlooDevices);
  EXPECT_EQ(sweep.transport(), "tcp");
}

}  // namespace
}  // namespace clustercert::controller
