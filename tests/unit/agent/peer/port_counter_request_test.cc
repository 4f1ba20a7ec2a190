// ReadPortCounters' device, port and netdev come from the network (issue
// 15): the path traversal seen against it, and every other malformed or
// unknown value, is refused with the value and what the host has, never a
// file's contents or another directory's listing.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/ethtool_stats_source.h"
#include "agent/peer/port_counters.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::peer {
namespace {

namespace fs = std::filesystem;
using inventory::testing::FixtureRoot;
using inventory::testing::TempSysfsTree;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSecret[] = "root:$6$secret-hash:19000:0:99999:7:::";

class CountingEthtool : public EthtoolStatsSource {
 public:
  absl::StatusOr<std::map<std::string, uint64_t>> Read(const std::string& netdev) override {
    ++calls;
    return std::map<std::string, uint64_t>{{"rx_discards_phy", 1}};
  }
  int calls = 0;
};

// A directory shaped like an RDMA device's, holding a secret where the
// counters would be: what the attack pointed `device` at.
class PlantedDevice {
 public:
  PlantedDevice() : dir_(fs::temp_directory_path() / absl::StrCat("planted_", ::getpid())) {
    fs::create_directories(dir_ / "ports/1/counters");
    fs::create_directories(dir_ / "ports/1/hw_counters");
    std::ofstream(dir_ / "ports/1/counters/symbol_error") << kSecret << "\n";
    std::ofstream(dir_ / "ports/1/hw_counters/planted_listing_name") << "1\n";
  }
  ~PlantedDevice() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

void ExpectNoContentsOrListing(const absl::Status& status) {
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              AllOf(Not(HasSubstr("secret-hash")), Not(HasSubstr("planted_listing_name")),
                    Not(HasSubstr("symbol_error"))));
}

TEST(PortCounterRequestTest, TraversalInTheDeviceIsRefusedOnTheLiveRoot) {
  // The attack: `--sysfs-root /` and device "../../../tmp/x" read the file
  // back in an error message and listed the directory as counters.
  PlantedDevice planted;
  SysfsView live("/");
  PortCounterReader reader(live, nullptr);
  const std::string device = absl::StrCat("../../..", planted.dir().string());
  absl::StatusOr<v1::PortCounters> read = reader.Read(device, 1, "");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << read.status();
  EXPECT_THAT(read.status().message(),
              AllOf(HasSubstr("is not an RDMA device name"), HasSubstr("give one this host has")));
  ExpectNoContentsOrListing(read.status());
}

TEST(PortCounterRequestTest, MalformedDevicesPortsAndNetdevsAreInvalidArgument) {
  SysfsView view(FixtureRoot("roce-healthy"));
  PortCounterReader reader(view, nullptr);
  for (const std::string& device :
       {std::string("."), std::string(".."), std::string("mlx5_0/../mlx5_1"),
        std::string("mlx5_0\n"), std::string(65, 'a'), std::string("mlx5 0"),
        std::string("/etc")}) {
    absl::StatusOr<v1::PortCounters> read = reader.Read(device, 1, "");
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << device;
    EXPECT_THAT(read.status().message(), HasSubstr("(mlx5_0, mlx5_1)")) << device;
    EXPECT_THAT(read.status().message(), Not(HasSubstr("\n"))) << device;
  }
  for (uint32_t port : {0u, 256u, 4000000000u}) {
    absl::StatusOr<v1::PortCounters> read = reader.Read("mlx5_0", port, "");
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << port;
    EXPECT_THAT(read.status().message(), AllOf(HasSubstr("outside 1..255"), HasSubstr("(1)")));
  }
  EXPECT_THAT(reader.Read("", 1, "").status().message(), HasSubstr("without a device"));
  for (const std::string& netdev :
       {std::string("../../etc"), std::string("eth0:1"), std::string("a b"), std::string(16, 'x'),
        std::string(".."), std::string("enp\x01")}) {
    absl::StatusOr<v1::PortCounters> read = reader.Read("mlx5_0", 1, netdev);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << netdev;
    EXPECT_THAT(read.status().message(),
                AllOf(HasSubstr("is not an interface name"), HasSubstr("enp65s0f0np0")));
  }
}

TEST(PortCounterRequestTest, WellFormedButAbsentValuesAreNotFoundNamingTheKnownOnes) {
  SysfsView view(FixtureRoot("roce-healthy"));
  PortCounterReader reader(view, nullptr);
  absl::StatusOr<v1::PortCounters> read = reader.Read("mlx5_0", 1, "eth9");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(),
              HasSubstr("netdev eth9 is not in /sys/class/net on this host: give one it has (eno1, "
                        "enp65s0f0np0, enp65s0f1np1, lo)"));
}

TEST(PortCounterRequestTest, NetdevOnlyReadAsksEthtoolAndTheCarrierCountAlone) {
  CountingEthtool ethtool;
  SysfsView view(FixtureRoot("roce-healthy"));
  absl::StatusOr<v1::PortCounters> read =
      PortCounterReader(view, &ethtool).Read("", 0, "enp65s0f0np0");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(ethtool.calls, 1);
  ASSERT_EQ(read->values_size(), 2) << read->DebugString();
  EXPECT_EQ(read->values(0).source(), "sysfs");
  EXPECT_EQ(read->values(0).name(), "carrier_changes");
  EXPECT_EQ(read->values(1).source(), "ethtool");
  EXPECT_EQ(read->unknowns_size(), 0);
}

TEST(PortCounterRequestTest, DeviceLinksLeavingACapturedTreeAreNotFollowed) {
  // A hostile capture names a device whose link leaves the root: absolutely,
  // or by climbing. The name is listed, so it passes the name checks; the
  // view refuses to follow it.
  PlantedDevice planted;
  TempSysfsTree tree("roce-healthy");
  const fs::path infiniband = tree.root() / "sys/class/infiniband";
  fs::create_directory_symlink(planted.dir(), infiniband / "evil_abs");
  fs::path climb;
  for (auto it = infiniband.begin(); it != infiniband.end(); ++it) {
    if (!it->empty() && *it != "/") climb /= "..";
  }
  fs::create_directory_symlink(climb / planted.dir().relative_path(), infiniband / "evil_rel");
  SysfsView view(tree.root());
  PortCounterReader reader(view, nullptr);
  for (const char* device : {"evil_abs", "evil_rel"}) {
    absl::StatusOr<v1::PortCounters> read = reader.Read(device, 1, "");
    EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound) << device << read.status();
    EXPECT_THAT(read.status().message(), HasSubstr(absl::StrCat(device, " has no port 1")));
    ExpectNoContentsOrListing(read.status());
  }
}

TEST(PortCounterRequestTest, GarbledCounterTextIsDescribedNotEchoedWhenItLooksLikeAnotherFile) {
  TempSysfsTree tree("roce-healthy");
  tree.Write("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error",
             absl::StrCat(kSecret, "\n"));
  SysfsView view(tree.root());
  absl::StatusOr<v1::PortCounters> read = PortCounterReader(view, nullptr).Read("mlx5_0", 1, "");
  ASSERT_TRUE(read.ok()) << read.status();
  const std::string dump = read->DebugString();
  EXPECT_THAT(dump, Not(HasSubstr("secret-hash")));
  EXPECT_THAT(dump, HasSubstr("unparsable: a 38-byte text is not a decimal counter"));
}

TEST(EthtoolNetdevNameTest, FollowsTheKernelsInterfaceNameRule) {
  EXPECT_TRUE(IsValidNetdevName("enp65s0f0np0"));
  EXPECT_TRUE(IsValidNetdevName("eth0.100"));
  EXPECT_TRUE(IsValidNetdevName(std::string(15, 'x')));
  for (const std::string& bad :
       {std::string(""), std::string("."), std::string(".."), std::string(16, 'x'),
        std::string("a/b"), std::string("eth0:1"), std::string("a b"), std::string("a\tb"),
        std::string("\xc3\xa9th0")}) {
    EXPECT_FALSE(IsValidNetdevName(bad)) << bad;
  }
  IoctlEthtoolStatsSource source;
  auto stats = source.Read("../../x");
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stats.status().message(), Not(HasSubstr("../../x")));
}

}  // namespace
}  // namespace clustercert::agent::peer
