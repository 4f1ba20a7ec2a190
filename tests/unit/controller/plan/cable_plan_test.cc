// The cable plan: fabric.cabling (a CSV beside the plan), switch and port on
// nodes[].rails[] and nodes[].cable, fabric.topology and fabric.lldp_wait_s.
#include "controller/plan/cable_plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kMtuLine[] = "  min_netdev_mtu: 9000\n";

class CablePlanTest : public ::testing::Test {
 protected:
  // The plan's path in a directory of its own, so fabric.cabling resolves
  // beside it.
  std::string PlanPath() const { return absl::StrCat(::testing::TempDir(), "/cabling_plan.yaml"); }

  void WriteCsv(const std::string& name, const std::string& text) const {
    std::ofstream(absl::StrCat(::testing::TempDir(), "/", name), std::ios::binary) << text;
  }

  // BasePlan() with `fabric_lines` under fabric and `rails` for node1.
  absl::StatusOr<Plan> Parse(const std::string& fabric_lines,
                             const std::string& node1_rails = "[mlx5_0, mlx5_1]") const {
    std::string text = Replace(BasePlan(), kMtuLine, std::string(kMtuLine) + fabric_lines);
    text = Replace(text, "    data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_1]\n",
                   absl::StrCat("    data_ip: 10.10.1.1\n    rails: ", node1_rails, "\n"));
    return ParsePlan(text, PlanPath());
  }

  absl::StatusOr<Plan> ParseWithCsv(const std::string& csv) const {
    WriteCsv("cables.csv", csv);
    return Parse("  cabling: cables.csv\n");
  }

  // The plan's errors, one per line.
  std::string Errors(const absl::StatusOr<Plan>& plan) const {
    EXPECT_FALSE(plan.ok()) << "the plan parsed";
    return plan.ok() ? "" : std::string(plan.status().message());
  }
};

TEST_F(CablePlanTest, WithoutCablingKeysNothingIsAsked) {
  auto plan = ParsePlan(BasePlan(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->cables.empty());
  EXPECT_EQ(plan->fabric.topology, FabricTopology::kUnspecified);
  EXPECT_EQ(plan->fabric.lldp_wait, absl::Seconds(31));
  EXPECT_FALSE(AsksForCabling(*plan));
}

TEST_F(CablePlanTest, TopologyAndWaitEachAskForCabling) {
  auto railed = Parse("  topology: rail-optimized\n");
  ASSERT_TRUE(railed.ok()) << railed.status();
  EXPECT_EQ(railed->fabric.topology, FabricTopology::kRailOptimized);
  EXPECT_STREQ(FabricTopologyName(railed->fabric.topology), "rail-optimized");
  EXPECT_TRUE(AsksForCabling(*railed));

  auto waited = Parse("  lldp_wait_s: 5\n");
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ(waited->fabric.lldp_wait, absl::Seconds(5));
  EXPECT_TRUE(AsksForCabling(*waited));

  EXPECT_THAT(Errors(Parse("  lldp_wait_s: 121\n")),
              HasSubstr("fabric.lldp_wait_s is 121; it must be a number of seconds from 1 to 120"));
  EXPECT_THAT(Errors(Parse("  topology: rail_optimized\n")),
              HasSubstr("Did you mean rail-optimized?"));
}

TEST_F(CablePlanTest, RailMapsGiveFarEndsAndPlainNamesStillWork) {
  auto plan = Parse("", "[mlx5_0, {name: mlx5_1, switch: leaf2, port: Ethernet1/14}]");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->nodes[0].rails, ElementsAre("mlx5_0", "mlx5_1"));
  ASSERT_EQ(plan->cables.size(), 1u);
  const CableEnd& end = plan->cables.at({"node1", "mlx5_1"});
  EXPECT_EQ(end.switch_name, "leaf2");
  EXPECT_EQ(end.port, "Ethernet1/14");
  EXPECT_EQ(end.source, "nodes[0].rails[1]");
  EXPECT_TRUE(AsksForCabling(*plan));
}

TEST_F(CablePlanTest, RailMapNeedsBothSwitchAndPort) {
  EXPECT_THAT(Errors(Parse("", "[mlx5_0, {name: mlx5_1, switch: leaf2}]")),
              HasSubstr("nodes[0].rails[1] gives switch but not port; give both"));
  EXPECT_THAT(Errors(Parse("", "[mlx5_0, {name: mlx5_1, switch: leaf2, port: swp1, speed: 1}]")),
              HasSubstr("nodes[0].rails[1].speed"));
}

TEST_F(CablePlanTest, CsvWithBomCrlfQuotesCommentsAndColumnsInAnyOrder) {
  auto plan = ParseWithCsv(
      "\xEF\xBB\xBF"
      "# rack A\r\n"
      "Switch,PORT,Node,Device,Cable ID\r\n"
      "\r\n"
      "leaf1,swp1,node1,mlx5_0,C-001\r\n"
      "\"leaf2\", \"Ethernet1/1\" ,node1,\"mlx5_1\",\"C-002, spare \"\"B\"\"\"\r\n"
      "LEAF1,swp2,node2,mlx5_0,C-003");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->cables, ElementsAre(Pair(Pair("node1", "mlx5_0"), ::testing::_),
                                        Pair(Pair("node1", "mlx5_1"), ::testing::_),
                                        Pair(Pair("node2", "mlx5_0"), ::testing::_)));
  EXPECT_EQ(plan->cables.at({"node1", "mlx5_1"}).port, "Ethernet1/1");
  EXPECT_EQ(plan->cables.at({"node1", "mlx5_1"}).source, "cables.csv:5");
  EXPECT_EQ(plan->cables.at({"node2", "mlx5_0"}).switch_name, "LEAF1");
  EXPECT_EQ(plan->cabling_sha256.size(), 64u);
}

// Each mistake is reported at fabric.cabling's line in the plan, with the
// CSV's own file:line first.
TEST_F(CablePlanTest, RowErrorsCarryFileAndLine) {
  const std::string errors =
      Errors(ParseWithCsv("node,device,switch,port\n"
                          "node1,mlx5_0,leaf1,swp1\n"
                          "node7,mlx5_0,leaf1,swp7\n"
                          "node1,mlx5_9,leaf1,swp9\n"
                          "node1,mlx5_0,leaf1,swp3\n"
                          "node2,mlx5_0,Leaf1,SWP1\n"
                          "node2,mlx5_1,,swp4\n"
                          "node2,mlx5_1,leaf1\n"
                          "nodes2,mlx5_1,leaf1,swp5\n"));
  EXPECT_THAT(errors, HasSubstr(": cables.csv:3: node7 is not in the plan's nodes"));
  EXPECT_THAT(errors, HasSubstr("cables.csv:4: node1 has no rail mlx5_9 (its rails are mlx5_0, "
                                "mlx5_1); give the RDMA device"));
  EXPECT_THAT(errors, HasSubstr("cables.csv:5: node1 mlx5_0 already has a row (cables.csv:2); "
                                "give each port one row."));
  EXPECT_THAT(errors, HasSubstr("cables.csv:6: Leaf1/SWP1 already holds node1 mlx5_0 "
                                "(cables.csv:2); one switch port takes one cable"));
  EXPECT_THAT(errors, HasSubstr("cables.csv:7: the switch field is empty; every row gives node, "
                                "device, switch and port."));
  EXPECT_THAT(errors, HasSubstr("cables.csv:8: this row has 3 fields but the header (line 1) has "
                                "4"));
  EXPECT_THAT(errors, HasSubstr("cables.csv:9: nodes2 is not in the plan's nodes (did you mean "
                                "node2?); name each cable's node as the plan's nodes[].name does"));
  // The plan position: fabric.cabling's value, the line after min_netdev_mtu.
  EXPECT_THAT(errors, HasSubstr("cabling_plan.yaml:7:12: cables.csv:3:"));
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n') + 1, 7);
}

TEST_F(CablePlanTest, HeaderMistakes) {
  EXPECT_THAT(Errors(ParseWithCsv("node1,mlx5_0,leaf1,swp1\n")),
              HasSubstr("cables.csv:1: the header has no node column; the first line must name "
                        "the columns node, device, switch and port"));
  EXPECT_THAT(Errors(ParseWithCsv("node,device,switch,port,Port\n")),
              HasSubstr("cables.csv:1: the header names the column port twice (columns 4 and 5)"));
  EXPECT_THAT(Errors(ParseWithCsv("\n# nothing\n")), HasSubstr("cables.csv:2: the cable plan is "
                                                               "empty"));
  EXPECT_THAT(Errors(ParseWithCsv("node,device,switch,port\nnode1,mlx5_0,\"leaf1,swp1\n")),
              HasSubstr("cables.csv:2: this line cannot be read: the quote at column 14 is not "
                        "closed on this line"));
}

TEST_F(CablePlanTest, BadValues) {
  EXPECT_THAT(Errors(ParseWithCsv("node,device,switch,port\nnode1,mlx5_0,leaf 1,swp1\n")),
              HasSubstr("cables.csv:2: the switch is \"leaf 1\"; it must be a name of letters"));
  EXPECT_THAT(Errors(ParseWithCsv("node,device,switch,port\nnode1,mlx5_0,leaf1,\"sw\tp1\"\n")),
              HasSubstr("cables.csv:2: the port is \"sw\\tp1\"; it must be the switch's name"));
}

TEST_F(CablePlanTest, UnreadableFileIsAPlanError) {
  EXPECT_THAT(Errors(Parse("  cabling: missing.csv\n")),
              HasSubstr("fabric.cabling is missing.csv, which cannot be read ("));
  EXPECT_THAT(Errors(Parse("  cabling: /dev/zero\n")), HasSubstr("not a regular file"));
}

TEST_F(CablePlanTest, CsvAndRailMapMustAgree) {
  WriteCsv("cables.csv",
           "node,device,switch,port\nnode1,mlx5_1,leaf2,swp1\nnode1,mlx5_0,leaf1,"
           "swp1\n");
  auto agree =
      Parse("  cabling: cables.csv\n", "[mlx5_0, {name: mlx5_1, switch: LEAF2, port: swp1}]");
  ASSERT_TRUE(agree.ok()) << agree.status();
  EXPECT_EQ(agree->cables.size(), 2u);

  const std::string errors = Errors(
      Parse("  cabling: cables.csv\n", "[mlx5_0, {name: mlx5_1, switch: leaf3, port: swp1}]"));
  EXPECT_THAT(errors, HasSubstr("cables.csv:2: node1 mlx5_1 is on leaf2/swp1 here but "
                                "nodes[0].rails[1] puts it on leaf3/swp1; make the two agree, or "
                                "keep one of them."));
}

TEST_F(CablePlanTest, AbsolutePathIsTakenAsIs) {
  WriteCsv("abs.csv", "node,device,switch,port\nnode2,mlx5_1,leaf2,swp2\n");
  auto plan = Parse(absl::StrCat("  cabling: ", ::testing::TempDir(), "/abs.csv\n"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->cables.at({"node2", "mlx5_1"}).port, "swp2");
}

// On fabric.type ethernet the device is the data netdev, one per node, and
// nodes[].cable gives the data port's far end without naming it.
TEST_F(CablePlanTest, EthernetDataPorts) {
  const auto ethernet = [](std::string text) {
    text = Replace(text, "  type: roce\n", "  type: ethernet\n");
    text = Replace(text,
                   "  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: "
                   "true}\n",
                   "");
    text = Replace(text, "  engine: verbs\n", "  engine: tcp\n");
    return text;
  };
  std::string text = ethernet(BasePlan());
  text = Replace(text, "    data_ip: 10.10.1.2\n",
                 "    data_ip: 10.10.1.2\n    cable: {switch: leaf1, port: swp2}\n");
  WriteCsv("eth.csv", "node,device,switch,port\nnode1,eth0,leaf1,swp1\nnode2,enp1s0,leaf1,swp2\n");
  text = Replace(text, kMtuLine, std::string(kMtuLine) + "  cabling: eth.csv\n");
  auto plan = ParsePlan(text, PlanPath());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->cables.at({"node1", "eth0"}).port, "swp1");
  EXPECT_EQ(plan->cables.at({"node2", "enp1s0"}).source, "eth.csv:3");
  EXPECT_EQ(plan->cables.count({"node2", ""}), 0u);

  WriteCsv("eth.csv",
           "node,device,switch,port\nnode1,eth0,leaf1,swp1\nnode1,eth1,leaf1,swp3\n"
           "node2,enp1s0,leaf1,swp4\n");
  const std::string errors = Errors(ParsePlan(text, PlanPath()));
  EXPECT_THAT(errors, HasSubstr("eth.csv:3: node1 already has its data port eth0 at line 2"));
  EXPECT_THAT(errors, HasSubstr("eth.csv:4: node2 enp1s0 is on leaf1/swp4 here but "
                                "nodes[1].cable puts it on leaf1/swp2"));
}

TEST_F(CablePlanTest, NodeCableOnlyOnEthernet) {
  std::string text = Replace(BasePlan(), "    data_ip: 10.10.1.2\n",
                             "    data_ip: 10.10.1.2\n    cable: {switch: leaf1, port: swp2}\n");
  EXPECT_THAT(Errors(ParsePlan(text, kFile)),
              HasSubstr("nodes[1].cable gives the far end of the data port, but fabric.type is "
                        "roce; give switch and port on each rails entry instead"));
}

TEST_F(CablePlanTest, TwoRailMapsOnOneSwitchPort) {
  EXPECT_THAT(Errors(Parse("",
                           "[{name: mlx5_0, switch: leaf1, port: swp1}, {name: mlx5_1, "
                           "switch: leaf1, port: swp1}]")),
              HasSubstr("leaf1/swp1 already holds node1 mlx5_0 (nodes[0].rails[0]); one switch "
                        "port takes one cable"));
}

TEST(CableCsvTest, QuotedFieldsAndLimits) {
  std::vector<std::pair<int, std::string>> reports;
  const auto report = [&](int line, std::string message) {
    reports.emplace_back(line, std::move(message));
  };
  std::vector<CableRow> rows =
      ParseCableCsv("port,switch,device,node\n\"a \"\"b\"\"\",s1,d1,n1\n", 10, report);
  ASSERT_EQ(rows.size(), 1u) << (reports.empty() ? "" : reports[0].second);
  EXPECT_EQ(rows[0].port, "a \"b\"");
  EXPECT_EQ(rows[0].line, 2);

  reports.clear();
  rows =
      ParseCableCsv("node,device,switch,port\nn1,d1,s1,p1\nn2,d2,s2,p2\nn3,d3,s3,p3\n", 3, report);
  EXPECT_EQ(rows.size(), 2u);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].first, 4);
  EXPECT_THAT(reports[0].second, HasSubstr("more than 3 lines"));

  reports.clear();
  constexpr char kWithNul[] = "node,device,switch,port\nn1,d\0,s1,p1\n";
  ParseCableCsv(std::string(kWithNul, sizeof(kWithNul) - 1), 10, report);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_THAT(reports[0].second, HasSubstr("the device is \"d\\x00\""));
}

// A million-line file of duplicates costs linear time: one hash lookup a row.
TEST_F(CablePlanTest, MillionLinesAreRefusedQuicklyAndDuplicatesCheckedLinearly) {
  std::string csv = "node,device,switch,port\n";
  for (int i = 0; i < 200'000; ++i) csv += "node1,mlx5_0,leaf1,swp1\n";
  const auto start = std::chrono::steady_clock::now();
  const std::string errors = Errors(ParseWithCsv(csv));
  EXPECT_THAT(errors, HasSubstr("and 199899 more error(s)"));

  std::string huge = "node,device,switch,port\n";
  huge.reserve(kMaxCablePlanLines * 2 + 100);
  for (size_t i = 0; i < kMaxCablePlanLines; ++i) huge += "\n";
  EXPECT_THAT(Errors(ParseWithCsv(huge)),
              HasSubstr(absl::StrCat("cables.csv:", kMaxCablePlanLines + 1,
                                     ": the cable plan has more than 1000000 lines")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
