#include "agent/inventory/qos_collector.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "agent/inventory/dcb_capture_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_tree.h"

namespace clustercert::agent::inventory {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using ::clustercert::testing::TempTree;

// Answers Read() for every netdev with one canned result.
class FakeDcbSource : public DcbSource {
 public:
  explicit FakeDcbSource(absl::StatusOr<DcbSettings> result) : result_(std::move(result)) {}
  absl::StatusOr<DcbSettings> Read(const std::string& netdev) override {
    asked.push_back(netdev);
    return result_;
  }
  std::vector<std::string> asked;

 private:
  absl::StatusOr<DcbSettings> result_;
};

// The files MLNX_OFED exposes for a RoCE netdev and its RDMA device.
void WriteOfedQos(const TempTree& tree, const std::string& netdev, const std::string& device,
                  const std::string& trust, const std::string& tclass, int ecn_priority) {
  tree.Write("sys/class/net/" + netdev + "/qos/trust", trust + "\n");
  tree.Write("sys/class/infiniband/" + device + "/tc/1/traffic_class", tclass + "\n");
  for (const char* side : {"roce_np", "roce_rp"}) {
    for (int p = 0; p < 8; ++p) {
      tree.Write("sys/class/net/" + netdev + "/ecn/" + side + "/enable/" + std::to_string(p),
                 p == ecn_priority ? "1\n" : "0\n");
    }
  }
}

std::map<std::string, std::string> UnknownReasons(const v1::NetdevQos& qos) {
  std::map<std::string, std::string> reasons;
  for (const auto& unknown : qos.unknowns()) reasons[unknown.field()] = unknown.reason();
  return reasons;
}

DcbSettings Pfc3Dscp26() {
  DcbSettings settings;
  settings.pfc_enabled_mask = 0x08;
  settings.dscp_priorities = std::vector<DcbDscpPriority>{{26, 3}};
  settings.source = "fake dcb";
  return settings;
}

TEST(ParseTrafficClassTest, ReadsGlobalTclass) {
  EXPECT_EQ(*ParseTrafficClass("Global tclass=106"), 106u);
  EXPECT_EQ(*ParseTrafficClass("Global tclass=106\n"), 106u);
  EXPECT_FALSE(ParseTrafficClass("Global tclass=fast").ok());
  EXPECT_FALSE(ParseTrafficClass("Global tclass=-1").ok());
  EXPECT_FALSE(ParseTrafficClass("Global tclass=300").ok());
  EXPECT_FALSE(ParseTrafficClass("106").ok());
  EXPECT_THAT(std::string(ParseTrafficClass("garbage").status().message()),
              StartsWith("unparsable: 'garbage'"));
}

TEST(QosCollectorTest, OfedHostWithCapturedDcb) {
  TempTree tree;
  WriteOfedQos(tree, "enp65s0f0np0", "mlx5_0", "dscp", "Global tclass=106", 3);
  tree.Write("clustercert-capture/dcb/enp65s0f0np0/pfc_enabled_priorities", "3\n");
  tree.Write("clustercert-capture/dcb/enp65s0f0np0/dscp_priorities", "26 3\n");
  SysfsView view(tree.root());
  DcbCaptureSource dcb(view);
  auto all = QosCollector(view, dcb).Collect({{"enp65s0f0np0", "mlx5_0"}});
  ASSERT_EQ(all.size(), 1u);
  const v1::NetdevQos& qos = all[0];
  EXPECT_EQ(qos.netdev(), "enp65s0f0np0");
  EXPECT_EQ(qos.rdma_device(), "mlx5_0");
  EXPECT_EQ(qos.pfc_enabled_mask(), 0x08u);
  EXPECT_EQ(qos.pfc_source(), "/clustercert-capture/dcb/enp65s0f0np0");
  ASSERT_EQ(qos.dscp_priorities_size(), 1);
  EXPECT_EQ(qos.dscp_priorities(0).dscp(), 26u);
  EXPECT_EQ(qos.dscp_priorities(0).priority(), 3u);
  EXPECT_EQ(qos.trust(), "dscp");
  EXPECT_EQ(qos.trust_source(), "/sys/class/net/enp65s0f0np0/qos/trust");
  EXPECT_EQ(qos.traffic_class(), 106u);
  EXPECT_EQ(qos.ecn_np_mask(), 0x08u);
  EXPECT_EQ(qos.ecn_rp_mask(), 0x08u);
  EXPECT_EQ(qos.unknowns_size(), 0) << qos.DebugString();
}

TEST(QosCollectorTest, UpstreamDriverLeavesOfedOnlyPartsUnknown) {
  TempTree tree;
  tree.Write("sys/class/net/eth2/mtu", "9000\n");
  SysfsView view(tree.root());
  FakeDcbSource dcb(Pfc3Dscp26());
  auto all = QosCollector(view, dcb).Collect({{"eth2", "mlx5_1"}});
  ASSERT_EQ(all.size(), 1u);
  const v1::NetdevQos& qos = all[0];
  EXPECT_EQ(dcb.asked, std::vector<std::string>{"eth2"});
  EXPECT_EQ(qos.pfc_enabled_mask(), 0x08u);
  EXPECT_EQ(qos.pfc_source(), "fake dcb");
  EXPECT_TRUE(qos.trust().empty());
  EXPECT_FALSE(qos.has_traffic_class());
  EXPECT_FALSE(qos.has_ecn_np_mask());
  EXPECT_FALSE(qos.has_ecn_rp_mask());
  auto reasons = UnknownReasons(qos);
  EXPECT_EQ(reasons["trust"],
            "qos/trust not exposed (MLNX_OFED only); upstream mlx5 trusts DSCP when the DCB app "
            "table has DSCP entries");
  EXPECT_EQ(reasons["traffic_class"], "tc/1/traffic_class not exposed (MLNX_OFED only)");
  EXPECT_THAT(reasons["ecn_np_mask"], HasSubstr("not exposed"));
  EXPECT_THAT(reasons["ecn_rp_mask"], HasSubstr("not exposed"));
  EXPECT_EQ(reasons.count("pfc_enabled_mask"), 0u);
}

TEST(QosCollectorTest, TrafficClassGarbageIsUnknownUnparsable) {
  TempTree tree;
  WriteOfedQos(tree, "eth2", "mlx5_1", "pcp", "Global tclass=fast", 3);
  SysfsView view(tree.root());
  FakeDcbSource dcb(Pfc3Dscp26());
  v1::NetdevQos qos = QosCollector(view, dcb).Collect({{"eth2", "mlx5_1"}})[0];
  EXPECT_FALSE(qos.has_traffic_class());
  EXPECT_EQ(UnknownReasons(qos)["traffic_class"], "unparsable: 'Global tclass=fast'");
  EXPECT_EQ(qos.trust(), "pcp");
}

TEST(QosCollectorTest, DcbFailureIsUnknownPfcWithTheReason) {
  TempTree tree;
  WriteOfedQos(tree, "enp65s0f0np0", "mlx5_0", "dscp", "Global tclass=106", 3);
  SysfsView view(tree.root());
  FakeDcbSource dcb(absl::UnimplementedError(
      "enp65s0f0np0: DCB netlink not supported by the driver (EOPNOTSUPP)"));
  v1::NetdevQos qos = QosCollector(view, dcb).Collect({{"enp65s0f0np0", "mlx5_0"}})[0];
  EXPECT_FALSE(qos.has_pfc_enabled_mask());
  EXPECT_EQ(qos.dscp_priorities_size(), 0);
  auto reasons = UnknownReasons(qos);
  EXPECT_EQ(reasons["pfc_enabled_mask"],
            "enp65s0f0np0: DCB netlink not supported by the driver (EOPNOTSUPP)");
  EXPECT_EQ(reasons.count("dscp_priorities"), 1u);
  EXPECT_EQ(qos.traffic_class(), 106u);
}

TEST(QosCollectorTest, PartialDcbSettingsKeepWhatWasRead) {
  TempTree tree;
  SysfsView view(tree.root());
  DcbSettings settings;
  settings.dscp_priorities = std::vector<DcbDscpPriority>{};
  settings.pfc_reason = "the driver reports no IEEE PFC";
  settings.source = "rtnetlink DCB_CMD_IEEE_GET eth2";
  FakeDcbSource dcb(settings);
  v1::NetdevQos qos = QosCollector(view, dcb).Collect({{"eth2", "mlx5_1"}})[0];
  EXPECT_FALSE(qos.has_pfc_enabled_mask());
  EXPECT_EQ(UnknownReasons(qos)["pfc_enabled_mask"], "the driver reports no IEEE PFC");
  EXPECT_EQ(UnknownReasons(qos).count("dscp_priorities"), 0u);
}

TEST(QosCollectorTest, GarbledEcnFileLeavesThatMaskUnknown) {
  TempTree tree;
  WriteOfedQos(tree, "eth2", "mlx5_1", "dscp", "Global tclass=106", 3);
  tree.Write("sys/class/net/eth2/ecn/roce_rp/enable/5", "yes\n");
  SysfsView view(tree.root());
  FakeDcbSource dcb(Pfc3Dscp26());
  v1::NetdevQos qos = QosCollector(view, dcb).Collect({{"eth2", "mlx5_1"}})[0];
  EXPECT_EQ(qos.ecn_np_mask(), 0x08u);
  EXPECT_FALSE(qos.has_ecn_rp_mask());
  EXPECT_EQ(UnknownReasons(qos)["ecn_rp_mask"], "unparsable: 'yes'");
}

TEST(QosCollectorTest, GarbledTrustIsUnknown) {
  TempTree tree;
  tree.Write("sys/class/net/eth2/qos/trust", "maybe\n");
  SysfsView view(tree.root());
  FakeDcbSource dcb(Pfc3Dscp26());
  v1::NetdevQos qos = QosCollector(view, dcb).Collect({{"eth2", "mlx5_1"}})[0];
  EXPECT_TRUE(qos.trust().empty());
  EXPECT_EQ(UnknownReasons(qos)["trust"], "unparsable: 'maybe'");
}

// The shared fixture trees (tests/fixtures/sysfs/README.md describes each host).
const std::vector<RoceNetdev> kFixturePorts = {{"enp65s0f0np0", "mlx5_0"},
                                               {"enp65s0f1np1", "mlx5_1"}};

class QosFixtureTest : public ::testing::Test {
 protected:
  static fs::path Fixture(const std::string& name) {
    return fs::path(CLUSTERCERT_FIXTURES) / "sysfs" / name;
  }
};

TEST_F(QosFixtureTest, RoceHealthy) {
  const fs::path root = Fixture("roce-healthy");
  ASSERT_TRUE(fs::exists(root)) << root;
  SysfsView view(root);
  DcbCaptureSource dcb(view);
  auto all = QosCollector(view, dcb).Collect(kFixturePorts);
  ASSERT_EQ(all.size(), 2u);
  for (const auto& qos : all) {
    SCOPED_TRACE(qos.netdev());
    EXPECT_EQ(qos.pfc_enabled_mask(), 0x08u);
    ASSERT_EQ(qos.dscp_priorities_size(), 1);
    EXPECT_EQ(qos.dscp_priorities(0).dscp(), 26u);
    EXPECT_EQ(qos.dscp_priorities(0).priority(), 3u);
    EXPECT_EQ(qos.trust(), "dscp");
    EXPECT_EQ(qos.traffic_class(), 106u);
    EXPECT_EQ(qos.ecn_np_mask(), 0x08u);
    EXPECT_EQ(qos.ecn_rp_mask(), 0x08u);
    EXPECT_EQ(qos.unknowns_size(), 0) << qos.DebugString();
  }
}

TEST_F(QosFixtureTest, RoceBrokenHasPfcOnTheWrongPriority) {
  const fs::path root = Fixture("roce-broken");
  ASSERT_TRUE(fs::exists(root)) << root;
  SysfsView view(root);
  DcbCaptureSource dcb(view);
  auto all = QosCollector(view, dcb).Collect(kFixturePorts);
  ASSERT_EQ(all.size(), 2u);
  // The planted fault: PFC on priority 4 while DSCP 26 and ECN stay on priority 3.
  EXPECT_EQ(all[0].pfc_enabled_mask(), 0x10u) << all[0].DebugString();
  ASSERT_EQ(all[0].dscp_priorities_size(), 1);
  EXPECT_EQ(all[0].dscp_priorities(0).priority(), 3u);
  EXPECT_EQ(all[0].ecn_np_mask(), 0x08u);
  EXPECT_EQ(all[1].pfc_enabled_mask(), 0x08u) << all[1].DebugString();
  EXPECT_EQ(all[0].unknowns_size() + all[1].unknowns_size(), 0);
}

}  // namespace
}  // namespace clustercert::agent::inventory
