#include "agent/inventory/nic_firmware_collector.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/sysfs_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::ElementsAre;
using testing::FixtureRoot;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Answers by program name (argv[0]); a program it does not know is NotFound,
// as process::ProcessCommandRunner reports a missing executable. Records every argv.
class FakeCommandRunner : public process::CommandRunner {
 public:
  explicit FakeCommandRunner(std::map<std::string, absl::StatusOr<process::CommandResult>> results)
      : results_(std::move(results)) {}
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration timeout) override {
    calls.push_back(argv);
    timeouts.push_back(timeout);
    auto it = results_.find(argv[0]);
    if (it == results_.end()) return absl::NotFoundError(argv[0] + ": No such file or directory");
    return it->second;
  }
  std::vector<std::vector<std::string>> calls;
  std::vector<absl::Duration> timeouts;

 private:
  std::map<std::string, absl::StatusOr<process::CommandResult>> results_;
};

std::string ReadFixture(const std::string& host, const std::string& relative) {
  std::ifstream in(FixtureRoot(host) / relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The captured ConnectX-7 queries: one "Next Boot" column (acs-clean) and
// "Default Current Next Boot" (acs-redirect).
std::string OldLayout() {
  return ReadFixture("acs-clean", "clustercert-capture/mstconfig/0000:19:00.0.txt");
}
std::string NewLayout() {
  return ReadFixture("acs-redirect", "clustercert-capture/mstconfig/0000:19:00.0.txt");
}

std::map<std::string, std::string> AsMap(const std::vector<v1::FirmwareSetting>& settings) {
  std::map<std::string, std::string> map;
  for (const auto& setting : settings) map[setting.name()] = setting.value();
  return map;
}

std::map<std::string, std::string> AsMap(const v1::NicFirmwareConfig& config) {
  return AsMap(
      std::vector<v1::FirmwareSetting>(config.settings().begin(), config.settings().end()));
}

v1::RdmaDevice Device(const std::string& name, const std::string& pci) {
  v1::RdmaDevice device;
  device.set_name(name);
  device.set_pci_address(pci);
  return device;
}

TEST(IsPciAddressArgumentTest, OnlyCanonicalAddresses) {
  EXPECT_TRUE(IsPciAddressArgument("0000:19:00.0"));
  EXPECT_TRUE(IsPciAddressArgument("0001:c1:1f.7"));
  EXPECT_FALSE(IsPciAddressArgument("0000:19:00.8"));
  EXPECT_FALSE(IsPciAddressArgument("0000:C1:00.0"));
  EXPECT_FALSE(IsPciAddressArgument("19:00.0"));
  EXPECT_FALSE(IsPciAddressArgument("0000:19:00.0 "));
  EXPECT_FALSE(IsPciAddressArgument("0000:19:00.0;rm"));
  EXPECT_FALSE(IsPciAddressArgument("-0000:19:00"));
  EXPECT_FALSE(IsPciAddressArgument(""));
}

TEST(ParseMstconfigQueryTest, OldLayoutOneColumn) {
  auto settings = ParseMstconfigQuery(OldLayout());
  ASSERT_TRUE(settings.ok()) << settings.status();
  // Only the kept settings, in the printed order, '*' marker ignored.
  std::vector<std::string> names;
  for (const auto& setting : *settings) names.push_back(setting.name());
  EXPECT_THAT(names, ElementsAre("NUM_OF_VFS", "SRIOV_EN", "LINK_TYPE_P1", "ROCE_CONTROL",
                                 "PCI_WR_ORDERING", "ATS_ENABLED", "ADVANCED_PCI_SETTINGS"));
  auto map = AsMap(*settings);
  EXPECT_EQ(map["LINK_TYPE_P1"], "ETH(2)");  // a '*' row: changed from the IB default
  EXPECT_EQ(map["ATS_ENABLED"], "False(0)");
  EXPECT_EQ(map["NUM_OF_VFS"], "0");
}

TEST(ParseMstconfigQueryTest, NewLayoutTakesTheCurrentColumn) {
  auto settings = ParseMstconfigQuery(NewLayout());
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(AsMap(*settings)["LINK_TYPE_P1"], "IB(1)");
  // Default, Current and Next Boot differ: the current value is the one running.
  auto changed = ParseMstconfigQuery(
      "Device #1:\n----------\n\nDevice type:        ConnectX7\nDevice:             19:00.0\n\n"
      "Configurations:                                          Default             Current"
      "             Next Boot\n"
      "*        LINK_TYPE_P1                                IB(1)                ETH(2)          "
      "     IB(1)\n"
      "         ATS_ENABLED                                 False(0)             False(0)        "
      "     True(1)\n");
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(AsMap(*changed)["LINK_TYPE_P1"], "ETH(2)");
  EXPECT_EQ(AsMap(*changed)["ATS_ENABLED"], "False(0)");
}

TEST(ParseMstconfigQueryTest, TheTableEndsAtTheFirstUnindentedLine) {
  auto settings = ParseMstconfigQuery(
      "Configurations:                                          Next Boot\n"
      "        LINK_TYPE_P1                                ETH(2)\n"
      "-I- Please reboot machine to load new configurations.\n"
      "        LINK_TYPE_P2                                IB(1)\n");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_THAT(AsMap(*settings), ::testing::SizeIs(1));
}

TEST(ParseMstconfigQueryTest, GarbageIsAnError) {
  EXPECT_FALSE(ParseMstconfigQuery("").ok());
  EXPECT_FALSE(ParseMstconfigQuery("-E- Failed to open the device\n").ok());
  EXPECT_FALSE(ParseMstconfigQuery(std::string(300000, 'x')).ok());
  auto empty_table = ParseMstconfigQuery("Configurations:      Next Boot\n\n");
  EXPECT_FALSE(empty_table.ok());
  EXPECT_THAT(empty_table.status().message(), HasSubstr("no row"));
  // Rows whose value count does not match the columns are skipped, not guessed.
  auto misaligned = ParseMstconfigQuery(
      "Configurations:     Default     Current     Next Boot\n"
      "        LINK_TYPE_P1     ETH(2)\n"
      "        SRIOV_EN     False(0)     False(0)     False(0)\n");
  ASSERT_TRUE(misaligned.ok()) << misaligned.status();
  EXPECT_THAT(AsMap(*misaligned), ElementsAre(::testing::Pair("SRIOV_EN", "False(0)")));
  // Non-printable values are not kept.
  auto binary = ParseMstconfigQuery(
      std::string("Configurations:  Next Boot\n        LINK_TYPE_P1  ") + "E\x01H\n");
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_THAT(*binary, IsEmpty());
}

TEST(NicFirmwareCollectorTest, LiveRunsMstconfigOncePerCard) {
  SysfsView live("/");
  FakeCommandRunner runner({{"mstconfig", process::CommandResult{0, NewLayout(), ""}}});
  std::vector<v1::NicFirmwareConfig> configs =
      NicFirmwareCollector(live, runner)
          .Collect({Device("mlx5_0", "0000:41:00.0"), Device("mlx5_1", "0000:41:00.1"),
                    Device("rxe0", "")});
  ASSERT_EQ(configs.size(), 2u);  // rxe0 has no PCI function
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_THAT(runner.calls[0], ElementsAre("mstconfig", "-d", "0000:41:00.0", "q"));
  EXPECT_EQ(runner.timeouts[0], NicFirmwareCollector::kQueryTimeout);
  for (const auto& config : configs) {
    EXPECT_EQ(config.tool(), "mstconfig");
    EXPECT_TRUE(config.error().empty()) << config.error();
    EXPECT_EQ(AsMap(config)["LINK_TYPE_P1"], "IB(1)");
  }
  EXPECT_EQ(configs[1].device(), "mlx5_1");
  EXPECT_EQ(configs[1].pci_address(), "0000:41:00.1");
}

TEST(NicFirmwareCollectorTest, FallsBackToMlxconfig) {
  SysfsView live("/");
  FakeCommandRunner runner({{"mlxconfig", process::CommandResult{0, OldLayout(), ""}}});
  auto configs = NicFirmwareCollector(live, runner).Collect({Device("mlx5_0", "0000:19:00.0")});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].tool(), "mlxconfig");
  EXPECT_EQ(AsMap(configs[0])["LINK_TYPE_P1"], "ETH(2)");
  EXPECT_THAT(runner.calls, ElementsAre(ElementsAre("mstconfig", "-d", "0000:19:00.0", "q"),
                                        ElementsAre("mlxconfig", "-d", "0000:19:00.0", "q")));
}

TEST(NicFirmwareCollectorTest, ToolAbsentSaysHowToInstallAndStopsAsking) {
  SysfsView live("/");
  FakeCommandRunner runner({});
  auto configs = NicFirmwareCollector(live, runner)
                     .Collect({Device("mlx5_0", "0000:19:00.0"), Device("mlx5_1", "0000:29:00.0")});
  ASSERT_EQ(configs.size(), 2u);
  for (const auto& config : configs) {
    EXPECT_EQ(config.error(), "mstconfig not installed: apt-get install mstflint");
    EXPECT_THAT(config.settings(), IsEmpty());
  }
  EXPECT_EQ(runner.calls.size(), 2u);  // mstconfig and mlxconfig once, not per NIC
}

TEST(NicFirmwareCollectorTest, FailuresAreErrorsWithTheToolsWords) {
  SysfsView live("/");
  FakeCommandRunner failing(
      {{"mstconfig", process::CommandResult{3, "",
                                            "-E- Failed to open device: 0000:19:00.0. Permission "
                                            "denied\n"}}});
  auto configs = NicFirmwareCollector(live, failing).Collect({Device("mlx5_0", "0000:19:00.0")});
  EXPECT_THAT(configs[0].error(), HasSubstr("exited with status 3"));
  EXPECT_THAT(configs[0].error(), HasSubstr("Permission denied"));

  FakeCommandRunner unclear(
      {{"mstconfig", process::CommandResult{3, "", "-E- Unsupported device\n"}}});
  configs = NicFirmwareCollector(live, unclear).Collect({Device("mlx5_0", "0000:19:00.0")});
  EXPECT_THAT(configs[0].error(), HasSubstr("Unsupported device"));
  EXPECT_THAT(configs[0].error(), Not(HasSubstr("needs root"))) << "only a refusal is blamed on it";

  FakeCommandRunner garbage({{"mstconfig", process::CommandResult{0, "\x7f\x45LF garbage", ""}}});
  configs = NicFirmwareCollector(live, garbage).Collect({Device("mlx5_0", "0000:19:00.0")});
  EXPECT_THAT(configs[0].error(), HasSubstr("unparsable"));

  FakeCommandRunner hung({{"mstconfig", absl::DeadlineExceededError("did not finish within 20s")}});
  configs = NicFirmwareCollector(live, hung)
                .Collect({Device("mlx5_0", "0000:19:00.0"), Device("mlx5_1", "0000:29:00.0")});
  EXPECT_THAT(configs[0].error(), HasSubstr("did not finish"));
  EXPECT_THAT(configs[1].error(), HasSubstr("not queried: mstconfig timed out on 0000:19:00.0"));
  EXPECT_EQ(hung.calls.size(), 1u);
}

// The hardened unit: the agent is not root and /sys is read-only, so the
// tool is refused on the first NIC; the error names the privilege the unit
// withholds and the fix, and the other cards are not asked again.
TEST(NicFirmwareCollectorTest, RefusedByTheUnitNamesWhatIsWithheldAndAsksOnce) {
  SysfsView live("/");
  FakeCommandRunner refused(
      {{"mstconfig", process::CommandResult{3, "",
                                            "-E- Failed to open device: 0000:19:00.0. Permission "
                                            "denied\n"}}});
  auto configs = NicFirmwareCollector(live, refused)
                     .Collect({Device("mlx5_0", "0000:19:00.0"), Device("mlx5_1", "0000:29:00.0")});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_THAT(configs[0].error(), HasSubstr("mstconfig -d 0000:19:00.0 q exited with status 3"));
  EXPECT_THAT(configs[0].error(), HasSubstr("needs root to open the NIC's configuration gateway"));
  EXPECT_THAT(configs[0].error(), HasSubstr("deploy/clustercert-agent.service"));
  EXPECT_THAT(configs[0].error(), HasSubstr("`node-agent --capture DIR` as root"));
  EXPECT_THAT(configs[1].error(), HasSubstr("not queried, since 0000:19:00.0 was refused"));
  EXPECT_THAT(configs[1].error(), HasSubstr("`node-agent --capture DIR` as root"));
  EXPECT_THAT(configs[1].settings(), IsEmpty());
  EXPECT_EQ(refused.calls.size(), 1u);

  FakeCommandRunner read_only_sys(
      {{"mstconfig",
        process::CommandResult{1, "-E- Failed to open device: Read-only file system\n", ""}}});
  configs = NicFirmwareCollector(live, read_only_sys).Collect({Device("mlx5_0", "0000:19:00.0")});
  EXPECT_THAT(configs[0].error(), HasSubstr("needs root"));
}

TEST(NicFirmwareCollectorTest, HostileAddressNeverReachesTheCommandLine) {
  SysfsView live("/");
  FakeCommandRunner runner({{"mstconfig", process::CommandResult{0, OldLayout(), ""}}});
  auto configs =
      NicFirmwareCollector(live, runner).Collect({Device("mlx5_0", "0000:19:00.0 --help")});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_THAT(configs[0].error(), HasSubstr("not passed to mstconfig"));
  EXPECT_TRUE(runner.calls.empty());
}

TEST(NicFirmwareCollectorTest, CaptureIsReadNotRun) {
  SysfsView view(FixtureRoot("acs-redirect"));
  FakeCommandRunner runner({});
  auto configs = NicFirmwareCollector(view, runner).Collect({Device("mlx5_0", "0000:19:00.0")});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].tool(), "capture");
  EXPECT_EQ(AsMap(configs[0])["LINK_TYPE_P1"], "IB(1)");
  EXPECT_TRUE(runner.calls.empty());
}

TEST(NicFirmwareCollectorTest, CaptureWithoutTheFileExplains) {
  SysfsView view(FixtureRoot("acs-nonroot"));
  FakeCommandRunner runner({});
  auto configs = NicFirmwareCollector(view, runner).Collect({Device("mlx5_0", "0000:19:00.0")});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_THAT(configs[0].error(), HasSubstr("/clustercert-capture/mstconfig/0000:19:00.0.txt"));
  EXPECT_THAT(configs[0].error(), HasSubstr("apt-get install mstflint"));
}

}  // namespace
}  // namespace clustercert::agent::inventory
