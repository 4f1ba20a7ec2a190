#include "controller/report/markdown_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/text_escape.h"
#include "controller/certificate/result_keys.h"
#include "controller/checks/status_text.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/report/incast_rows.h"
#include "controller/report/large_cluster.h"
#include "controller/report/pair_matrices.h"
#include "controller/report/pair_summary.h"
#include "controller/report/report_files.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

constexpr char kCross[] = "\xE2\x9C\x97";  // ✗

// Cells arrive escaped (MarkdownCell, MarkdownCellCode) or are figures and
// words we wrote, so no cell adds a column or a line.
std::string Table(const std::vector<std::string>& headers,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string out = absl::StrCat("| ", absl::StrJoin(headers, " | "), " |\n|");
  for (size_t i = 0; i < headers.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& row : rows) absl::StrAppend(&out, "| ", absl::StrJoin(row, " | "), " |\n");
  return out;
}

std::string StatusLabel(const v1::Finding& f) {
  if (f.status() == v1::Finding::fail)
    return f.severity() == v1::Finding::warning ? "WARN" : "FAIL";
  if (f.status() == v1::Finding::unknown) return "UNKNOWN";
  if (f.status() == v1::Finding::skipped) return "SKIP";
  return "PASS";
}

void Findings(const v1::Certificate& c, std::string& out) {
  out += "## Failing findings\n\n";
  if (c.findings().empty()) {
    out += "No check failed or stayed unknown.\n\n";
    return;
  }
  std::vector<const v1::Finding*> sorted;
  for (const auto& f : c.findings()) sorted.push_back(&f);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return TriageRank(*a) < TriageRank(*b); });
  for (const auto* f : sorted) {
    absl::StrAppend(&out, "### ", f->status() == v1::Finding::fail ? kCross : "?", " ",
                    StatusLabel(*f), " ", MarkdownCode(KeyOf(*f)), "\n\n");
    if (!f->message().empty()) absl::StrAppend(&out, MarkdownText(f->message()), "\n\n");
    if (!f->observed().empty())
      absl::StrAppend(&out, "- Observed: ", MarkdownCode(f->observed()), "\n");
    if (!f->expected().empty())
      absl::StrAppend(&out, "- Expected: ", MarkdownCode(f->expected()), "\n");
    if (IsCarried(f->carried()))
      absl::StrAppend(&out, "- ", MarkdownText(CarriedText(f->carried())), "\n");
    if (!f->remedy().empty())
      absl::StrAppend(&out, "- **Remedy:** ", MarkdownText(f->remedy()), "\n");
    out += "\n";
  }
}

// The client x server table of a matrix up to kMaxNodesForFullMatrix nodes.
void FullMatrix(const PairMatrix& m, std::string& out) {
  int failing = 0;
  for (const auto& [ends, p] : m.cells) failing += IsFailingCell(*p) ? 1 : 0;
  absl::StrAppend(&out, "### ", MarkdownText(m.Title()), " (", MarkdownText(m.unit),
                  ", client rows \xC3\x97 server columns, ", failing, " failing)\n\n");
  std::vector<std::string> headers = {"client \\ server"};
  for (const auto& n : m.nodes) headers.push_back(MarkdownCell(n));
  std::vector<std::vector<std::string>> rows;
  for (const auto& client : m.nodes) {
    std::vector<std::string> row = {MarkdownCell(client)};
    for (const auto& server : m.nodes) {
      auto it = m.cells.find({client, server});
      if (client == server) {
        row.push_back("\xE2\x80\x94");
      } else if (it == m.cells.end()) {
        row.push_back("\xC2\xB7");
      } else {
        const v1::PairResult& p = *it->second;
        std::string text = p.ok() ? FormatNumber(p.value()) : std::string("ERR");
        if (IsFailingCell(p))
          text = absl::StrCat("**", text, " ", kCross, "**");
        else if (CellStatus(p) == v1::Finding::unknown)
          text += " ?";
        row.push_back(text);
      }
    }
    rows.push_back(std::move(row));
  }
  absl::StrAppend(&out, Table(headers, rows), "\n");
}

// A role's cells, failing cells, worst cell and that cell's partner.
void AppendRole(const RoleSummary& role, bool as_client, std::vector<std::string>& row) {
  const ScaledCell& worst = role.worst;
  const bool fails = worst.pair != nullptr && IsFailingCell(*worst.pair);
  row.push_back(absl::StrCat(role.cells));
  row.push_back(role.failing > 0 ? absl::StrCat("**", role.failing, "**") : "0");
  const std::string value = MarkdownCell(CellValueText(worst));
  row.push_back(fails ? absl::StrCat("**", value, " ", kCross, "**") : value);
  if (worst.pair == nullptr) {
    row.push_back("");
  } else {
    row.push_back(MarkdownCell(as_client ? worst.pair->server() : worst.pair->client()));
  }
}

// A matrix above kMaxNodesForFullMatrix nodes: every failing cell, then one
// row per node, worst first; linear in cells (pair_summary.h).
void PerNodeMatrix(const PairMatrix& m, const v1::Certificate& c, std::string& out) {
  const MatrixSummary summary = SummariseMatrix(m, c);
  absl::StrAppend(&out, "### ", MarkdownText(m.Title()), " (", MarkdownText(m.unit), ", ",
                  m.nodes.size(), " nodes, ", m.cells.size(), " cells, ", summary.failing.size(),
                  " failing)\n\nMore than ", kMaxNodesForFullMatrix,
                  " nodes: summarised per node; every cell is in `", kPairCsvName,
                  "` beside this report.\n\n");
  if (!summary.failing.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& cell : summary.failing) {
      const v1::PairResult& p = *cell.pair;
      rows.push_back({MarkdownCell(p.client()), MarkdownCell(p.server()), MarkdownCell(p.rail()),
                      MarkdownCell(p.memory()), MarkdownCell(CellValueText(cell)),
                      absl::StrCat(kCross, " ", MarkdownCell(checks::StatusText(CellStatus(p)))),
                      MarkdownCell(CellDetailText(p))});
    }
    absl::StrAppend(&out, "Failing cells:\n\n",
                    Table({"client", "server", "rail", "memory", "value", "status", "why"}, rows),
                    "\n");
  }
  const std::string basis = RatioBasis(m.kind);
  std::vector<std::vector<std::string>> rows;
  for (const auto& node : summary.nodes) {
    std::vector<std::string> row = {MarkdownCell(node.node)};
    AppendRole(node.as_client, /*as_client=*/true, row);
    AppendRole(node.as_server, /*as_client=*/false, row);
    rows.push_back(std::move(row));
  }
  absl::StrAppend(
      &out, "Per node, worst first:\n\n",
      Table({"node", "cells as client", "failing",
             absl::StrCat("worst as client (% of ", basis, ")"), "its server", "cells as server",
             "failing", absl::StrCat("worst as server (% of ", basis, ")"), "its client"},
            rows),
      "\n");
  if (!summary.without_cells.empty()) {
    absl::StrAppend(&out, summary.without_cells.size(), " node(s) have no cell in this matrix: ",
                    MarkdownText(absl::StrJoin(summary.without_cells, ", ")), "\n\n");
  }
}

void Matrices(const v1::Certificate& c, std::string& out) {
  const auto matrices = GroupPairMatrices(c);
  if (matrices.empty() && c.pairs().empty()) return;
  out += "## Pairwise\n\n";
  for (const auto& m : matrices) {
    if (ShownPerNode(m)) {
      PerNodeMatrix(m, c, out);
    } else {
      FullMatrix(m, out);
    }
  }
  const auto retests = Retests(c);
  if (!retests.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto* p : retests) {
      const bool failing = CellStatus(*p) == v1::Finding::fail || !p->ok();
      rows.push_back({MarkdownCellCode(controller::PairKey(*p)),
                      p->ok() ? absl::StrCat(FormatNumber(p->value()), " ", MarkdownCell(p->unit()))
                              : std::string("ERR"),
                      failing ? absl::StrCat(kCross, " fail")
                              : MarkdownCell(checks::StatusText(CellStatus(*p)))});
    }
    absl::StrAppend(&out, "Retests against passing partners:\n\n",
                    Table({"retest", "value", "status"}, rows), "\n");
  }
}

// pairwise.incast: one row per round, its verdict the worst of its findings.
void Incast(const v1::Certificate& c, std::string& out) {
  if (c.incast().empty()) return;
  std::vector<std::vector<std::string>> rows;
  for (const IncastRow& row : IncastRows(c)) {
    const v1::IncastResult& round = *row.round;
    std::string verdict = row.status == v1::Finding::fail && row.severity != v1::Finding::warning
                              ? absl::StrCat("**", kCross, " ", MarkdownCell(row.verdict), "**")
                              : MarkdownCell(row.verdict);
    if (!round.error().empty()) absl::StrAppend(&verdict, "; ", MarkdownCell(round.error()));
    if (IsCarried(round.carried())) {
      absl::StrAppend(&verdict, "; ", MarkdownCell(CarriedText(round.carried())));
    }
    rows.push_back({MarkdownCell(round.receiver()), MarkdownCell(round.rail()),
                    MarkdownCell(row.senders), MarkdownCell(row.per_sender),
                    MarkdownCell(row.aggregate), MarkdownCell(row.line_rate),
                    MarkdownCell(row.fairness), verdict});
  }
  absl::StrAppend(&out, "## Incast\n\n",
                  "k senders write to one receiver at once, each receiver in turn; the "
                  "receiver's port is the congestion point.\n\n",
                  Table({"receiver", "rail", "senders", "per sender Gb/s", "aggregate Gb/s",
                         "line rate Gb/s", "fairness", "verdict"},
                        rows),
                  "\n");
}

void Sweeps(const v1::Certificate& c, std::string& out) {
  if (c.collectives().empty()) return;
  out += "## Collectives\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : c.collectives()) {
    std::string status =
        s.ok() ? "ran" : absl::StrCat(kCross, " failed: ", MarkdownCell(s.error()));
    std::string floor = s.min_busbw_gbytes() > 0 ? FormatNumber(s.min_busbw_gbytes()) : "none";
    for (const auto& f : c.checks()) {
      if (f.id() == "collectives.busbw" && controller::FindingOfSweep(f, s)) {
        if (s.min_busbw_gbytes() <= 0 && !f.expected().empty())
          floor = MarkdownCellCode(f.expected());
        const std::string busbw =
            absl::StrCat("busbw ", f.status() == v1::Finding::fail
                                       ? absl::StrCat(kCross, " fail")
                                       : MarkdownCell(checks::StatusText(f.status())));
        status = s.ok() ? busbw : absl::StrCat(status, "; ", busbw);
      }
    }
    if (IsCarried(s.carried()))
      absl::StrAppend(&status, "; ", MarkdownCell(CarriedText(s.carried())));
    rows.push_back(
        {MarkdownCell(controller::SweepName(s)), MarkdownCell(absl::StrJoin(s.nodes(), ", ")),
         MarkdownCell(absl::StrCat(s.backend(), " ", s.transport())), absl::StrCat(s.ranks()),
         absl::StrCat(FormatNumber(s.large_busbw_gbytes()),
                      s.large_from_bytes() > 0
                          ? absl::StrCat(" (from ", FormatBytes(s.large_from_bytes()), ")")
                          : std::string()),
         floor, status});
  }
  absl::StrAppend(
      &out,
      Table({"scope", "nodes", "backend", "ranks", "large busbw GB/s", "floor", "result"}, rows),
      "\n");
}

void Suspects(const v1::Certificate& c, std::string& out) {
  if (c.suspects().empty()) return;
  out += "## Suspects\n\n";
  for (const auto& s : c.suspects()) {
    std::string who = s.node().empty() ? std::string("the fabric") : s.node();
    if (!s.rail().empty()) absl::StrAppend(&who, " ", s.rail());
    absl::StrAppend(&out, "- **", MarkdownText(who), "**: ", s.failing_pairs(), " of ",
                    s.total_pairs(), " pair(s) failing. ", MarkdownText(s.reason()), "\n");
    for (const auto& f : s.inventory_findings()) {
      absl::StrAppend(&out, "  - ", StatusLabel(f), " ", MarkdownCode(KeyOf(f)), ": ",
                      MarkdownText(f.message()), f.remedy().empty() ? "" : " ",
                      MarkdownText(f.remedy()), "\n");
    }
  }
  out += "\n";
}

// Subjects named per skipped group; its count says how many there are.
constexpr size_t kSkipSubjectsShown = 10;

// Above kMaxNodesForPerNodeDetail nodes: one row per check id with its
// counts. Every check that did not pass is already under Failing findings.
void CheckTallies(const v1::Certificate& c, std::string& out) {
  if (c.checks().empty() || !CondensedForScale(c.nodes_size())) return;
  std::vector<std::vector<std::string>> rows;
  for (const CheckTally& t : TallyChecks(c.checks())) {
    auto count = [](int n, bool bold) {
      return bold && n > 0 ? absl::StrCat("**", n, "**") : absl::StrCat(n);
    };
    rows.push_back({MarkdownCellCode(t.id), absl::StrCat(t.nodes), count(t.pass, false),
                    count(t.warn, true), count(t.fail, true), count(t.unknown, true),
                    count(t.skipped, false)});
  }
  absl::StrAppend(&out, "## Checks\n\n", c.checks_size(), " checks on ", c.nodes_size(),
                  " nodes, counted per check (more than ", kMaxNodesForPerNodeDetail,
                  " nodes); each one that did not pass is under Failing findings, each one "
                  "skipped under Skipped, every check in the certificate.\n\n",
                  Table({"check", "nodes", "pass", "warn", "fail", "unknown", "skipped"}, rows),
                  "\n");
}

// Above kMaxNodesForPerNodeDetail nodes: skipped tests grouped by kind,
// check and reason.
void GroupedSkipped(const v1::Certificate& c, std::string& out) {
  std::vector<std::vector<std::string>> rows;
  for (const SkipGroup& g : GroupSkipped(c.skipped())) {
    rows.push_back({MarkdownCell(g.kind), MarkdownCellCode(g.what), MarkdownCell(g.reason),
                    absl::StrCat(std::max<size_t>(g.subjects.size(), 1)), absl::StrCat(g.nodes),
                    MarkdownCell(NodeRanges(g.subjects, kSkipSubjectsShown))});
  }
  absl::StrAppend(&out, "## Skipped\n\n", c.skipped_size(),
                  " skipped test(s), grouped by kind, check and reason (more than ",
                  kMaxNodesForPerNodeDetail, " nodes); every entry is in the certificate.\n\n",
                  Table({"kind", "what", "reason", "count", "nodes", "where"}, rows), "\n");
}

void Skipped(const v1::Certificate& c, std::string& out) {
  if (!c.skipped().empty() && CondensedForScale(c.nodes_size())) {
    GroupedSkipped(c, out);
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : c.skipped()) {
    rows.push_back({MarkdownCell(s.kind()), MarkdownCellCode(s.key()), MarkdownCell(s.reason())});
  }
  for (const auto& p : c.phases()) {
    if (p.status() == v1::PhaseResult::skipped && c.skipped().empty()) {
      const std::string& detail = p.detail();
      rows.push_back(
          {"phase", MarkdownCellCode(p.name()),
           MarkdownCell(absl::StartsWith(detail, "skipped: ") ? detail.substr(9) : detail)});
    }
  }
  if (rows.empty()) return;
  absl::StrAppend(&out, "## Skipped\n\n", Table({"kind", "what", "reason"}, rows), "\n");
}

}  // namespace

void Uplink(const v1::Certificate& c, std::string& out) {
  if (!c.has_uplink()) return;
  const v1::UplinkSizing& s = c.uplink().sizing();
  out += "## Uplink\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"workload", MarkdownCell(s.profile().empty() ? "no read rate in the plan" : s.profile())},
      {"arithmetic", MarkdownCell(s.arithmetic())},
      {"required", absl::StrCat(FormatNumber(s.required_gbps()), " Gb/s (",
                                FormatNumber(s.required_gbytes_s()), " GB/s)")},
      {"capacity", absl::StrCat(FormatNumber(s.capacity_gbps()), " Gb/s")},
      {"verdict", absl::StrCat("**", MarkdownCell(checks::StatusText(s.verdict())), "**")},
      {"headroom", absl::StrCat(FormatNumber(s.headroom_gbps()), " Gb/s")}};
  if (s.checkpoint_seconds() > 0) {
    rows.push_back({"checkpoint", absl::StrCat(FormatNumber(s.checkpoint_gbytes()), " GB in ",
                                               FormatNumber(s.checkpoint_seconds()), " s")});
  }
  absl::StrAppend(&out, Table({"sizing", "value"}, rows), "\n");
  for (const auto& advice : s.advice()) absl::StrAppend(&out, "- ", MarkdownText(advice), "\n");
  if (!s.advice().empty()) out += "\n";
  std::vector<std::vector<std::string>> runs;
  for (const auto& t : c.uplink().throughput()) {
    std::string per_flow;
    if (t.ok() && t.flow_gbps_size() > 0) {
      per_flow = t.flow_gbps_size() == 1 ? FormatNumber(t.flow_gbps(0))
                                         : absl::StrCat(FormatNumber(t.min_flow_gbps()), "-",
                                                        FormatNumber(t.max_flow_gbps()));
    }
    runs.push_back({MarkdownCell(t.node()), MarkdownCellCode(t.target()),
                    MarkdownCell(t.target_type()), absl::StrCat(t.flows()),
                    t.ok() ? FormatNumber(t.aggregate_gbps()) : "failed", per_flow,
                    t.need_gbps() > 0 ? FormatNumber(t.need_gbps()) : "",
                    MarkdownCell(t.ok() ? "" : t.error())});
  }
  if (!runs.empty()) {
    absl::StrAppend(&out,
                    Table({"node", "target", "type", "flows", "aggregate Gb/s", "per flow Gb/s",
                           "need Gb/s", "error"},
                          runs),
                    "\n");
  }
}

std::string RenderMarkdownReport(const v1::Certificate& c) {
  const bool certified = c.verdict() == "certified";
  std::string out =
      absl::StrCat("# ", certified ? "\xE2\x9C\x85 CERTIFIED" : "\xE2\x9D\x8C NOT CERTIFIED", ": ",
                   MarkdownText(c.cluster()), "\n\n");
  std::string run =
      absl::StrCat(MarkdownCell(c.started_at()), " \xE2\x86\x92 ", MarkdownCell(c.finished_at()));
  if (int64_t ms = MillisBetween(c.started_at(), c.finished_at()); ms >= 0) {
    absl::StrAppend(&run, " (", FormatDurationMs(ms), ")");
  }
  std::string signature = "unsigned";
  if (c.has_signature() && !c.signature().public_key_fingerprint().empty()) {
    signature =
        absl::StrCat("signed by ", MarkdownCellCode(c.signature().public_key_fingerprint()));
  }
  std::vector<std::vector<std::string>> rows = {
      {"verdict", absl::StrCat("**", MarkdownCell(c.verdict()), "**")},
      {"plan",
       absl::StrCat(MarkdownCellCode(c.plan_path()), c.plan_sha256().empty() ? "" : " sha256 ",
                    c.plan_sha256().empty() ? "" : MarkdownCellCode(c.plan_sha256()))},
      {"run", run},
      {"tool", absl::StrCat(MarkdownCell(c.tool()), " ", MarkdownCell(c.tool_version()),
                            ", format ", c.format_version())},
      {"signature", signature}};
  if (c.has_baseline() && !c.baseline().path().empty()) {
    rows.push_back(
        {"baseline", absl::StrCat(MarkdownCellCode(c.baseline().path()), " of ",
                                  MarkdownCell(c.baseline().started_at()), "; measured again: ",
                                  MarkdownCell(absl::StrJoin(c.baseline().only_nodes(), ", ")))});
  }
  absl::StrAppend(&out, Table({"field", "value"}, rows), "\n");
  if (!c.verdict_reasons().empty()) {
    out += "## Reasons\n\n";
    for (const auto& reason : c.verdict_reasons())
      absl::StrAppend(&out, "- ", MarkdownText(reason), "\n");
    out += "\n";
  }
  std::vector<std::string> unreachable;
  for (const auto& node : c.nodes()) {
    if (!node.reachable()) {
      unreachable.push_back(
          absl::StrCat(MarkdownText(node.name()), " (", MarkdownText(node.error()), ")"));
    }
  }
  if (!unreachable.empty()) {
    absl::StrAppend(&out, "Unreachable: ", absl::StrJoin(unreachable, "; "), "\n\n");
  }
  Findings(c, out);
  CheckTallies(c, out);
  Suspects(c, out);
  Matrices(c, out);
  Incast(c, out);
  Sweeps(c, out);
  Uplink(c, out);
  Skipped(c, out);
  return out;
}

}  // namespace clustercert::controller::report
