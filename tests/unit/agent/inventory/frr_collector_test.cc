// FRR's BGP state: the vtysh JSON captured from FRR 8.4 in the lab
// (tests/fixtures/frr/, made by the namespaces of frr_lab_test.sh: two hosts
// and a leaf peering BGP unnumbered) parsed, hostile text refused, and the
// collector's answers to every way vtysh can fail, through a canned runner.
#include "agent/inventory/frr_collector.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/frr_bgp_json.h"
#include "gtest/gtest.h"
#include "tests/support/fake_command_runner.h"

namespace clustercert::agent::inventory {
namespace {

std::string Fixture(const std::string& scenario, const std::string& file) {
  const auto path = std::filesystem::path(CLUSTERCERT_FIXTURES) / "frr" / scenario / file;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const v1::BgpNeighbor* FindPeer(const BgpSummary& summary, const std::string& peer) {
  for (const auto& neighbor : summary.neighbors) {
    if (neighbor.peer() == peer) return &neighbor;
  }
  return nullptr;
}

TEST(FrrBgpJsonTest, HostSummaryHasItsUnnumberedLeafEstablished) {
  auto summary = ParseBgpSummary(Fixture("healthy-host1", "summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->router_id, "10.203.0.1");
  ASSERT_TRUE(summary->local_as.has_value());
  EXPECT_EQ(*summary->local_as, 65101u);
  ASSERT_EQ(summary->neighbors.size(), 1u);
  const v1::BgpNeighbor& leaf = summary->neighbors[0];
  EXPECT_EQ(leaf.peer(), "fab0");
  EXPECT_TRUE(leaf.unnumbered());
  EXPECT_EQ(leaf.address_family(), "ipv4Unicast");
  EXPECT_EQ(leaf.state(), "Established");
  EXPECT_EQ(leaf.remote_as(), 65001u);
  EXPECT_EQ(leaf.prefixes_received(), 2u);
  EXPECT_EQ(leaf.prefixes_sent(), 3u);
  EXPECT_EQ(leaf.remote_hostname(), "leaf");
  EXPECT_EQ(leaf.uptime(), "00:00:30");
  EXPECT_EQ(leaf.uptime_ms(), 30000u);
  EXPECT_TRUE(summary->rejected.empty());
}

TEST(FrrBgpJsonTest, LeafWithOneNeighbourShutDownSaysIdleAdmin) {
  auto summary = ParseBgpSummary(Fixture("shutdown-leaf", "summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->neighbors.size(), 2u);
  ASSERT_NE(FindPeer(*summary, "swp1"), nullptr);
  EXPECT_EQ(FindPeer(*summary, "swp1")->state(), "Idle (Admin)");
  EXPECT_EQ(FindPeer(*summary, "swp2")->state(), "Established");
  EXPECT_EQ(FindPeer(*summary, "swp2")->prefixes_received(), 1u);
}

TEST(FrrBgpJsonTest, HostWhoseLeafShutTheSessionSeesActiveAndNoPrefixes) {
  auto summary = ParseBgpSummary(Fixture("shutdown-host1", "summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->neighbors.size(), 1u);
  EXPECT_EQ(summary->neighbors[0].state(), "Active");
  EXPECT_EQ(summary->neighbors[0].prefixes_received(), 0u);
}

TEST(FrrBgpJsonTest, OriginatedRoutesKeepOnlyThePathsMadeHere) {
  auto originated = ParseBgpOriginated(Fixture("healthy-host1", "originated-ipv4.json"));
  ASSERT_TRUE(originated.ok()) << originated.status();
  EXPECT_TRUE(originated->instance_present);
  EXPECT_EQ(originated->router_id, "10.203.0.1");
  EXPECT_EQ(originated->local_as, 65101u);
  EXPECT_EQ(originated->prefixes, std::vector<std::string>{"10.203.0.1/32"});
  auto ipv6 = ParseBgpOriginated(Fixture("healthy-host1", "originated-ipv6.json"));
  ASSERT_TRUE(ipv6.ok()) << ipv6.status();
  EXPECT_TRUE(ipv6->prefixes.empty());
}

TEST(FrrBgpJsonTest, NoRouterBgpIsAnEmptySummaryAndASentence) {
  auto summary = ParseBgpSummary(Fixture("no-router-bgp", "summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->neighbors.empty());
  EXPECT_TRUE(summary->router_id.empty());
  auto originated = ParseBgpOriginated(Fixture("no-router-bgp", "originated-ipv4.json"));
  ASSERT_TRUE(originated.ok()) << originated.status();
  EXPECT_FALSE(originated->instance_present);
}

TEST(FrrBgpJsonTest, InstanceWithoutNeighboursStillNamesItsRouterId) {
  auto summary = ParseBgpSummary(Fixture("no-neighbors", "summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->neighbors.empty());
  auto originated = ParseBgpOriginated(Fixture("no-neighbors", "originated-ipv4.json"));
  ASSERT_TRUE(originated.ok()) << originated.status();
  EXPECT_TRUE(originated->instance_present);
  EXPECT_EQ(originated->router_id, "10.203.0.2");
}

TEST(FrrBgpJsonTest, RefusesWhatIsNotFrrJson) {
  EXPECT_EQ(ParseBgpSummary("% Unknown command: show bgp\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseBgpSummary("[1, 2]").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseBgpSummary("{\"ipv4Unicast\": {\"peers\": {").status().code(),
            absl::StatusCode::kInvalidArgument)
      << "truncated";
  std::string deep;
  for (int i = 0; i < 200; ++i) absl::StrAppend(&deep, "{\"a\":");
  absl::StrAppend(&deep, "1", std::string(200, '}'));
  EXPECT_FALSE(ParseBgpSummary(deep).ok()) << "nesting beyond protobuf's depth limit";
  EXPECT_EQ(ParseBgpSummary(std::string(kMaxVtyshOutputBytes + 1, ' ')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FrrBgpJsonTest, DropsFieldsOfTheWrongShapeAndSaysSo) {
  auto summary = ParseBgpSummary(R"({"ipv4Unicast": {"routerId": "10.0.0.1; rm -rf /", "as": -1,
      "peers": {"swp1 --evil": {"state": "Established"},
                "swp2": {"state": "Established\u001b[2J", "pfxRcd": -3, "remoteAs": 1e12,
                         "hostname": "leaf/../x", "idType": "interface"}}}})");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->router_id.empty());
  EXPECT_FALSE(summary->local_as.has_value());
  ASSERT_EQ(summary->neighbors.size(), 1u);
  const v1::BgpNeighbor& swp2 = summary->neighbors[0];
  EXPECT_EQ(swp2.peer(), "swp2");
  EXPECT_TRUE(swp2.state().empty());
  EXPECT_FALSE(swp2.has_prefixes_received());
  EXPECT_FALSE(swp2.has_remote_as());
  EXPECT_TRUE(swp2.remote_hostname().empty());
  ASSERT_EQ(summary->rejected.size(), 2u);
  EXPECT_NE(summary->rejected[0].find("not an interface name or address"), std::string::npos)
      << summary->rejected[0];
  EXPECT_NE(summary->rejected[1].find("not a BGP state"), std::string::npos)
      << summary->rejected[1];
}

TEST(FrrBgpJsonTest, ShapesOfNamesAndStates) {
  EXPECT_TRUE(IsBgpPeerName("swp1"));
  EXPECT_TRUE(IsBgpPeerName("fe80::1%swp1"));
  EXPECT_TRUE(IsBgpPeerName("10.0.0.2"));
  EXPECT_FALSE(IsBgpPeerName("-N"));
  EXPECT_FALSE(IsBgpPeerName("a b"));
  EXPECT_FALSE(IsBgpPeerName(std::string(65, 'a')));
  EXPECT_TRUE(IsBgpState("Idle (Admin)"));
  EXPECT_FALSE(IsBgpState("Established;"));
  EXPECT_TRUE(IsIpv4Address("10.203.0.1"));
  EXPECT_FALSE(IsIpv4Address("10.203.0"));
  EXPECT_FALSE(IsIpv4Address("fe80::1"));
}

// A runner answering the collector's three commands from one fixture scenario.
class FrrCollectorTest : public ::testing::Test {
 protected:
  std::string Line(absl::string_view command) const {
    return absl::StrCat("vtysh -N lab1 -c ", command);
  }
  void AnswerScenario(const std::string& scenario) {
    runner_.AnswerText(Line(FrrCollector::kSummaryCommand), Fixture(scenario, "summary.json"));
    runner_.AnswerText(Line(FrrCollector::kOriginatedIpv4Command),
                       Fixture(scenario, "originated-ipv4.json"));
    if (std::filesystem::exists(std::filesystem::path(CLUSTERCERT_FIXTURES) / "frr" / scenario /
                                "originated-ipv6.json")) {
      runner_.AnswerText(Line(FrrCollector::kOriginatedIpv6Command),
                         Fixture(scenario, "originated-ipv6.json"));
    }
  }
  v1::BgpState Collect() { return FrrCollector(runner_, FrrOptions{"lab1"}).Collect(); }

  clustercert::testing::FakeCommandRunner runner_;
};

TEST_F(FrrCollectorTest, HealthyHostIsFilledFromTheThreeCommands) {
  AnswerScenario("healthy-host1");
  v1::BgpState state = Collect();
  EXPECT_TRUE(state.frr_present());
  EXPECT_TRUE(state.instance_present());
  EXPECT_EQ(state.source(), "vtysh -N lab1");
  EXPECT_EQ(state.router_id(), "10.203.0.1");
  EXPECT_EQ(state.local_as(), 65101u);
  ASSERT_EQ(state.neighbors_size(), 1);
  EXPECT_EQ(state.neighbors(0).peer(), "fab0");
  ASSERT_EQ(state.originated_prefixes_size(), 1);
  EXPECT_EQ(state.originated_prefixes(0), "10.203.0.1/32");
  EXPECT_EQ(state.unknowns_size(), 0);
  ASSERT_EQ(runner_.calls().size(), 3u);
  EXPECT_EQ(runner_.calls()[0],
            (std::vector<std::string>{"vtysh", "-N", "lab1", "-c", FrrCollector::kSummaryCommand}));
  for (absl::Duration timeout : runner_.timeouts()) EXPECT_EQ(timeout, absl::Seconds(5));
}

TEST_F(FrrCollectorTest, NoPathspaceAsksTheHostsOwnFrr) {
  FrrCollector collector(runner_, FrrOptions{});
  EXPECT_EQ(collector.Argv(FrrCollector::kSummaryCommand),
            (std::vector<std::string>{"vtysh", "-c", FrrCollector::kSummaryCommand}));
}

TEST_F(FrrCollectorTest, NoVtyshMeansFrrIsNotInstalledNotAnError) {
  v1::BgpState state = Collect();  // no canned answer: NotFound, as a missing program
  EXPECT_FALSE(state.frr_present());
  EXPECT_FALSE(state.instance_present());
  EXPECT_NE(state.reason().find("FRR is not installed"), std::string::npos) << state.reason();
  EXPECT_EQ(state.unknowns_size(), 0);
  EXPECT_EQ(runner_.calls().size(), 1u) << "nothing more is asked";
}

TEST_F(FrrCollectorTest, BgpdNotRunningIsAReasonNotAnError) {
  for (const std::string scenario : {"no-bgpd", "no-daemon"}) {
    clustercert::testing::FakeCommandRunner runner;
    runner.AnswerText(Line(FrrCollector::kSummaryCommand), Fixture(scenario, "summary.stdout"),
                      std::stoi(Fixture(scenario, "summary.rc")),
                      Fixture(scenario, "summary.stderr"));
    v1::BgpState state = FrrCollector(runner, FrrOptions{"lab1"}).Collect();
    EXPECT_FALSE(state.frr_present()) << scenario;
    EXPECT_NE(state.reason().find(scenario == "no-bgpd" ? "bgpd is not running"
                                                        : "no FRR daemon answered vtysh"),
              std::string::npos)
        << state.reason();
    EXPECT_EQ(state.unknowns_size(), 0) << scenario;
  }
}

TEST_F(FrrCollectorTest, NoRouterBgpIsPresentFrrWithoutAnInstance) {
  AnswerScenario("no-router-bgp");
  v1::BgpState state = Collect();
  EXPECT_TRUE(state.frr_present());
  EXPECT_FALSE(state.instance_present());
  EXPECT_NE(state.reason().find("no `router bgp`"), std::string::npos) << state.reason();
  EXPECT_EQ(state.unknowns_size(), 0);
}

TEST_F(FrrCollectorTest, AHangingVtyshIsAnUnknownNamingTheCommand) {
  runner_.Answer(Line(FrrCollector::kSummaryCommand),
                 absl::DeadlineExceededError("killed after 5s"));
  v1::BgpState state = Collect();
  EXPECT_FALSE(state.frr_present());
  ASSERT_EQ(state.unknowns_size(), 1);
  EXPECT_EQ(state.unknowns(0).field(), "neighbors");
  EXPECT_EQ(state.unknowns(0).path(), "vtysh -N lab1 -c 'show bgp vrf default summary json'");
  EXPECT_NE(state.unknowns(0).reason().find("killed after 5s"), std::string::npos);
}

TEST_F(FrrCollectorTest, GarbageFromVtyshIsAnUnknownWithWhatItPrinted) {
  runner_.AnswerText(Line(FrrCollector::kSummaryCommand), "% Unknown command: show bgp\n");
  runner_.AnswerText(Line(FrrCollector::kOriginatedIpv4Command),
                     Fixture("healthy-host1", "originated-ipv4.json"));
  runner_.AnswerText(Line(FrrCollector::kOriginatedIpv6Command),
                     Fixture("healthy-host1", "originated-ipv6.json"));
  v1::BgpState state = Collect();
  EXPECT_TRUE(state.frr_present());
  EXPECT_TRUE(state.instance_present()) << "the table still names the instance";
  ASSERT_EQ(state.unknowns_size(), 1);
  EXPECT_EQ(state.unknowns(0).field(), "neighbors");
  EXPECT_NE(state.unknowns(0).reason().find("Unknown command"), std::string::npos);
}

}  // namespace
}  // namespace clustercert::agent::inventory
