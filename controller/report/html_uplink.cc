#include "controller/report/html_uplink.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/checks/status_text.h"
#include "controller/report/html_parts.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

std::string Gbps(double value) { return absl::StrCat(FormatNumber(value), " Gb/s"); }

// The status badge of the finding with `id` on `node` (and `device`), or "".
std::string StatusOf(const v1::Certificate& c, const std::string& id, const std::string& node,
                     const std::string& device = "") {
  for (const v1::Finding& f : c.checks()) {
    if (f.id() == id && f.node() == node && (device.empty() || f.device() == device)) {
      return FindingBadge(f.status(), f.severity());
    }
  }
  return "";
}

std::string SizingHtml(const v1::Certificate& c) {
  const v1::UplinkSizing& s = c.uplink().sizing();
  std::vector<std::pair<std::string, std::string>> rows = {
      {"workload", s.profile().empty() ? std::string("no read rate in the plan") : s.profile()},
      {"arithmetic", s.arithmetic()},
      {"basis", s.basis()},
      {"required", s.required_gbps() > 0
                       ? absl::StrCat(Gbps(s.required_gbps()), " (",
                                      FormatNumber(s.required_gbytes_s()), " GB/s)")
                       : std::string()},
      {"capacity", s.capacity_gbps() > 0 ? Gbps(s.capacity_gbps()) : std::string("not given")},
      {"verdict", checks::StatusText(s.verdict())},
      {"headroom", s.verdict() == v1::UplinkSizing::unknown
                       ? std::string()
                       : absl::StrCat(Gbps(s.headroom_gbps()), " (",
                                      absl::StrFormat("%.0f", s.utilisation() * 100), " % used)")},
      {"checkpoint", s.checkpoint_seconds() > 0
                         ? absl::StrCat(FormatNumber(s.checkpoint_gbytes()), " GB in ",
                                        absl::StrFormat("%.1f", s.checkpoint_seconds()), " s")
                         : std::string()},
      {"fabric (east-west line rate)", s.fabric_gbps() > 0 ? Gbps(s.fabric_gbps()) : std::string()},
  };
  std::string out =
      absl::StrCat("<h3>Sizing ", StatusOf(c, "uplink.sizing", ""), "</h3>\n", KeyValueTable(rows));
  if (!s.advice().empty()) {
    out += "<ul class=\"advice\">\n";
    for (const std::string& advice : s.advice()) {
      absl::StrAppend(&out, "<li>", HtmlEscape(advice), "</li>\n");
    }
    out += "</ul>\n";
  }
  return out;
}

std::string ThroughputHtml(const v1::Certificate& c) {
  if (c.uplink().throughput().empty())
    return "<p>No throughput run (the plan names no target).</p>\n";
  std::vector<std::vector<HtmlCell>> rows;
  for (const v1::UplinkThroughput& t : c.uplink().throughput()) {
    std::string per_flow;
    if (t.ok() && t.flow_gbps_size() > 1) {
      per_flow =
          absl::StrCat(FormatNumber(t.min_flow_gbps()), " – ", FormatNumber(t.max_flow_gbps()));
    } else if (t.ok() && t.flow_gbps_size() == 1) {
      per_flow = FormatNumber(t.flow_gbps(0));
    }
    std::string title = t.ok() ? t.detail() : t.error();
    if (IsCarried(t.carried())) absl::StrAppend(&title, " (", CarriedText(t.carried()), ")");
    rows.push_back(
        {Text(t.node()), Text(t.target(), "mono"), Text(t.target_type()),
         Text(absl::StrCat(t.flows()), "num"),
         t.ok() ? Text(FormatNumber(t.aggregate_gbps()), "num") : Html(Badge("fail", "FAILED")),
         Text(per_flow, "num"), Text(t.need_gbps() > 0 ? FormatNumber(t.need_gbps()) : "", "num"),
         Html(StatusOf(c, "uplink.throughput", t.node(), t.target())), Text(title)});
  }
  return absl::StrCat("<h3>Throughput to storage</h3>\n",
                      "<p>One TCP flow uses one NIC and one path; parallel flows are what reach "
                      "the aggregate, so compare the rows of each node and target.</p>\n",
                      HtmlTable({"node", "target", "type", "flows", "aggregate Gb/s",
                                 "per flow Gb/s", "node's need Gb/s", "verdict", "detail"},
                                rows, "compact"));
}

std::string PlanesHtml(const v1::Certificate& c) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const v1::NodeResult& n : c.nodes()) {
    std::string clock = "not measured";
    if (n.clock_measured()) {
      clock =
          absl::StrCat(absl::StrFormat("%+.3f", n.clock_offset_ms()), " ms ± ",
                       absl::StrFormat("%.3f", n.clock_uncertainty_ms()), " (", n.clock_exchanges(),
                       " exchange", n.clock_exchanges() == 1 ? "" : "s", ")");
      if (n.clock_injected_offset_ms() != 0) {
        absl::StrAppend(&clock, ", test-only offset ", FormatNumber(n.clock_injected_offset_ms()),
                        " ms");
      }
    }
    rows.push_back({Text(n.name()), Text(n.inventory().management_address(), "mono"),
                    Text(n.inventory().management_netdev(), "mono"),
                    Text(n.inventory().management_subnet(), "mono"),
                    Html(absl::StrCat(StatusOf(c, "mgmt.separate", n.name()), " ",
                                      StatusOf(c, "mgmt.subnet", n.name()))),
                    Text(clock, "num"), Html(StatusOf(c, "clock.ntp", n.name()))});
  }
  std::string clock_offset;
  for (const v1::Finding& f : c.checks()) {
    if (f.id() == "clock.offset") {
      clock_offset = absl::StrCat("<p>", FindingBadge(f.status(), f.severity()), " ",
                                  HtmlEscape(f.message()), "</p>\n");
    }
  }
  return absl::StrCat("<h3>Management plane and clocks</h3>\n",
                      HtmlTable({"node", "management address", "netdev", "subnet",
                                 "separate / subnet", "clock offset", "NTP"},
                                rows, "compact"),
                      clock_offset);
}

}  // namespace

std::string UplinkSectionHtml(const v1::Certificate& c) {
  std::string out = "<section id=\"uplink\">\n<h2>Uplink</h2>\n";
  if (c.has_uplink()) {
    out += SizingHtml(c) + ThroughputHtml(c);
  } else {
    out += "<p>No uplink phase ran (see Phases).</p>\n";
  }
  out += PlanesHtml(c);
  out += "</section>\n";
  return out;
}

}  // namespace clustercert::controller::report
