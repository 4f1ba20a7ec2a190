// PortCounterReader on the fixture hosts and on damaged copies of them: every
// counter file is read, a garbled or unreadable one becomes an Unknown, and
// ethtool statistics join through the EthtoolStatsSource.
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/peer/port_counters.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::peer {
namespace {

using inventory::testing::FindUnknown;
using inventory::testing::FixtureRoot;
using inventory::testing::TempSysfsTree;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPort[] = "/sys/class/infiniband/mlx5_0/ports/1";
const absl::Time kNow = absl::FromUnixSeconds(1700000000);

absl::Time FixedNow() { return kNow; }

std::optional<uint64_t> ValueOf(const v1::PortCounters& counters, const std::string& source,
                                const std::string& name) {
  for (const auto& value : counters.values()) {
    if (value.source() == source && value.name() == name) return value.value();
  }
  return std::nullopt;
}

int CountSource(const v1::PortCounters& counters, const std::string& source) {
  int n = 0;
  for (const auto& value : counters.values()) n += value.source() == source;
  return n;
}

class FakeEthtool : public EthtoolStatsSource {
 public:
  absl::StatusOr<std::map<std::string, uint64_t>> Read(const std::string& netdev) override {
    ++calls;
    last_netdev = netdev;
    return result;
  }
  absl::StatusOr<std::map<std::string, uint64_t>> result = std::map<std::string, uint64_t>{};
  int calls = 0;
  std::string last_netdev;
};

// A read that must succeed; a failure fails the test and gives no counters.
v1::PortCounters ReadOk(const SysfsView& view, EthtoolStatsSource* ethtool,
                        const std::string& device, uint32_t port, const std::string& netdev) {
  absl::StatusOr<v1::PortCounters> read =
      PortCounterReader(view, ethtool, FixedNow).Read(device, port, netdev);
  EXPECT_TRUE(read.ok()) << read.status();
  return read.value_or(v1::PortCounters());
}

v1::PortCounters ReadFixture(const std::string& host, const std::string& device,
                             const std::string& netdev = "") {
  SysfsView view(FixtureRoot(host));
  return ReadOk(view, nullptr, device, 1, netdev);
}

TEST(PortCounterReaderTest, RoceHealthyReadsCountersAndMlx5HwCounters) {
  v1::PortCounters counters = ReadFixture("roce-healthy", "mlx5_0", "enp65s0f0np0");
  EXPECT_EQ(counters.device(), "mlx5_0");
  EXPECT_EQ(counters.port(), 1u);
  EXPECT_EQ(counters.netdev(), "enp65s0f0np0");
  EXPECT_EQ(counters.read_unix_us(), absl::ToUnixMicros(kNow));
  EXPECT_EQ(counters.unknowns_size(), 0) << counters.DebugString();
  EXPECT_EQ(CountSource(counters, "counters"), 21);
  EXPECT_EQ(CountSource(counters, "hw_counters"), 29);  // lifespan is a setting, left out
  EXPECT_EQ(CountSource(counters, "ethtool"), 0);
  EXPECT_EQ(ValueOf(counters, "counters", "port_xmit_data"), 2418733902117u);
  EXPECT_EQ(ValueOf(counters, "counters", "port_rcv_packets"), 1252871914u);
  EXPECT_EQ(ValueOf(counters, "counters", "link_downed"), 0u);
  EXPECT_EQ(ValueOf(counters, "counters", "symbol_error"), 0u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "np_cnp_sent"), 1520u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "rp_cnp_handled"), 1498u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "np_ecn_marked_roce_packets"), 1520u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "out_of_sequence"), 0u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "lifespan"), std::nullopt);
}

TEST(PortCounterReaderTest, RoceBrokenShowsThePlantedFlapOnMlx5_0Only) {
  v1::PortCounters broken = ReadFixture("roce-broken", "mlx5_0");
  EXPECT_EQ(broken.unknowns_size(), 0);
  EXPECT_EQ(ValueOf(broken, "counters", "link_downed"), 3u);
  EXPECT_EQ(ValueOf(broken, "counters", "symbol_error"), 57u);
  v1::PortCounters other = ReadFixture("roce-broken", "mlx5_1");
  EXPECT_EQ(ValueOf(other, "counters", "link_downed"), 0u);
  EXPECT_EQ(ValueOf(other, "counters", "symbol_error"), 0u);
  EXPECT_EQ(ValueOf(other, "counters", "port_xmit_data"), 1873260044409u);
  EXPECT_EQ(ValueOf(other, "hw_counters", "np_cnp_sent"), 884u);
}

TEST(PortCounterReaderTest, InfiniBandPortHasCountersButNoHwCounters) {
  v1::PortCounters counters = ReadFixture("ib-hdr-healthy", "mlx5_0");
  EXPECT_EQ(counters.unknowns_size(), 0);
  EXPECT_EQ(CountSource(counters, "counters"), 21);
  EXPECT_EQ(CountSource(counters, "hw_counters"), 0);
  EXPECT_EQ(ValueOf(counters, "counters", "port_xmit_wait"), 184213u);
  EXPECT_EQ(ValueOf(counters, "counters", "port_xmit_data"), 8723419817331u);
  EXPECT_EQ(ValueOf(counters, "counters", "VL15_dropped"), 0u);
}

TEST(PortCounterReaderTest, ANetdevGivesItsCarrierChangesFromSysfs) {
  v1::PortCounters counters = ReadFixture("roce-healthy", "mlx5_0", "enp65s0f0np0");
  EXPECT_EQ(ValueOf(counters, "sysfs", "carrier_changes"), 2u);
  EXPECT_EQ(CountSource(counters, "sysfs"), 1);
  // Without a netdev there is no carrier to read.
  EXPECT_EQ(CountSource(ReadFixture("roce-healthy", "mlx5_0"), "sysfs"), 0);
}

TEST(PortCounterReaderTest, APlainNetdevWithoutADeviceGivesItsCarrierChanges) {
  // The tcp engine over a veth, a rail on fabric.type ethernet: no RDMA
  // device, no ethtool statistics (veth has none worth keeping).
  SysfsView view(FixtureRoot("rxe-vm"));
  FakeEthtool ethtool;
  ethtool.result = absl::UnimplementedError("eth0: the driver has no ethtool statistics");
  v1::PortCounters counters = ReadOk(view, &ethtool, "", 0, "eth0");
  EXPECT_EQ(ValueOf(counters, "sysfs", "carrier_changes"), 1u);
  EXPECT_EQ(CountSource(counters, "counters"), 0);
  ASSERT_EQ(counters.unknowns_size(), 1);  // the ethtool half only
  EXPECT_EQ(counters.unknowns(0).field(), "ethtool");
}

TEST(PortCounterReaderTest, AMissingOrGarbledCarrierCountIsUnknownNeverZero) {
  TempSysfsTree tree("roce-healthy");
  const std::string path = "/sys/class/net/enp65s0f0np0/carrier_changes";
  SysfsView view(tree.root().string());
  tree.Write(path, "many\n");
  v1::PortCounters garbled = ReadOk(view, nullptr, "mlx5_0", 1, "enp65s0f0np0");
  EXPECT_FALSE(ValueOf(garbled, "sysfs", "carrier_changes").has_value());
  const v1::Unknown* unknown = FindUnknown(garbled.unknowns(), "sysfs/carrier_changes");
  ASSERT_NE(unknown, nullptr) << garbled.DebugString();
  EXPECT_THAT(unknown->reason(), HasSubstr("not a decimal counter"));
  EXPECT_EQ(unknown->path(), path);

  tree.Remove(path);
  v1::PortCounters missing = ReadOk(view, nullptr, "mlx5_0", 1, "enp65s0f0np0");
  EXPECT_FALSE(ValueOf(missing, "sysfs", "carrier_changes").has_value());
  EXPECT_NE(FindUnknown(missing.unknowns(), "sysfs/carrier_changes"), nullptr)
      << missing.DebugString();
}

TEST(PortCounterReaderTest, RxeHasOnlyHwCountersFromTheSample) {
  v1::PortCounters counters = ReadFixture("rxe-vm", "rxe0", "eth0");
  EXPECT_EQ(counters.unknowns_size(), 0);
  EXPECT_EQ(CountSource(counters, "counters"), 0);
  EXPECT_EQ(CountSource(counters, "hw_counters"), 15);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "rcvd_pkts"), 0u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "rcvd_seq_err"), 0u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "retry_exceeded_err"), 0u);
  EXPECT_EQ(ValueOf(counters, "hw_counters", "link_downed"), 0u);
}

TEST(PortCounterReaderTest, MissingDeviceOrPortIsAnErrorNamingWhatTheHostHas) {
  SysfsView no_rdma(FixtureRoot("no-rdma"));
  absl::StatusOr<v1::PortCounters> none = PortCounterReader(no_rdma, nullptr).Read("mlx5_0", 1, "");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound) << none.status();
  EXPECT_THAT(none.status().message(), AllOf(HasSubstr("device mlx5_0 is not in "
                                                       "/sys/class/infiniband"),
                                             HasSubstr("(none)")));
  SysfsView view(FixtureRoot("roce-healthy"));
  PortCounterReader reader(view, nullptr, FixedNow);
  absl::StatusOr<v1::PortCounters> port2 = reader.Read("mlx5_0", 2, "");
  EXPECT_EQ(port2.status().code(), absl::StatusCode::kNotFound) << port2.status();
  EXPECT_THAT(port2.status().message(), HasSubstr("mlx5_0 has no port 2"));
  EXPECT_THAT(port2.status().message(), HasSubstr("(1)"));
  absl::StatusOr<v1::PortCounters> other = reader.Read("mlx5_9", 1, "");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(other.status().message(), HasSubstr("(mlx5_0, mlx5_1)"));
}

TEST(PortCounterReaderTest, GarbledTruncatedAndUnreadableFilesAreUnknowns) {
  TempSysfsTree tree("roce-healthy");
  const std::string counters = std::string(kPort) + "/counters/";
  const std::string hw = std::string(kPort) + "/hw_counters/";
  tree.Write(counters + "symbol_error", "lots\n");
  tree.Write(counters + "link_downed", "");
  tree.Write(counters + "port_rcv_errors", "-1\n");
  tree.Write(counters + "port_xmit_discards", "12 34\n");
  tree.Write(hw + "np_cnp_sent", "99999999999999999999999\n");
  tree.Write(hw + "out_of_sequence", "7");  // no trailing newline is still a counter
  std::filesystem::create_directory(tree.root() / "sys/class/infiniband/mlx5_0/ports/1" /
                                    "hw_counters" / "not_a_file");
  SysfsView view(tree.root());
  v1::PortCounters read = ReadOk(view, nullptr, "mlx5_0", 1, "");

  EXPECT_EQ(read.unknowns_size(), 6) << read.DebugString();
  struct Expect {
    const char* field;
    const char* reason_prefix;
  };
  for (const Expect& e : {Expect{"counters/symbol_error", "unparsable: 'lots'"},
                          Expect{"counters/link_downed", "unparsable: ''"},
                          Expect{"counters/port_rcv_errors", "unparsable: '-1'"},
                          Expect{"counters/port_xmit_discards", "unparsable: '12 34'"},
                          Expect{"hw_counters/np_cnp_sent", "unparsable: '9999"}}) {
    const v1::Unknown* unknown = FindUnknown(read.unknowns(), e.field);
    ASSERT_NE(unknown, nullptr) << e.field;
    EXPECT_EQ(unknown->reason().rfind(e.reason_prefix, 0), 0u) << unknown->reason();
  }
  const v1::Unknown* dir = FindUnknown(read.unknowns(), "hw_counters/not_a_file");
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ(dir->path(), std::string(kPort) + "/hw_counters/not_a_file");
  EXPECT_FALSE(dir->reason().empty());
  // Neighbours are untouched.
  EXPECT_EQ(ValueOf(read, "counters", "symbol_error"), std::nullopt);
  EXPECT_EQ(ValueOf(read, "hw_counters", "out_of_sequence"), 7u);
  EXPECT_EQ(ValueOf(read, "counters", "port_xmit_data"), 2418733902117u);
  EXPECT_EQ(CountSource(read, "counters"), 17);
}

TEST(PortCounterReaderTest, MissingCounterDirectoryIsSimplyAbsent) {
  TempSysfsTree tree("roce-healthy");
  std::filesystem::remove_all(tree.root() / "sys/class/infiniband/mlx5_0/ports/1/hw_counters");
  SysfsView view(tree.root());
  v1::PortCounters read = ReadOk(view, nullptr, "mlx5_0", 1, "");
  EXPECT_EQ(read.unknowns_size(), 0);
  EXPECT_EQ(CountSource(read, "hw_counters"), 0);
  EXPECT_EQ(CountSource(read, "counters"), 21);
}

TEST(PortCounterReaderTest, EthtoolStatisticsJoinTheSysfsCounters) {
  FakeEthtool ethtool;
  ethtool.result = std::map<std::string, uint64_t>{
      {"rx_prio3_pause", 120}, {"tx_prio3_pause", 80}, {"rx_discards_phy", 0}};
  SysfsView view(FixtureRoot("roce-healthy"));
  v1::PortCounters read = ReadOk(view, &ethtool, "mlx5_0", 1, "enp65s0f0np0");
  EXPECT_EQ(ethtool.calls, 1);
  EXPECT_EQ(ethtool.last_netdev, "enp65s0f0np0");
  EXPECT_EQ(read.unknowns_size(), 0);
  EXPECT_EQ(CountSource(read, "ethtool"), 3);
  EXPECT_EQ(ValueOf(read, "ethtool", "rx_prio3_pause"), 120u);
  EXPECT_EQ(ValueOf(read, "ethtool", "tx_prio3_pause"), 80u);
}

TEST(PortCounterReaderTest, EthtoolFailureIsAnUnknownAndSysfsStillRead) {
  FakeEthtool ethtool;
  ethtool.result = absl::UnimplementedError("enp65s0f0np0: the driver has no ethtool statistics");
  SysfsView view(FixtureRoot("roce-healthy"));
  v1::PortCounters read = ReadOk(view, &ethtool, "mlx5_0", 1, "enp65s0f0np0");
  const v1::Unknown* unknown = FindUnknown(read.unknowns(), "ethtool");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->path(), "SIOCETHTOOL ETHTOOL_GSTATS enp65s0f0np0");
  EXPECT_NE(unknown->reason().find("no ethtool statistics"), std::string::npos);
  EXPECT_EQ(CountSource(read, "counters"), 21);
}

TEST(PortCounterReaderTest, NoNetdevMeansNoEthtoolCall) {
  FakeEthtool ethtool;
  SysfsView view(FixtureRoot("ib-hdr-healthy"));
  v1::PortCounters read = ReadOk(view, &ethtool, "mlx5_0", 1, "");
  EXPECT_EQ(ethtool.calls, 0);
  EXPECT_EQ(read.unknowns_size(), 0);
}

}  // namespace
}  // namespace clustercert::agent::peer
