// The terminal's finding tables: by default only the checks that did not
// pass, with a per-node count of the rest; --verbose lists every check.
#include "controller/commands/finding_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace clustercert::controller {
namespace {

v1::Finding Check(const std::string& id, const std::string& node, v1::Finding::Status status,
                  v1::Finding::Severity severity = v1::Finding::error) {
  v1::Finding finding;
  finding.set_id(id);
  finding.set_node(node);
  finding.set_status(status);
  finding.set_severity(severity);
  finding.set_observed("seen");
  finding.set_expected("wanted");
  finding.set_message(node + " " + id + " says so.");
  if (status != v1::Finding::pass && status != v1::Finding::skipped) finding.set_remedy("Fix it.");
  return finding;
}

std::vector<NodeState> Nodes() {
  std::vector<NodeState> nodes(2);
  nodes[0].node.name = "node1";
  nodes[0].node.agent = "10.0.0.1:7070";
  nodes[1].node.name = "node2";
  nodes[1].node.agent = "10.0.0.2:7070";
  return nodes;
}

std::vector<v1::Finding> Checks() {
  return {Check("port.state", "node1", v1::Finding::pass),
          Check("port.rate", "node1", v1::Finding::pass),
          Check("stack.ofed", "node1", v1::Finding::skipped),
          Check("clock.ntp", "node1", v1::Finding::fail),
          Check("mtu.netdev", "node1", v1::Finding::fail, v1::Finding::warning),
          Check("gpu.count", "node1", v1::Finding::unknown),
          Check("port.state", "node2", v1::Finding::pass),
          Check("stack.ofed", "node2", v1::Finding::skipped),
          Check("bgp.neighbor", "node2", v1::Finding::skipped),
          Check("collectives.run", "", v1::Finding::pass),
          Check("collectives.transport", "", v1::Finding::fail)};
}

bool HasLineWith(const std::string& out, const std::string& a, const std::string& b) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (line.find(a) != absl::string_view::npos && line.find(b) != absl::string_view::npos) {
      return true;
    }
  }
  return false;
}

TEST(FindingTable, ByDefaultListsWhatDidNotPassAndCountsTheRest) {
  const std::string out = RenderFindingTables(Nodes(), Checks(), /*color=*/false,
                                              /*all_rows=*/false);
  EXPECT_NE(out.find("node1  (10.0.0.1:7070): 2 passed, 1 skipped, 3 not passing:\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("node2  (10.0.0.2:7070): 1 passed, 2 skipped\n"), std::string::npos) << out;
  EXPECT_NE(out.find("cluster: 1 passed, 0 skipped, 1 not passing:\n"), std::string::npos) << out;
  EXPECT_TRUE(HasLineWith(out, "clock.ntp", "FAIL"));
  EXPECT_TRUE(HasLineWith(out, "mtu.netdev", "WARN"));
  EXPECT_TRUE(HasLineWith(out, "gpu.count", "UNKNOWN"));
  EXPECT_TRUE(HasLineWith(out, "collectives.transport", "FAIL"));
  EXPECT_NE(out.find("  - node1 clock.ntp says so. Fix it.\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("PASS"), std::string::npos) << out;
  EXPECT_EQ(out.find("SKIP"), std::string::npos) << out;
  EXPECT_EQ(out.find("port.rate"), std::string::npos) << out;
  EXPECT_EQ(out.find("bgp.neighbor"), std::string::npos) << out;
  EXPECT_NE(out.find("(4 passed and 3 skipped check(s) not listed: --verbose lists them"),
            std::string::npos)
      << out;
}

TEST(FindingTable, VerboseListsEveryCheck) {
  const std::vector<v1::Finding> checks = Checks();
  const std::string out = RenderFindingTables(Nodes(), checks, /*color=*/false,
                                              /*all_rows=*/true);
  for (const v1::Finding& check : checks) {
    const std::string label = check.status() == v1::Finding::pass      ? "PASS"
                              : check.status() == v1::Finding::skipped ? "SKIP"
                                                                       : "";
    if (!label.empty() && !check.node().empty()) {
      EXPECT_TRUE(HasLineWith(out, check.id(), label)) << check.id() << "\n" << out;
    }
  }
  EXPECT_TRUE(HasLineWith(out, "collectives.run", "PASS")) << out;
  EXPECT_NE(out.find("node2  (10.0.0.2:7070)\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("not listed"), std::string::npos) << out;
  EXPECT_EQ(out.find("passed,"), std::string::npos) << out;
}

TEST(FindingTable, NothingHiddenNoHint) {
  const std::vector<v1::Finding> checks = {Check("clock.ntp", "node1", v1::Finding::fail)};
  const std::string out = RenderFindingTables(Nodes(), checks, false, false);
  EXPECT_NE(out.find("node1  (10.0.0.1:7070): 0 passed, 0 skipped, 1 not passing:"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("not listed"), std::string::npos) << out;
}

}  // namespace
}  // namespace clustercert::controller
