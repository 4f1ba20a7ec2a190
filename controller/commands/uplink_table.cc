#include "controller/commands/uplink_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"
#include "controller/checks/status_text.h"

namespace clustercert::controller {
namespace {

std::string Figure(const v1::UplinkThroughput& run) {
  if (!run.ok()) return "FAILED";
  std::string text = absl::StrFormat("%.3g", run.aggregate_gbps());
  if (run.flows() > 1 && run.flow_gbps_size() > 0) {
    absl::StrAppend(&text,
                    absl::StrFormat(" (%.3g-%.3g)", run.min_flow_gbps(), run.max_flow_gbps()));
  }
  return text;
}

}  // namespace

std::string RenderUplinkTables(const v1::Uplink& uplink) {
  const v1::UplinkSizing& sizing = uplink.sizing();
  std::string out = "\nuplink sizing: ";
  if (sizing.verdict() == v1::UplinkSizing::unknown) {
    absl::StrAppend(&out, "unknown (the plan gives no read rate or no capacity)\n");
  } else {
    absl::StrAppend(&out, absl::StrFormat("%.4g", sizing.required_gbps()), " Gb/s needed (",
                    TerminalText(sizing.arithmetic()), ") of ",
                    absl::StrFormat("%.4g", sizing.capacity_gbps()),
                    " Gb/s: ", checks::StatusText(sizing.verdict()),
                    absl::StrFormat(", headroom %.4g Gb/s", sizing.headroom_gbps()));
    if (sizing.checkpoint_seconds() > 0) {
      absl::StrAppend(
          &out, absl::StrFormat("; a %.4g GB checkpoint takes %.0f s", sizing.checkpoint_gbytes(),
                                sizing.checkpoint_seconds()));
    }
    out += "\n";
  }

  // target -> node -> flows -> run, in the order the runs came.
  std::vector<std::string> targets;
  std::map<std::string, std::string> types;
  std::map<std::string, std::vector<std::string>> nodes;
  std::map<std::string, std::set<int>> flow_counts;
  std::map<std::string, std::map<std::string, std::map<int, const v1::UplinkThroughput*>>> runs;
  for (const v1::UplinkThroughput& run : uplink.throughput()) {
    if (runs.count(run.target()) == 0) targets.push_back(run.target());
    types[run.target()] = run.target_type();
    auto& by_node = runs[run.target()];
    if (by_node.count(run.node()) == 0) nodes[run.target()].push_back(run.node());
    by_node[run.node()][run.flows()] = &run;
    flow_counts[run.target()].insert(run.flows());
  }
  for (const std::string& target : targets) {
    absl::StrAppend(&out, "\nuplink to ", TerminalText(target), " (", TerminalText(types[target]),
                    ", Gb/s: aggregate (per flow min-max))\n");
    // Node names are keys raw and shown neutralised; the column fits what shows.
    size_t width = 6;
    for (const std::string& node : nodes[target]) {
      width = std::max(width, TerminalText(node).size() + 2);
    }
    absl::StrAppend(&out, std::string(width, ' '));
    for (int flows : flow_counts[target]) {
      absl::StrAppend(
          &out, absl::StrFormat("%-22s", absl::StrCat(flows, flows == 1 ? " flow" : " flows")));
    }
    out += "\n";
    for (const std::string& node : nodes[target]) {
      absl::StrAppend(&out, absl::StrFormat("%-*s", static_cast<int>(width), TerminalText(node)));
      for (int flows : flow_counts[target]) {
        auto it = runs[target][node].find(flows);
        absl::StrAppend(
            &out, absl::StrFormat("%-22s", it == runs[target][node].end() ? std::string("-")
                                                                          : Figure(*it->second)));
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace clustercert::controller
