#include "controller/report/html_report.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/certificate/result_keys.h"
#include "controller/checks/status_text.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/report/html_incast.h"
#include "controller/report/html_inventory.h"
#include "controller/report/html_large_cluster.h"
#include "controller/report/html_pair_summary.h"
#include "controller/report/html_parts.h"
#include "controller/report/html_style.h"
#include "controller/report/html_uplink.h"
#include "controller/report/large_cluster.h"
#include "controller/report/pair_matrices.h"
#include "controller/report/pair_summary.h"
#include "controller/report/report_text.h"
#include "controller/report/svg_charts.h"

namespace clustercert::controller::report {
namespace {

bool Certified(const v1::Certificate& c) { return c.verdict() == "certified"; }

std::string CarriedBadge(const v1::Carried& carried) {
  return IsCarried(carried) ? absl::StrCat(" ", Badge("carried", CarriedText(carried))) : "";
}

std::string SignatureLine(const v1::Certificate& c) {
  if (!c.has_signature() || c.signature().public_key_fingerprint().empty()) return "unsigned";
  const v1::Signature& s = c.signature();
  return absl::StrCat("signed (", s.algorithm().empty() ? "ed25519" : s.algorithm(), ") by key ",
                      s.public_key_fingerprint(), ", ", s.sections_size(),
                      " section digest(s); this report does not verify it");
}

int CountCarried(const v1::Certificate& c) {
  int n = 0;
  for (const auto& f : c.checks()) n += IsCarried(f.carried()) ? 1 : 0;
  for (const auto& p : c.pairs()) n += IsCarried(p.carried()) ? 1 : 0;
  for (const auto& s : c.collectives()) n += IsCarried(s.carried()) ? 1 : 0;
  for (const auto& node : c.nodes()) n += IsCarried(node.carried()) ? 1 : 0;
  return n;
}

std::string BaselineLine(const v1::Certificate& c) {
  if (!c.has_baseline()) return "";
  const v1::Baseline& b = c.baseline();
  if (b.path().empty() && b.sha256().empty() && b.started_at().empty()) return "";
  std::string text = absl::StrCat("partial re-certification of ", b.path());
  if (!b.started_at().empty()) absl::StrAppend(&text, " (run of ", b.started_at(), ")");
  if (!b.sha256().empty()) absl::StrAppend(&text, ", sha256 ", b.sha256());
  if (!b.only_nodes().empty()) {
    absl::StrAppend(&text, "; measured again: ", absl::StrJoin(b.only_nodes(), ", "));
  }
  absl::StrAppend(&text, "; ", CountCarried(c),
                  " result(s) carried over, each marked with its age");
  return text;
}

std::string Banner(const v1::Certificate& c) {
  const bool ok = Certified(c);
  std::string out =
      absl::StrCat("<header class=\"banner ", ok ? "certified" : "not-certified", "\">\n<h1>",
                   ok ? "CERTIFIED" : "NOT CERTIFIED", "</h1>\n<div class=\"sub\">",
                   HtmlEscape(c.cluster().empty() ? "(unnamed cluster)" : c.cluster()),
                   " &middot; ", HtmlEscape(c.started_at()), "</div>\n");
  if (!c.verdict_reasons().empty()) {
    out += "<ul class=\"reasons\">\n";
    for (const auto& reason : c.verdict_reasons()) {
      absl::StrAppend(&out, "<li>", HtmlEscape(reason), "</li>\n");
    }
    out += "</ul>\n";
  } else if (!ok) {
    absl::StrAppend(&out, "<ul class=\"reasons\"><li>verdict '", HtmlEscape(c.verdict()),
                    "' with no reasons recorded</li></ul>\n");
  }
  out += "</header>\n";
  return out;
}

std::string Provenance(const v1::Certificate& c) {
  std::string run = absl::StrCat(c.started_at(), " \xE2\x86\x92 ", c.finished_at());
  if (int64_t ms = MillisBetween(c.started_at(), c.finished_at()); ms >= 0) {
    absl::StrAppend(&run, " (", FormatDurationMs(ms), ")");
  }
  std::vector<std::pair<std::string, std::string>> rows = {
      {"cluster", c.cluster()},
      {"verdict", c.verdict()},
      {"plan", c.plan_path()},
      {"plan sha256", c.plan_sha256()},
      {"run", run},
      {"tool",
       absl::StrCat(c.tool(), " ", c.tool_version(), ", certificate format ", c.format_version())},
      {"signature", SignatureLine(c)},
      {"baseline", BaselineLine(c)},
  };
  return KeyValueTable(rows);
}

std::string Nav(const v1::Certificate& c) {
  std::vector<std::pair<const char*, const char*>> links = {
      {"findings", "Findings"}, {"localisation", "Localisation"}, {"pairwise", "Pairwise"},
      {"latency", "Latency"},   {"collectives", "Collectives"},   {"uplink", "Uplink"},
      {"phases", "Phases"},     {"skipped", "Skipped"},           {"nodes", "Nodes"}};
  if (!c.plan_yaml().empty()) links.push_back({"plan", "Plan"});
  if (!c.incast().empty()) links.insert(links.begin() + 3, {"incast", "Incast"});
  std::string out = "<nav>";
  for (const auto& [id, label] : links)
    absl::StrAppend(&out, "<a href=\"#", id, "\">", label, "</a>");
  out += "</nav>\n";
  return out;
}

std::string FindingCard(const v1::Finding& f) {
  const std::string cls = f.status() == v1::Finding::fail && f.severity() == v1::Finding::warning
                              ? "warn"
                              : checks::StatusText(f.status());
  std::string where = f.node();
  if (!f.device().empty()) absl::StrAppend(&where, where.empty() ? "" : " ", f.device());
  if (f.port() != 0) absl::StrAppend(&where, " port ", f.port());
  std::string out = absl::StrCat(
      "<div class=\"finding ", Anchor(cls), "\">", FindingBadge(f.status(), f.severity()),
      " <span class=\"key\">", HtmlEscape(KeyOf(f)), "</span> <span class=\"muted\">",
      HtmlEscape(checks::StatusText(f.severity())), where.empty() ? "" : " &middot; ",
      HtmlEscape(where), "</span>", CarriedBadge(f.carried()), "\n<dl>");
  auto item = [&](const char* label, const std::string& value, const char* cls = "") {
    if (value.empty()) return;
    absl::StrAppend(&out, "<dt>", label, "</dt><dd class=\"", cls, "\">", HtmlEscape(value),
                    "</dd>");
  };
  item("message", f.message());
  item("observed", f.observed());
  item("expected", f.expected());
  if (f.has_value()) {
    item("value", absl::StrCat(FormatNumber(f.value()), " ", f.unit(), " (threshold ",
                               FormatNumber(f.threshold()), " ", f.unit(), ")"));
  }
  item("remedy", f.remedy(), "remedy");
  out += "</dl></div>\n";
  return out;
}

std::vector<const v1::Finding*> Triaged(const google::protobuf::RepeatedPtrField<v1::Finding>& in) {
  std::vector<const v1::Finding*> out;
  for (const auto& f : in) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto* a, const auto* b) { return TriageRank(*a) < TriageRank(*b); });
  return out;
}

std::string FindingsSection(const v1::Certificate& c) {
  std::string out = "<section id=\"findings\">\n<h2>Findings</h2>\n";
  if (c.findings().empty()) {
    out += "<p>No check failed or stayed unknown.</p>\n";
  } else {
    absl::StrAppend(&out, "<p>", c.findings_size(),
                    " check(s) failed or stayed unknown, in triage order.</p>\n");
    for (const auto* f : Triaged(c.findings())) out += FindingCard(*f);
  }
  if (!c.checks().empty() && CondensedForScale(c.nodes_size())) {
    out += CheckTallyHtml(c);
  } else if (!c.checks().empty()) {
    std::vector<std::vector<HtmlCell>> rows;
    for (const auto* f : Triaged(c.checks())) {
      rows.push_back({Html(FindingBadge(f->status(), f->severity())),
                      Html(absl::StrCat(HtmlEscape(KeyOf(*f)), CarriedBadge(f->carried())), "mono"),
                      Text(f->observed()), Text(f->expected()),
                      Text(f->status() == v1::Finding::skipped ? f->message() : f->remedy())});
    }
    absl::StrAppend(
        &out, "<details><summary>All ", c.checks_size(),
        " checks evaluated</summary>\n<div class=\"scroll\">",
        HtmlTable({"status", "check", "observed", "expected", "remedy / reason"}, rows, "compact"),
        "</div></details>\n");
  }
  out += "</section>\n";
  return out;
}

std::string LocalisationSection(const v1::Certificate& c) {
  std::string out = "<section id=\"localisation\">\n<h2>Localisation</h2>\n";
  if (c.suspects().empty()) {
    out += "<p>No suspects: no failing pairs point at a node, link or rail.</p>\n";
  }
  for (const auto& s : c.suspects()) {
    std::string who = s.node().empty() ? std::string("the fabric") : s.node();
    if (!s.rail().empty()) absl::StrAppend(&who, " ", s.rail());
    absl::StrAppend(&out, "<div class=\"finding fail\">", Badge("fail", "SUSPECT"),
                    " <span class=\"key\">", HtmlEscape(who), "</span> <span class=\"muted\">",
                    s.failing_pairs(), " of ", s.total_pairs(), " pair(s) failing</span>\n<p>",
                    HtmlEscape(s.reason()), "</p>\n");
    if (s.inventory_findings().empty()) {
      out += "<p class=\"muted\">The inventory checks of this node found nothing.</p>\n";
    } else {
      out += "<p>Its inventory findings, in triage order:</p>\n";
      for (const auto& f : s.inventory_findings()) out += FindingCard(f);
    }
    out += "</div>\n";
  }
  out += "</section>\n";
  return out;
}

std::string MatrixLegend(const PairMatrix& m) {
  std::string out = "<div class=\"legend\">";
  if (m.kind == PairKind::kLatency) {
    absl::StrAppend(&out, "<span><span class=\"swatch\" style=\"background:", PassColor(1),
                    "\"></span>near 0</span><span><span class=\"swatch\" style=\"background:",
                    PassColor(0.5), "\"></span>half the bound</span>",
                    "<span><span class=\"swatch\" style=\"background:", PassColor(0),
                    "\"></span>at the bound</span>");
  } else {
    absl::StrAppend(&out, "<span><span class=\"swatch\" style=\"background:", PassColor(0),
                    "\"></span>at the plan's floor</span><span><span class=\"swatch\" "
                    "style=\"background:",
                    PassColor(0.5), "\"></span>half-way</span>",
                    "<span><span class=\"swatch\" style=\"background:", PassColor(1),
                    "\"></span>line rate</span>");
  }
  absl::StrAppend(&out, "<span><span class=\"swatch\" style=\"background:", kFailColor,
                  "\"></span>\xE2\x9C\x97 failing / did not run</span>",
                  "<span><span class=\"swatch\" style=\"background:", kUnknownColor,
                  "\"></span>unknown</span><span><span class=\"swatch\" style=\"background:",
                  kNotScheduledColor, "\"></span>not scheduled</span></div>\n");
  return out;
}

std::string MatrixTable(const PairMatrix& m) {
  std::vector<std::string> headers = {"client \xE2\x86\x93 / server \xE2\x86\x92"};
  for (const auto& n : m.nodes) headers.push_back(n);
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& client : m.nodes) {
    std::vector<HtmlCell> row = {Text(client)};
    for (const auto& server : m.nodes) {
      auto it = m.cells.find({client, server});
      if (client == server) {
        row.push_back(Text("\xE2\x80\x94", "diag"));
      } else if (it == m.cells.end()) {
        row.push_back(Text("\xC2\xB7", "muted"));
      } else {
        const v1::PairResult& p = *it->second;
        const bool failing = CellStatus(p) == v1::Finding::fail || !p.ok();
        std::string text = p.ok() ? FormatNumber(p.value()) : std::string("ERR");
        if (failing) text = absl::StrCat("\xE2\x9C\x97 ", text);
        if (CellStatus(p) == v1::Finding::unknown) text += " ?";
        if (IsCarried(p.carried())) text += " \xE2\x86\xBA";
        row.push_back(Text(text, failing ? "fail" : ""));
      }
    }
    rows.push_back(std::move(row));
  }
  std::string out = HtmlTable(headers, rows, "matrix compact");
  for (const auto& [ends, p] : m.cells) {
    if (IsCarried(p->carried())) {
      out +=
          "<p class=\"muted\">\xE2\x86\xBA: carried from the baseline; the cell's hover text "
          "says how old it is.</p>\n";
      break;
    }
  }
  return out;
}

// One matrix under its heading: the heatmap and the value table, or above
// kMaxNodesForFullMatrix nodes the per-node summary, which stays linear in
// cells where the heatmap grows with N^2.
std::string MatrixBlock(const PairMatrix& m, const v1::Certificate& c) {
  int failing = 0;
  for (const auto& [ends, p] : m.cells) failing += IsFailingCell(*p) ? 1 : 0;
  std::string out =
      absl::StrCat("<h3 id=\"matrix-", Anchor(m.Title()), "\">", HtmlEscape(m.Title()),
                   " <span class=\"muted\">(", HtmlEscape(m.unit), ", ",
                   m.kind == PairKind::kLatency ? "typical one-way latency against the bound"
                                                : "fraction of line rate",
                   "; ", m.cells.size(), " cell(s), ", failing, " failing)</span></h3>\n");
  if (ShownPerNode(m)) {
    out += PairSummaryHtml(m, c);
  } else {
    absl::StrAppend(&out, MatrixLegend(m), "<div class=\"scroll\">", HeatmapSvg(m, c), "</div>\n");
  }
  if (m.duplicates > 0) {
    absl::StrAppend(&out, "<p class=\"muted\">", m.duplicates,
                    " cell(s) were measured more than once; the last measurement is shown.</p>\n");
  }
  if (!ShownPerNode(m)) {
    absl::StrAppend(&out, "<details", m.nodes.size() <= 12 ? " open" : "", "><summary>values (",
                    HtmlEscape(m.unit), ")</summary>\n<div class=\"scroll\">", MatrixTable(m),
                    "</div></details>\n");
  }
  return out;
}

std::string PairwiseSection(const v1::Certificate& c) {
  std::string out = "<section id=\"pairwise\">\n<h2>Pairwise</h2>\n";
  const auto matrices = GroupPairMatrices(c);
  if (matrices.empty()) out += "<p>No pair was measured.</p>\n";
  for (const auto& m : matrices) out += MatrixBlock(m, c);
  const auto retests = Retests(c);
  if (!retests.empty()) {
    std::vector<std::vector<HtmlCell>> rows;
    for (const auto* p : retests) {
      const bool failing = CellStatus(*p) == v1::Finding::fail || !p->ok();
      rows.push_back({Text(p->retest_of()), Text(controller::PairKey(*p), "mono"),
                      Text(p->ok() ? absl::StrCat(FormatNumber(p->value()), " ", p->unit())
                                   : std::string("ERR"),
                           failing ? "fail" : "num"),
                      Html(FindingBadge(CellStatus(*p), p->verdict().severity())),
                      Text(p->ok() ? p->verdict().message() : p->error())});
    }
    absl::StrAppend(&out, "<h3>Retests against passing partners</h3>\n<div class=\"scroll\">",
                    HtmlTable({"re-checks", "pair", "value", "status", "detail"}, rows, "compact"),
                    "</div>\n");
  }
  std::vector<std::vector<HtmlCell>> concerns;
  for (const auto& p : c.pairs()) {
    for (const auto& concern : p.counter_concerns()) {
      concerns.push_back({Text(controller::PairKey(p), "mono"), Text(concern)});
    }
  }
  if (!concerns.empty()) {
    absl::StrAppend(&out, "<details><summary>", concerns.size(),
                    " port counter concern(s) during the tests</summary>\n<div class=\"scroll\">",
                    HtmlTable({"pair", "counter"}, concerns, "compact"), "</div></details>\n");
  }
  out += "</section>\n";
  return out;
}

std::string LatencySection(const v1::Certificate& c) {
  std::string out = "<section id=\"latency\">\n<h2>Latency</h2>\n";
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& p : c.pairs()) {
    if (KindOf(p) != PairKind::kLatency) continue;
    const auto& l = p.client_result().latency();
    const bool has = p.ok() && p.client_result().has_latency();
    auto num = [&](double v) { return Text(has ? FormatNumber(v) : std::string("-"), "num"); };
    const CellScale scale = ScaleOf(p, c);
    const bool failing = CellStatus(p) == v1::Finding::fail || !p.ok();
    rows.push_back(
        {Text(p.client()), Text(p.server()), Text(p.rail()), Text(p.test()), Text(p.memory()),
         num(l.typical_us()), num(l.p99_us()), num(l.min_us()), num(l.max_us()), num(l.avg_us()),
         Text(has ? absl::StrCat(l.samples()) : std::string("-"), "num"),
         Text(scale.reference > 0 ? FormatNumber(scale.reference) : std::string("-"), "num"),
         Html(absl::StrCat(FindingBadge(CellStatus(p), p.verdict().severity()),
                           p.retest_of().empty() ? "" : " retest", CarriedBadge(p.carried())),
              failing ? "fail" : "")});
  }
  if (rows.empty()) {
    out += "<p>No latency test was measured.</p>\n";
  } else {
    absl::StrAppend(&out, "<div class=\"scroll\">",
                    HtmlTable({"client", "server", "rail", "test", "memory", "typical us", "p99 us",
                               "min us", "max us", "avg us", "samples", "bound us", "status"},
                              rows, "compact"),
                    "</div>\n");
  }
  out += "</section>\n";
  return out;
}

const v1::Finding* BusbwCheck(const v1::Certificate& c, const v1::CollectiveSweep& sweep) {
  for (const auto& f : c.checks()) {
    if (f.id() == "collectives.busbw" && controller::FindingOfSweep(f, sweep)) return &f;
  }
  return nullptr;
}

std::string SweepHeading(const v1::CollectiveSweep& s) {
  return absl::StrCat("<h3 id=\"sweep-", Anchor(controller::SweepName(s)), "\">",
                      HtmlEscape(controller::SweepName(s)),
                      // The name carries any other operation already.
                      controller::OperationOf(s) == "all_reduce" ? " allreduce " : " ",
                      s.ok() ? Badge("pass", "RAN") : Badge("fail", "FAILED"),
                      CarriedBadge(s.carried()), " <span class=\"muted\">", s.ranks(),
                      " rank(s) on ", HtmlEscape(absl::StrJoin(s.nodes(), ", ")), "</span></h3>\n");
}

// "12.3 GB/s (best out-of-place from 64 MiB up), floor 10 GB/s".
std::string LargeBusbwText(const v1::CollectiveSweep& s) {
  std::string large = absl::StrCat(FormatNumber(s.large_busbw_gbytes()), " GB/s");
  if (s.large_from_bytes() > 0) {
    absl::StrAppend(&large, " (best out-of-place from ", FormatBytes(s.large_from_bytes()), " up)");
  }
  if (s.min_busbw_gbytes() > 0) {
    absl::StrAppend(&large, ", floor ", FormatNumber(s.min_busbw_gbytes()), " GB/s");
  }
  return large;
}

// What NCCL's log says it used; "" when the sweep kept no NCCL log.
std::string NcclChannelsText(const v1::CollectiveSweep& s) {
  if (!s.has_nccl_transport()) return "";
  const auto& t = s.nccl_transport();
  return absl::StrCat(t.network().empty() ? "network not logged" : t.network(), "; channels: IB ",
                      t.net_ib_channels(), " (GDR ", t.net_ib_gdr_channels(), "), socket ",
                      t.net_socket_channels(), ", intra-node ", t.intra_node_channels());
}

std::string SweepFacts(const v1::CollectiveSweep& s, const v1::Certificate& c) {
  std::string verdict;
  if (const v1::Finding* check = BusbwCheck(c, s); check != nullptr) {
    verdict = absl::StrCat(checks::StatusText(check->status()), ": ", check->message());
  }
  std::string transport = s.transport();
  if (!s.expected_transport().empty() && s.expected_transport() != s.transport()) {
    absl::StrAppend(&transport, " (the plan asks for ", s.expected_transport(), ")");
  }
  return KeyValueTable({{"backend", absl::StrCat(s.backend(), " via ", s.launcher())},
                        {"transport", transport},
                        {"NCCL", NcclChannelsText(s)},
                        {"large-message busbw", LargeBusbwText(s)},
                        {"busbw check", verdict},
                        {"duration", s.duration_ms() > 0 ? FormatDurationMs(s.duration_ms()) : ""},
                        {"error", s.error()}});
}

std::vector<HtmlCell> SweepRowCells(const v1::CollectiveRow& r) {
  auto num = [](double v) { return Text(FormatNumber(v), "num"); };
  auto wrong = [](int64_t w) {
    return Text(w < 0 ? std::string("n/a") : absl::StrCat(w), w > 0 ? "fail" : "num");
  };
  std::vector<HtmlCell> row = {Text(FormatBytes(r.bytes()), "num"),
                               Text(absl::StrCat(r.bytes()), "num"),
                               Text(absl::StrCat(r.count()), "num"),
                               Text(absl::StrCat(r.type(), " ", r.redop())),
                               num(r.oop_time_us()),
                               num(r.oop_algbw_gbytes()),
                               num(r.oop_busbw_gbytes()),
                               wrong(r.oop_wrong())};
  if (r.has_in_place()) {
    for (auto cell : {num(r.ip_time_us()), num(r.ip_algbw_gbytes()), num(r.ip_busbw_gbytes()),
                      wrong(r.ip_wrong())}) {
      row.push_back(std::move(cell));
    }
  } else {
    for (int i = 0; i < 4; ++i) row.push_back(Text("-", "muted"));
  }
  return row;
}

// The folded table of every size, then the sweep's notes and NCCL channels.
std::string SweepRowsDetails(const v1::CollectiveSweep& s) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& r : s.rows()) rows.push_back(SweepRowCells(r));
  std::string out = absl::StrCat(
      "<details><summary>rows (", s.rows_size(), " sizes)</summary>\n<div class=\"scroll\">",
      HtmlTable(
          {"size", "bytes", "count", "type", "oop time us", "oop algbw GB/s", "oop busbw GB/s",
           "oop #wrong", "ip time us", "ip algbw GB/s", "ip busbw GB/s", "ip #wrong"},
          rows, "compact"),
      "</div>");
  if (!s.notes().empty() || (s.has_nccl_transport() && !s.nccl_transport().channels().empty())) {
    std::vector<std::string> lines(s.notes().begin(), s.notes().end());
    for (const auto& ch : s.nccl_transport().channels()) lines.push_back(ch);
    absl::StrAppend(&out, "<pre>", HtmlEscape(absl::StrJoin(lines, "\n")), "</pre>");
  }
  out += "</details>\n";
  return out;
}

std::string SweepBlock(const v1::CollectiveSweep& s, const v1::Certificate& c) {
  std::string out = SweepHeading(s);
  out += SweepFacts(s, c);
  if (!s.rank_errors().empty()) {
    out += "<ul class=\"error\">";
    for (const auto& e : s.rank_errors()) absl::StrAppend(&out, "<li>", HtmlEscape(e), "</li>");
    out += "</ul>\n";
  }
  const std::string chart = BusbwChartSvg(s);
  if (chart.empty()) {
    out += "<p class=\"muted\">The sweep recorded no sizes.</p>\n";
    return out;
  }
  absl::StrAppend(&out, "<div class=\"scroll\">", chart, "</div>\n", SweepRowsDetails(s));
  return out;
}

std::string CollectivesSection(const v1::Certificate& c) {
  std::string out = "<section id=\"collectives\">\n<h2>Collectives</h2>\n";
  if (c.collectives().empty()) out += "<p>No collective sweep ran.</p>\n";
  for (const auto& s : c.collectives()) out += SweepBlock(s, c);
  out += "</section>\n";
  return out;
}

std::string PhasesSection(const v1::Certificate& c) {
  std::string out = "<section id=\"phases\">\n<h2>Phases</h2>\n";
  std::vector<std::vector<HtmlCell>> rows;
  for (const auto& p : c.phases()) {
    rows.push_back(
        {Text(p.name()),
         Html(Badge(p.status() == v1::PhaseResult::unset_status ? "unknown"
                                                                : checks::StatusText(p.status()))),
         Text(FormatDurationMs(p.duration_ms()), "num"), Text(p.detail())});
  }
  out += rows.empty() ? std::string("<p>No phase is recorded.</p>\n")
                      : HtmlTable({"phase", "status", "duration", "detail"}, rows);
  out += "</section>\n";
  return out;
}

std::string SkippedSection(const v1::Certificate& c) {
  std::string out = "<section id=\"skipped\">\n<h2>Skipped</h2>\n";
  if (c.skipped().empty()) {
    int skipped_checks = 0;
    for (const auto& f : c.checks()) skipped_checks += f.status() == v1::Finding::skipped ? 1 : 0;
    absl::StrAppend(
        &out, "<p>The certificate lists no skipped tests", skipped_checks > 0 ? "; " : ".",
        skipped_checks > 0 ? absl::StrCat(skipped_checks,
                                          " check(s) were not applicable and say why under "
                                          "<a href=\"#findings\">All checks</a>.")
                           : std::string(),
        "</p>\n");
  } else if (CondensedForScale(c.nodes_size())) {
    out += SkipGroupsHtml(c);
  } else {
    std::vector<std::vector<HtmlCell>> rows;
    for (const auto& s : c.skipped()) {
      rows.push_back({Text(s.kind()), Text(s.key(), "mono"), Text(s.reason())});
    }
    out += HtmlTable({"kind", "what", "reason"}, rows, "compact");
  }
  out += "</section>\n";
  return out;
}

std::string NodesSection(const v1::Certificate& c) {
  std::string out = "<section id=\"nodes\">\n<h2>Nodes</h2>\n";
  if (c.nodes().empty()) out += "<p>The certificate lists no nodes.</p>\n";
  if (CondensedForScale(c.nodes_size())) {
    out += GroupedNodesHtml(c);
  } else {
    for (const auto& node : c.nodes()) out += NodeInventoryHtml(node);
  }
  out += "</section>\n";
  return out;
}

}  // namespace

std::string RenderHtmlReport(const v1::Certificate& c) {
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      HtmlEscape(absl::StrCat("clustercert: ", c.cluster(), " ",
                              Certified(c) ? "certified" : "not certified", " ", c.started_at())),
      "</title>\n<style>", ReportStyleSheet(), "</style>\n</head>\n<body>\n", Banner(c), "<main>\n",
      Provenance(c), Nav(c), FindingsSection(c), LocalisationSection(c), PairwiseSection(c),
      IncastSectionHtml(c), LatencySection(c), CollectivesSection(c), UplinkSectionHtml(c),
      PhasesSection(c), SkippedSection(c), NodesSection(c));
  if (!c.plan_yaml().empty()) {
    absl::StrAppend(&out, "<section id=\"plan\">\n<h2>Plan</h2>\n<details><summary>",
                    HtmlEscape(c.plan_path()), " as run</summary><pre>", HtmlEscape(c.plan_yaml()),
                    "</pre></details>\n</section>\n");
  }
  absl::StrAppend(
      &out, "<footer>Rendered from the certificate by ", HtmlEscape(c.tool()), " ",
      HtmlEscape(c.tool_version()),
      "; the certificate JSON remains the record.</footer>\n</main>\n</body>\n</html>\n");
  return out;
}

}  // namespace clustercert::controller::report
