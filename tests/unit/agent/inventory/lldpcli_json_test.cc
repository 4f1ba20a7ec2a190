// ParseLldpcliJson on lldpd 1.0.16's own output (tests/fixtures/lldp/), on
// a Cumulus host's json0 output (../shared/realworld/lldp/), on hostile
// text; LldpcliReader's argv and errors through a canned runner.
#include "agent/inventory/lldpcli_json.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/inventory/lldpcli_reader.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"
#include "tests/support/fake_command_runner.h"

namespace clustercert::agent::inventory {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << path;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Fixture(const std::string& name) {
  return ReadFile(fs::path(CLUSTERCERT_FIXTURES) / "lldp" / name);
}

LldpcliNeighbors Parsed(const std::string& text) {
  absl::StatusOr<LldpcliNeighbors> parsed = ParseLldpcliJson(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : LldpcliNeighbors();
}

TEST(LldpcliJsonTest, OneNeighbourIsAnObjectKeyedByTheNetdev) {
  const LldpcliNeighbors parsed = Parsed(Fixture("lldpcli-json-one-neighbor.json"));
  ASSERT_EQ(parsed.by_netdev.size(), 1u);
  const v1::LinkNeighbor& neighbor = parsed.by_netdev.at("cchost1");
  EXPECT_EQ(neighbor.switch_name(), "leaf1");
  EXPECT_EQ(neighbor.chassis_id(), "42:19:7e:cb:cd:02");
  EXPECT_EQ(neighbor.chassis_id_subtype(), "mac");
  EXPECT_EQ(neighbor.port_id(), "ccsw1");
  EXPECT_EQ(neighbor.port_id_subtype(), "ifname");
  EXPECT_EQ(neighbor.port(), "ccsw1");
  EXPECT_EQ(neighbor.ttl_s(), 4u);
  EXPECT_EQ(neighbor.source(), "lldpcli");
  EXPECT_TRUE(parsed.rejected.empty());
}

void ExpectTwoNeighbours(const LldpcliNeighbors& parsed) {
  ASSERT_EQ(parsed.by_netdev.size(), 2u);
  EXPECT_EQ(parsed.by_netdev.at("cchost1").port(), "ccsw1");
  const v1::LinkNeighbor& local = parsed.by_netdev.at("cchost2");
  EXPECT_EQ(local.switch_name(), "leaf1");
  EXPECT_EQ(local.port_id_subtype(), "local");
  EXPECT_EQ(local.port(), "Ethernet1/2");
  EXPECT_EQ(local.port_description(), "node1 mlx5_1");
  EXPECT_EQ(local.ttl_s(), 4u);
  EXPECT_TRUE(parsed.rejected.empty());
}

TEST(LldpcliJsonTest, SeveralNeighboursAreAListOfObjects) {
  ExpectTwoNeighbours(Parsed(Fixture("lldpcli-json-two-neighbors.json")));
}

TEST(LldpcliJsonTest, Json0WrapsEveryValueInAList) {
  ExpectTwoNeighbours(Parsed(Fixture("lldpcli-json0-two-neighbors.json")));
}

TEST(LldpcliJsonTest, NoNeighbourIsAnEmptyAnswer) {
  EXPECT_TRUE(Parsed(Fixture("lldpcli-json-no-neighbor.json")).by_netdev.empty());
  EXPECT_TRUE(Parsed("{\"lldp\": [{}]}").by_netdev.empty());
}

fs::path RealworldDir() {
  if (const char* other = std::getenv("CLUSTERCERT_REALWORLD"); other != nullptr) return other;
  return fs::path(CLUSTERCERT_SOURCE_DIR).parent_path() / "shared" / "realworld";
}

// A Cumulus host's json0 (suzieq's test input, ../shared/realworld/SOURCES.md):
// the figures below were read off the file by eye.
TEST(LldpcliJsonTest, RealworldCumulusJson0) {
  if (!fs::is_directory(RealworldDir())) {
    SKIP_FOR_ENVIRONMENT("realworld-corpus")
        << RealworldDir().string()
        << " is absent (a clone outside the clustercert workspace): the real lldpctl output "
           "cannot be read";
  }
  const LldpcliNeighbors parsed =
      Parsed(ReadFile(RealworldDir() / "lldp" / "cumulus-lldpctl-json0-arista-neighbors.txt"));
  ASSERT_EQ(parsed.by_netdev.size(), 2u);
  const v1::LinkNeighbor& swp3 = parsed.by_netdev.at("swp3");
  EXPECT_EQ(swp3.switch_name(), "leaf03");
  EXPECT_EQ(swp3.port(), "Ethernet5");
  EXPECT_EQ(swp3.chassis_id(), "44:38:39:3d:d7:91");
  EXPECT_EQ(swp3.ttl_s(), 120u);
  EXPECT_EQ(swp3.max_frame_size(), 9236u);
  const v1::LinkNeighbor& swp4 = parsed.by_netdev.at("swp4");
  EXPECT_EQ(swp4.switch_name(), "leaf04");
  EXPECT_EQ(swp4.port(), "Ethernet5");
  EXPECT_EQ(swp4.chassis_id(), "44:38:39:c7:6b:83");
}

TEST(LldpcliJsonTest, ChassisWithoutANameIsTheBareObject) {
  const LldpcliNeighbors parsed = Parsed(R"({"lldp": {"interface": {"eth0": {
      "chassis": {"id": {"type": "mac", "value": "00:11:22:33:44:55"}},
      "port": {"id": {"type": "mac", "value": "00:11:22:33:44:56"}, "descr": "Ethernet1/7",
               "ttl": "120", "mfs": "9216"}}}}})");
  const v1::LinkNeighbor& neighbor = parsed.by_netdev.at("eth0");
  EXPECT_EQ(neighbor.switch_name(), "");
  EXPECT_EQ(neighbor.port(), "Ethernet1/7");  // a MAC port ID: the description names the port
  EXPECT_EQ(neighbor.max_frame_size(), 9216u);
}

TEST(LldpcliJsonTest, FieldsOfTheWrongShapeAreDroppedAndNamed) {
  const LldpcliNeighbors parsed = Parsed(R"({"lldp": {"interface": [
      {"eth0": {"chassis": {"leaf1": {"id": {"type": "mac", "value": "00:11:22:33:44:55"}}},
                "port": {"id": {"type": "ifname", "value": "swp1"}, "ttl": "99999",
                         "mfs": "-1"}}},
      {"eth1": {"chassis": {"leaf1": {"name": "x"}}, "port": {}}},
      {"eth2": {"chassis": {"a": {}, "b": {}}, "port": {}}},
      {"eth3": {"chassis": {"leaf1": {"id": {"type": "MAC!", "value": "x"}}}, "port": {}}},
      {"bad name/../x": {}},
      {"eth0": {"chassis": {"leaf9": {"id": {"type": "mac", "value": "00:11:22:33:44:99"}}},
                "port": {"id": {"type": "ifname", "value": "swp9"}}}}]}})");
  ASSERT_EQ(parsed.by_netdev.size(), 1u);
  const v1::LinkNeighbor& eth0 = parsed.by_netdev.at("eth0");
  EXPECT_EQ(eth0.switch_name(), "leaf1");
  EXPECT_FALSE(eth0.has_ttl_s());
  EXPECT_FALSE(eth0.has_max_frame_size());
  EXPECT_NE(parsed.rejected.at("eth0")[0].find("more than one neighbour on eth0"),
            std::string::npos);
  EXPECT_NE(parsed.rejected.at("eth1")[0].find("no chassis ID"), std::string::npos);
  EXPECT_NE(parsed.rejected.at("eth2")[0].find("no chassis"), std::string::npos);
  EXPECT_NE(parsed.rejected.at("eth3")[0].find("no chassis ID"), std::string::npos);
  EXPECT_NE(parsed.rejected.at("")[0].find("not a netdev name"), std::string::npos);
}

TEST(LldpcliJsonTest, HiddenBytesAndLongStringsAreEscapedAndCut) {
  const LldpcliNeighbors parsed = Parsed(absl::StrCat(
      R"({"lldp": {"interface": {"eth0": {"chassis": {"leaf\u001b[2J\u0000": {"id": )",
      R"({"type": "mac", "value": "00:11:22:33:44:55"}}}, "port": {"id": {"type": "local", )",
      R"("value": ")", std::string(1000, 'p'), R"("}}}}}})"));
  const v1::LinkNeighbor& eth0 = parsed.by_netdev.at("eth0");
  EXPECT_EQ(eth0.switch_name(), "leaf\\x1b[2J\\x00");
  EXPECT_EQ(eth0.port_id().size(), 255u + 3u);  // cut, with "..."
}

void ExpectRefused(const std::string& text, const std::string& words) {
  absl::StatusOr<LldpcliNeighbors> parsed = ParseLldpcliJson(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find(words), std::string::npos) << parsed.status();
}

TEST(LldpcliJsonTest, RefusesWhatIsNotLldpcliJson) {
  ExpectRefused("", "lldpcli's output");
  ExpectRefused("unable to connect to socket", "lldpcli's output");
  ExpectRefused(R"({"frr": {}})", "not lldpcli's JSON");
  ExpectRefused(R"({"lldp": "x"})", "not lldpcli's JSON");
  ExpectRefused(R"({"lldp": {}, "lldp": {"interface": {}}})", "the key 'lldp' twice");
  ExpectRefused(std::string("{\"lldp\": {\"interface\": {\"eth0") + '\0' + "\": {}}}}", "");
  ExpectRefused(std::string(200, '[') + std::string(200, ']'), "");
}

TEST(LldpcliJsonTest, TenMegabytesAreRefusedUnread) {
  std::string huge = R"({"lldp": {"interface": [)";
  while (huge.size() < size_t{10} << 20) huge += R"({"eth0": {"chassis": {}, "port": {}}},)";
  huge += "{}]}}";
  ExpectRefused(huge, "more than the 4194304 this agent reads");
}

TEST(LldpcliJsonTest, ReadsAtMostItsInterfaceBound) {
  std::string text = R"({"lldp": {"interface": [)";
  for (size_t i = 0; i < kMaxLldpcliInterfaces + 5; ++i) {
    absl::StrAppend(&text, i == 0 ? "" : ",", R"({"e)", i,
                    R"(": {"chassis": {"s": {"id": {"type": "mac", "value": "m"}}}, )",
                    R"("port": {"id": {"type": "ifname", "value": "p"}}}})");
  }
  text += "]}}";
  const LldpcliNeighbors parsed = Parsed(text);
  EXPECT_EQ(parsed.by_netdev.size(), kMaxLldpcliInterfaces);
  EXPECT_NE(parsed.rejected.at("").back().find("the rest are not read"), std::string::npos);
}

// ------------------------------------------------------------ LldpcliReader

// lldpcli's fixed command line, as the fake runner keys its answers.
constexpr char kLldpcli[] = "lldpcli -f json show neighbors details";

TEST(LldpcliReaderTest, RunsTheFixedCommandWithinItsTimeout) {
  clustercert::testing::FakeCommandRunner runner;
  runner.Answer(kLldpcli, process::CommandResult{0, Fixture("lldpcli-json-one-neighbor.json"), ""});
  absl::StatusOr<LldpcliNeighbors> read = LldpcliReader(runner).Read(absl::Seconds(30));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->by_netdev.size(), 1u);
  ASSERT_EQ(runner.calls().size(), 1u);
  EXPECT_EQ(runner.calls()[0],
            (std::vector<std::string>{"lldpcli", "-f", "json", "show", "neighbors", "details"}));
  EXPECT_EQ(runner.timeouts()[0], LldpcliReader::kTimeout);
}

TEST(LldpcliReaderTest, SaysWhetherLldpdIsMissingStoppedOrClosed) {
  clustercert::testing::FakeCommandRunner runner;
  runner.Answer(kLldpcli, absl::NotFoundError("lldpcli: No such file or directory"));
  EXPECT_TRUE(absl::IsNotFound(LldpcliReader(runner).Read(absl::Seconds(1)).status()));

  runner.Answer(
      kLldpcli,
      process::CommandResult{
          1, "",
          "2026-12-07T11:39:53 [WARN/control] unable to connect to socket /run/lldpd.socket: No "
          "such file or directory\n"});
  absl::Status stopped = LldpcliReader(runner).Read(absl::Seconds(1)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(stopped));
  EXPECT_NE(stopped.message().find("lldpd is not running on this host"), std::string::npos);

  runner.Answer(
      kLldpcli,
      process::CommandResult{
          1, "",
          "[WARN/control] unable to connect to socket /run/lldpd.socket: Permission denied\n"});
  absl::Status closed = LldpcliReader(runner).Read(absl::Seconds(1)).status();
  EXPECT_NE(closed.message().find("usermod -aG _lldpd clustercert"), std::string::npos);

  runner.Answer(kLldpcli, process::CommandResult{0, std::string("\0\0\0", 3), ""});
  absl::Status garbage = LldpcliReader(runner).Read(absl::Seconds(1)).status();
  EXPECT_TRUE(absl::IsInvalidArgument(garbage)) << garbage;

  runner.Answer(kLldpcli, absl::DeadlineExceededError("killed after 2 s"));
  EXPECT_TRUE(absl::IsDeadlineExceeded(LldpcliReader(runner).Read(absl::Seconds(1)).status()));
}

}  // namespace
}  // namespace clustercert::agent::inventory
