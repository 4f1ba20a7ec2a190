#include "agent/inventory/pcie_acs_collector.h"

#include <string>
#include <vector>

#include "agent/inventory/pci_collector.h"
#include "agent/inventory/pci_topology.h"
#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::ElementsAre;
using testing::FindUnknown;
using testing::FixtureRoot;
using ::testing::HasSubstr;
using ::testing::Not;

// The acs-* hosts (tests/fixtures/sysfs/make_acs_fixtures.py): root port
// 15:01.0, switch 16:00.0 (upstream) / 17:0x.0 (downstream), gpu0 18:00.0,
// mlx5_0 19:00.0, gpu1 1a:00.0.
constexpr char kUpstream[] = "0000:16:00.0";
constexpr char kGpu0Port[] = "0000:17:00.0";
constexpr char kNicPort[] = "0000:17:01.0";
constexpr char kGpu1Port[] = "0000:17:02.0";

struct Collected {
  std::vector<v1::PcieBridge> bridges;
  std::vector<v1::Unknown> unknowns;
};

Collected CollectFrom(const SysfsView& view) {
  v1::RdmaDevice nic;
  nic.set_name("mlx5_0");
  nic.set_pci_address("0000:19:00.0");
  auto functions = PciCollector(view).Collect({nic});
  EXPECT_TRUE(functions.ok()) << functions.status();
  std::vector<v1::PciFunction> list = functions.ok() ? *functions : std::vector<v1::PciFunction>{};
  std::vector<v1::GpuNicPath> paths = BuildGpuNicPaths(list, nullptr);
  EXPECT_EQ(paths.size(), 2u);
  Collected collected;
  collected.bridges = PcieAcsCollector(view).Collect(list, paths, &collected.unknowns);
  return collected;
}

Collected CollectFixture(const std::string& name) {
  SysfsView view(FixtureRoot(name));
  return CollectFrom(view);
}

const v1::PcieBridge* Find(const std::vector<v1::PcieBridge>& bridges, const std::string& address) {
  for (const auto& bridge : bridges) {
    if (bridge.address() == address) return &bridge;
  }
  return nullptr;
}

// A 4096-byte config space with extended capabilities at the given offsets:
// {offset, header word} pairs, written little-endian, and `acs_control` at
// the ACS capability's +6 when one of them is ACS.
std::string ConfigWith(const std::vector<std::pair<uint32_t, uint32_t>>& headers,
                       uint16_t acs_control = 0) {
  std::string config(kPciConfigSpaceBytes, '\0');
  for (const auto& [offset, header] : headers) {
    for (int i = 0; i < 4; ++i) config[offset + i] = static_cast<char>((header >> (8 * i)) & 0xff);
    if ((header & 0xffff) == kExtCapAcs && offset + 8 <= config.size()) {
      config[offset + 4] = 0x5f;
      config[offset + 6] = static_cast<char>(acs_control & 0xff);
      config[offset + 7] = static_cast<char>(acs_control >> 8);
    }
  }
  return config;
}

uint32_t Header(uint16_t id, uint32_t next) { return id | (1u << 16) | (next << 20); }

TEST(PcieAcsCollectorTest, SwitchPortsBetweenGpuAndNicAreListedOnceWithTheirPairs) {
  Collected collected = CollectFixture("acs-clean");
  ASSERT_EQ(collected.bridges.size(), 4u);
  // In path order from gpu0: its downstream port, the upstream port where the
  // chains meet, the NIC's downstream port; then gpu1's port. The root port
  // 15:01.0 is above the meeting point and not on the path.
  EXPECT_EQ(collected.bridges[0].address(), kGpu0Port);
  EXPECT_EQ(collected.bridges[1].address(), kUpstream);
  EXPECT_EQ(collected.bridges[2].address(), kNicPort);
  EXPECT_EQ(collected.bridges[3].address(), kGpu1Port);
  EXPECT_EQ(Find(collected.bridges, "0000:15:01.0"), nullptr);
  EXPECT_THAT(Find(collected.bridges, kNicPort)->between(),
              ElementsAre("gpu0<->mlx5_0", "gpu1<->mlx5_0"));
  EXPECT_THAT(Find(collected.bridges, kGpu0Port)->between(), ElementsAre("gpu0<->mlx5_0"));
  EXPECT_EQ(Find(collected.bridges, kNicPort)->sysfs_path(),
            "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0");
  EXPECT_TRUE(collected.unknowns.empty());
}

TEST(PcieAcsCollectorTest, AcsCapableButOffIsNoRedirect) {
  Collected collected = CollectFixture("acs-clean");
  const v1::PcieBridge* port = Find(collected.bridges, kNicPort);
  ASSERT_NE(port, nullptr);
  EXPECT_TRUE(port->acs_capable());
  ASSERT_TRUE(port->has_acs_control());
  EXPECT_EQ(port->acs_control(), 0u);
  EXPECT_FALSE(port->p2p_redirect());
  EXPECT_THAT(port->source(), HasSubstr("config space (4096 bytes): ACS at 0x144"));
  EXPECT_TRUE(port->unknowns().empty());
  // The switch's upstream port has no ACS capability: nothing to redirect.
  const v1::PcieBridge* upstream = Find(collected.bridges, kUpstream);
  EXPECT_FALSE(upstream->acs_capable());
  EXPECT_FALSE(upstream->has_acs_control());
  EXPECT_FALSE(upstream->p2p_redirect());
  EXPECT_THAT(upstream->source(), HasSubstr("no ACS capability"));
  EXPECT_TRUE(upstream->unknowns().empty());
}

TEST(PcieAcsCollectorTest, RequestAndCompletionRedirectOnADownstreamPortIsRedirect) {
  Collected collected = CollectFixture("acs-redirect");
  const v1::PcieBridge* port = Find(collected.bridges, kNicPort);
  ASSERT_NE(port, nullptr);
  EXPECT_TRUE(port->acs_capable());
  EXPECT_EQ(port->acs_control(), 0x001du);  // SV RR CR UF: Linux's default with an IOMMU
  EXPECT_TRUE(port->p2p_redirect());
  EXPECT_THAT(port->source(), HasSubstr("SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ "
                                        "EgressCtrl- DirectTrans-"));
  EXPECT_FALSE(Find(collected.bridges, kUpstream)->p2p_redirect());
}

// What the hardened unit's user sees without CAP_SYS_ADMIN: 64 bytes.
TEST(PcieAcsCollectorTest, ShortConfigSpaceIsUnknownNamingTheCapability) {
  Collected collected = CollectFixture("acs-nonroot");
  ASSERT_EQ(collected.bridges.size(), 4u);
  for (const auto& bridge : collected.bridges) {
    EXPECT_FALSE(bridge.acs_capable()) << bridge.address();
    EXPECT_FALSE(bridge.has_acs_control()) << bridge.address();
    EXPECT_FALSE(bridge.p2p_redirect()) << bridge.address();
    const v1::Unknown* unknown = FindUnknown(bridge.unknowns(), "acs_control");
    ASSERT_NE(unknown, nullptr) << bridge.address();
    EXPECT_THAT(unknown->reason(), HasSubstr("only 64 bytes"));
    EXPECT_THAT(unknown->reason(), HasSubstr("only to a reader with CAP_SYS_ADMIN"));
    EXPECT_THAT(unknown->reason(), HasSubstr("AmbientCapabilities=CAP_SYS_ADMIN"));
    EXPECT_THAT(unknown->reason(), HasSubstr("`node-agent --capture DIR` as root"));
    EXPECT_THAT(bridge.source(), HasSubstr("CAP_SYS_ADMIN"));
    EXPECT_EQ(unknown->path(), "/sys/bus/pci/devices/" + bridge.address() + "/config");
  }
}

TEST(PcieAcsCollectorTest, MissingOrOversizedConfigIsUnknownNotACrash) {
  testing::TempSysfsTree tree("acs-redirect");
  tree.Remove("/sys/bus/pci/devices/0000:17:00.0/config");
  tree.Write("/sys/bus/pci/devices/0000:17:01.0/config", std::string(5000, 'x'));
  SysfsView view(tree.root());
  Collected collected = CollectFrom(view);
  const v1::PcieBridge* missing = Find(collected.bridges, kGpu0Port);
  ASSERT_NE(FindUnknown(missing->unknowns(), "acs_control"), nullptr);
  EXPECT_THAT(missing->source(), HasSubstr("not read"));
  const v1::PcieBridge* oversized = Find(collected.bridges, kNicPort);
  ASSERT_NE(FindUnknown(oversized->unknowns(), "acs_control"), nullptr);
  EXPECT_THAT(FindUnknown(oversized->unknowns(), "acs_control")->reason(),
              HasSubstr("more than 4096 bytes"));
  EXPECT_FALSE(oversized->p2p_redirect());
}

TEST(PcieAcsCollectorTest, PairWithoutPathIsExplained) {
  v1::PciFunction gpu;
  gpu.set_role("gpu");
  gpu.set_name("gpu0");
  gpu.set_address("0000:18:00.0");
  gpu.set_sysfs_path("/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
  v1::PciFunction nic;
  nic.set_role("nic");
  nic.set_name("mlx5_0");
  nic.set_address("0000:19:00.0");  // no sysfs path: it could not be resolved
  v1::GpuNicPath path;
  path.set_gpu("gpu0");
  path.set_gpu_pci("0000:18:00.0");
  path.set_nic("mlx5_0");
  path.set_nic_pci("0000:19:00.0");
  SysfsView view(FixtureRoot("acs-clean"));
  std::vector<v1::Unknown> unknowns;
  EXPECT_TRUE(PcieAcsCollector(view).Collect({gpu, nic}, {path}, &unknowns).empty());
  ASSERT_EQ(unknowns.size(), 1u);
  EXPECT_EQ(unknowns[0].field(), "pcie_bridges[gpu0<->mlx5_0]");
}

TEST(ParseAcsTest, FindsAcsAfterOtherCapabilities) {
  auto acs = ParseAcs(ConfigWith({{0x100, Header(0x0001, 0x148)}, {0x148, Header(0x000D, 0)}},
                                 kAcsRequestRedirect | kAcsCompletionRedirect));
  ASSERT_TRUE(acs.ok()) << acs.status();
  EXPECT_TRUE(acs->capable);
  EXPECT_EQ(acs->offset, 0x148u);
  EXPECT_EQ(acs->capability, 0x5f);
  EXPECT_EQ(acs->control, 0x000c);
}

TEST(ParseAcsTest, NoExtendedCapabilitiesIsNotCapable) {
  auto acs = ParseAcs(std::string(kPciConfigSpaceBytes, '\0'));
  ASSERT_TRUE(acs.ok()) << acs.status();
  EXPECT_FALSE(acs->capable);
  // A chain that ends without ACS.
  acs = ParseAcs(ConfigWith({{0x100, Header(0x0001, 0x148)}, {0x148, Header(0x0019, 0)}}));
  ASSERT_TRUE(acs.ok()) << acs.status();
  EXPECT_FALSE(acs->capable);
}

TEST(ParseAcsTest, ReservedLowOffsetBitsAreMasked) {
  // 0x14a: the two low bits are reserved and software masks them (-> 0x148).
  auto acs = ParseAcs(ConfigWith({{0x100, Header(0x0001, 0x14a)}, {0x148, Header(0x000D, 0)}}));
  ASSERT_TRUE(acs.ok()) << acs.status();
  EXPECT_TRUE(acs->capable);
}

TEST(ParseAcsTest, BrokenChainsAreErrorsNotCrashes) {
  // A loop: 0x100 -> 0x148 -> 0x100.
  auto loop =
      ParseAcs(ConfigWith({{0x100, Header(0x0001, 0x148)}, {0x148, Header(0x0002, 0x100)}}));
  EXPECT_FALSE(loop.ok());
  EXPECT_THAT(loop.status().message(), HasSubstr("loops"));
  // A self-loop.
  EXPECT_FALSE(ParseAcs(ConfigWith({{0x100, Header(0x0001, 0x100)}})).ok());
  // An offset below the extended space.
  auto low = ParseAcs(ConfigWith({{0x100, Header(0x0001, 0x040)}}));
  EXPECT_FALSE(low.ok());
  EXPECT_THAT(low.status().message(), HasSubstr("0x040"));
  // All ones: the function did not answer.
  auto ones = ParseAcs(ConfigWith({{0x100, 0xffffffffu}}));
  EXPECT_FALSE(ones.ok());
  EXPECT_THAT(ones.status().message(), HasSubstr("all ones"));
  // ACS whose registers would run past the end.
  EXPECT_FALSE(
      ParseAcs(ConfigWith({{0x100, Header(0x0001, 0xffc)}, {0xffc, Header(0x000D, 0)}})).ok());
}

TEST(ParseAcsTest, ChainLongerThanSixtyFourEntriesStops) {
  std::vector<std::pair<uint32_t, uint32_t>> headers;
  for (uint32_t offset = 0x100; offset < 0x100 + 70 * 8; offset += 8) {
    headers.push_back({offset, Header(0x0019, offset + 8)});
  }
  auto acs = ParseAcs(ConfigWith(headers));
  EXPECT_FALSE(acs.ok());
  EXPECT_THAT(acs.status().message(), HasSubstr("more than 64"));
}

TEST(ParseAcsTest, SizesOtherThan4096) {
  auto unprivileged = ParseAcs(std::string(64, '\0'));
  EXPECT_TRUE(absl::IsFailedPrecondition(unprivileged.status()));
  EXPECT_THAT(unprivileged.status().message(), HasSubstr("CAP_SYS_ADMIN, and this agent does not"));
  auto cardbus = ParseAcs(std::string(128, '\0'));
  EXPECT_THAT(cardbus.status().message(), HasSubstr("CAP_SYS_ADMIN, and this agent does not"));
  // 256 bytes come only to a reader holding CAP_SYS_ADMIN: no privilege is
  // missing, the kernel cannot reach the extended space.
  auto conventional = ParseAcs(std::string(256, '\0'));
  EXPECT_TRUE(absl::IsFailedPrecondition(conventional.status()));
  EXPECT_THAT(conventional.status().message(), HasSubstr("only 256 bytes"));
  EXPECT_THAT(conventional.status().message(), HasSubstr("MMCONFIG/ECAM"));
  EXPECT_THAT(conventional.status().message(), Not(HasSubstr("does not hold it")));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseAcs(std::string(4097, '\0')).status()));
  EXPECT_FALSE(ParseAcs("").ok());
}

TEST(ParseAcsTest, GarbageNeverCrashes) {
  // Every byte pattern of a small alphabet at the header: a parse or an error.
  for (int seed = 0; seed < 256; ++seed) {
    std::string config(kPciConfigSpaceBytes, static_cast<char>(seed));
    auto acs = ParseAcs(config);
    if (acs.ok() && acs->capable) EXPECT_GE(acs->offset, 0x100u);
  }
}

TEST(AcsControlTextTest, MatchesLspci) {
  EXPECT_EQ(AcsControlText(0x001d),
            "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-");
  EXPECT_EQ(AcsControlText(0),
            "SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-");
}

}  // namespace
}  // namespace clustercert::agent::inventory
