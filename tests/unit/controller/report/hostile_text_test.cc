// Issue 15, "escaping everywhere": a certificate whose agent-sourced strings
// attack each sink (terminal escapes, a forged Markdown row, a link and an
// HTML tag, a C0 byte, broken UTF-8), rendered to report.md, junit.xml,
// report.html and every terminal writer. Each sink must show the text and
// obey none of it. The checks below decode UTF-8 on their own rather than
// through common/text_escape, so a bug there cannot hide itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "controller/certificate/certificate_diff.h"
#include "controller/certificate/certificate_diff_render.h"
#include "controller/commands/finding_table.h"
#include "controller/commands/matrix_table.h"
#include "controller/commands/uplink_table.h"
#include "controller/phases/node_state.h"
#include "controller/phases/progress.h"
#include "controller/report/html_report.h"
#include "controller/report/junit_report.h"
#include "controller/report/markdown_report.h"
#include "tests/support/environment_skip.h"
#include "tests/unit/controller/report/report_test_support.h"

namespace clustercert::controller::report {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A node name that clears the screen and retitles the window.
constexpr char kNode[] = "node1\x1b[2J\x1b]0;pwned\x07";
// A model string (PCI VPD / nvidia-smi) that forges a Markdown table row.
constexpr char kModel[] = "ConnectX-7 | forged |\n| forged | row |";
// A serial that opens a link and an HTML tag with a script.
constexpr char kSerial[] = "[click](http://evil) <img src=x onerror=alert(1)>";
// An agent error with a C0 byte, a carriage return, a cursor-up and an 8-bit CSI.
constexpr char kError[] =
    "agent said \x01 no\r\x1b[1A\xC2\x9B"
    "31m";
// Firmware text that is not UTF-8: a bad continuation, a surrogate, 0xFF.
constexpr char kBroken[] = "fw \xC3\x28 \xED\xA0\x80 \xFF end";
// A right-to-left override in a device name.
constexpr char kDevice[] = "mlx5_0\xE2\x80\xAE";

v1::Finding HostileFinding() {
  v1::Finding f;
  f.set_id("nic.identity");
  f.set_node(kNode);
  f.set_device(kDevice);
  f.set_port(1);
  f.set_status(v1::Finding::fail);
  f.set_severity(v1::Finding::error);
  f.set_observed(kModel);
  f.set_expected(kSerial);
  f.set_message(absl::StrCat(kSerial, " ", kError));
  f.set_remedy(kBroken);
  return f;
}

v1::Certificate Hostile() {
  v1::Certificate c;
  c.set_format_version(4);
  c.set_tool("clustercert");
  c.set_tool_version("test");
  c.set_cluster("lab");
  c.set_started_at("2026-12-01T13:21:44.300Z");
  c.set_finished_at("2026-12-01T13:25:08.091Z");
  c.set_verdict("not-certified");
  c.add_verdict_reasons(absl::StrCat(kNode, " is unreachable: ", kError));

  v1::NodeResult* down = c.add_nodes();
  down->set_name(kNode);
  down->set_agent("10.0.0.1:7443");
  down->set_error(kError);
  v1::NodeResult* up = c.add_nodes();
  up->set_name("node2");
  up->set_agent("10.0.0.2:7443");
  up->set_reachable(true);
  up->set_agent_version(kBroken);
  v1::Inventory* inventory = up->mutable_inventory();
  v1::RdmaDevice* nic = inventory->add_rdma_devices();
  nic->set_name(kDevice);
  nic->set_fw_ver(kBroken);
  nic->set_model(kModel);
  nic->set_board_id(kSerial);
  v1::PciFunction* fn = inventory->add_pci();
  fn->set_name(kDevice);
  fn->set_product_name(kModel);
  fn->set_serial_number(kSerial);
  v1::Gpu* gpu = inventory->mutable_gpu_runtime()->add_gpus();
  gpu->set_name(kModel);
  gpu->set_serial(kSerial);
  gpu->set_part_number(kBroken);

  *c.add_findings() = HostileFinding();
  *c.add_checks() = HostileFinding();

  v1::PairResult* pair = c.add_pairs();
  pair->set_test("write_bw");
  pair->set_engine("verbs");
  pair->set_memory("host");
  pair->set_client(kNode);
  pair->set_server("node2");
  pair->set_rail(kDevice);
  pair->set_unit("Gb/s");
  pair->set_error(kError);
  pair->add_counter_concerns(kModel);
  *pair->mutable_verdict() = HostileFinding();
  pair->mutable_verdict()->set_id("pairwise.bandwidth");

  v1::Suspect* suspect = c.add_suspects();
  suspect->set_node(kNode);
  suspect->set_rail(kDevice);
  suspect->set_failing_pairs(1);
  suspect->set_total_pairs(1);
  suspect->set_reason(kModel);
  *suspect->add_inventory_findings() = HostileFinding();

  v1::CollectiveSweep* sweep = c.add_collectives();
  sweep->set_scope("2-node");
  sweep->add_nodes(kNode);
  sweep->add_nodes("node2");
  sweep->set_backend("nccl");
  sweep->set_launcher("agents");
  sweep->set_transport(kSerial);
  sweep->set_error(kError);
  sweep->add_rank_errors(kModel);
  sweep->add_notes(kBroken);
  sweep->mutable_nccl_transport()->add_channels(kError);

  v1::UplinkSizing* sizing = c.mutable_uplink()->mutable_sizing();
  sizing->set_verdict(v1::UplinkSizing::fits);
  sizing->set_arithmetic(kModel);
  sizing->add_advice(kSerial);
  v1::UplinkThroughput* run = c.mutable_uplink()->add_throughput();
  run->set_node(kNode);
  run->set_target(kSerial);
  run->set_target_type("http");
  run->set_flows(1);
  run->set_error(kError);

  v1::SkippedTest* skipped = c.add_skipped();
  skipped->set_kind("check");
  skipped->set_key(kModel);
  skipped->set_reason(kSerial);
  v1::PhaseResult* phase = c.add_phases();
  phase->set_name("connect");
  phase->set_status(v1::PhaseResult::fail);
  phase->set_detail(kError);
  return c;
}

// One code point from UTF-8, or -1 and a length of 1 for an ill-formed byte.
int32_t NextCodePoint(const std::string& s, size_t i, size_t* length) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  *length = 1;
  if (b(i) < 0x80) return b(i);
  const size_t n = b(i) >= 0xF0 ? 4 : b(i) >= 0xE0 ? 3 : b(i) >= 0xC0 ? 2 : 0;
  if (n == 0 || b(i) > 0xF4 || i + n > s.size()) return -1;
  int32_t cp = b(i) & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  const int32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  *length = n;
  return cp;
}

// Where `text` holds what a terminal would obey or could not decode: a
// control other than '\n', DEL, a C1 control, a bidi override, invalid UTF-8.
// `ours` says whether a sequence at i is one of our own colours or line
// erasures (then its length), which are allowed.
std::string Hidden(const std::string& text,
                   const std::function<size_t(const std::string&, size_t)>& ours = nullptr) {
  for (size_t i = 0; i < text.size();) {
    if (ours) {
      if (const size_t n = ours(text, i); n > 0) {
        i += n;
        continue;
      }
    }
    size_t length;
    const int32_t cp = NextCodePoint(text, i, &length);
    const bool hidden = cp < 0 || (cp < 0x20 && cp != '\n') || (cp >= 0x7F && cp <= 0x9F) ||
                        (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
    if (hidden) {
      return absl::StrFormat("U+%04X (or a bad byte 0x%02x) at offset %d in: %s", cp,
                             static_cast<unsigned char>(text[i]), i,
                             text.substr(i >= 40 ? i - 40 : 0, 80));
    }
    i += length;
  }
  return "";
}

// Our SGR colours ("\x1b[31m", "\x1b[0m", "\x1b[1m") and the progress bar's
// "\r\x1b[2K": the only escape sequences a terminal writer may emit.
size_t OwnSequence(const std::string& text, size_t i) {
  if (text.compare(i, 5, "\r\x1b[2K") == 0) return 5;
  if (text[i] != '\x1b' || i + 1 >= text.size() || text[i + 1] != '[') return 0;
  size_t j = i + 2;
  while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == ';')) {
    ++j;
  }
  return j < text.size() && text[j] == 'm' ? j + 1 - i : 0;
}

// XML 1.0's Char production, over the whole document.
std::string NotXml10(const std::string& xml) {
  for (size_t i = 0; i < xml.size();) {
    size_t length;
    const int32_t cp = NextCodePoint(xml, i, &length);
    const bool ok = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                    (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
    if (!ok) {
      return absl::StrFormat("not an XML 1.0 character at offset %d: %s", i,
                             xml.substr(i >= 40 ? i - 40 : 0, 80));
    }
    i += length;
  }
  return "";
}

// A GitHub table splits cells at every '|' not right after a backslash,
// code spans included.
size_t CellSeparators(absl::string_view line) {
  size_t n = 0;
  for (size_t i = 0; i < line.size(); ++i) n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  return n;
}

// The first '[' or '<' that Markdown would act on: outside code spans and
// not escaped. Either would open a link, an image or HTML.
std::string ActiveMarkup(absl::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
    } else if (line[i] == '`') {
      size_t run = 0;
      while (i + run < line.size() && line[i + run] == '`') ++run;
      const size_t close = line.find(std::string(run, '`'), i + run);
      if (close == absl::string_view::npos) return std::string(line.substr(i));  // unclosed
      i = close + run - 1;
    } else if (line[i] == '[' || line[i] == '<') {
      return std::string(line.substr(i));
    }
  }
  return "";
}

TEST(HostileText, ReportMdKeepsItsTablesAndOpensNoLinkOrHtml) {
  const std::string md = RenderMarkdownReport(Hostile());
  EXPECT_EQ(Hidden(md), "");
  EXPECT_THAT(md, HasSubstr("node1\\\\x1b\\[2J\\\\x1b\\]0;pwned\\\\x07"));  // shown, not obeyed
  EXPECT_THAT(md, HasSubstr("\\[click\\](http://evil) &lt;img src=x onerror=alert(1)>"));
  EXPECT_THAT(md, HasSubstr("agent said \\\\x01 no \\\\x1b\\[1A\\\\u009b31m"));  // '\r': a space
  EXPECT_THAT(md, HasSubstr("fw \xEF\xBF\xBD("));
  size_t columns = 0, rows = 0;
  for (absl::string_view line : absl::StrSplit(md, '\n')) {
    EXPECT_EQ(ActiveMarkup(line), "") << line;
    if (line.empty() || line[0] != '|') {
      columns = 0;
      continue;
    }
    EXPECT_FALSE(absl::StartsWith(line, "| forged")) << line;
    if (columns == 0) {
      columns = CellSeparators(line);
    } else {
      EXPECT_EQ(CellSeparators(line), columns) << line;
      ++rows;
    }
  }
  EXPECT_GT(rows, 8u);  // the fields, matrix, retests, sweeps, uplink and skipped tables
}

TEST(HostileText, JunitXmlIsStrictXml10) {
  const std::string xml = RenderJunitReport(Hostile());
  EXPECT_EQ(NotXml10(xml), "");
  auto document = testing::ParseMarkup(xml, /*html=*/false);
  ASSERT_NE(document, nullptr);
  bool found = false;
  for (const auto* failure : document->FindAll("failure")) {
    if (failure->Attr("message").find("agent said \\x01 no\\r\\x1b[1A\\u009b31m") !=
        std::string::npos) {
      found = true;
    }
  }
  EXPECT_TRUE(found) << xml;

  // expat (python3's xml.etree) is the strict parser CI tools use.
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") != 0) {
    SKIP_FOR_ENVIRONMENT("python3-xml")
        << "python3 with xml.etree is not installed; the XML 1.0 check above ran";
  }
  const std::string path = absl::StrCat(::testing::TempDir(), "/hostile_junit.xml");
  std::ofstream(path, std::ios::binary) << xml;
  const std::string script =
      absl::StrCat(CLUSTERCERT_SOURCE_DIR, "/tests/report/validate_junit.py");
  EXPECT_EQ(std::system(absl::StrCat("python3 ", script, " ", path).c_str()), 0);
}

TEST(HostileText, ReportHtmlHasNoInjectedTagOrHandler) {
  const std::string html = RenderHtmlReport(Hostile());
  EXPECT_EQ(Hidden(html,
                   [](const std::string& t, size_t i) -> size_t {
                     return t[i] == '\t' ? 1 : 0;  // our <style> is indented with tabs
                   }),
            "");
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(html, HasSubstr("node1\\x1b[2J\\x1b]0;pwned\\x07"));
  auto document = testing::ParseMarkup(html, /*html=*/true);
  ASSERT_NE(document, nullptr);
  EXPECT_THAT(document->FindAll("img"), IsEmpty());
  EXPECT_EQ(document->FindAll("script").size(), 0u);
  std::vector<const testing::Element*> all = {document.get()};
  for (size_t i = 0; i < all.size(); ++i) {
    for (const auto& child : all[i]->children) all.push_back(child.get());
    for (const auto& [name, value] : all[i]->attributes) {
      EXPECT_FALSE(absl::StartsWith(name, "on")) << all[i]->tag << " " << name;
    }
    if (all[i]->tag == "a") {
      EXPECT_TRUE(absl::StartsWith(all[i]->Attr("href"), "#")) << all[i]->Attr("href");
    }
  }
}

std::vector<controller::NodeState> HostileNodes() {
  std::vector<controller::NodeState> nodes(2);
  nodes[0].node.name = kNode;
  nodes[0].node.agent = "10.0.0.1:7443";
  nodes[1].node.name = "node2";
  nodes[1].node.agent = "10.0.0.2:7443";
  nodes[1].reachable = true;
  nodes[1].version.set_agent_version(kError);
  return nodes;
}

TEST(HostileText, TerminalTablesShowAgentsTextButObeyNone) {
  const v1::Certificate c = Hostile();
  const std::vector<v1::Finding> checks(c.checks().begin(), c.checks().end());
  for (bool color : {false, true}) {
    const std::string findings = controller::RenderFindingTables(HostileNodes(), checks, color);
    EXPECT_EQ(Hidden(findings, OwnSequence), "") << findings;
    EXPECT_THAT(findings, HasSubstr("node1\\x1b[2J\\x1b]0;pwned\\x07"));
    EXPECT_THAT(findings, HasSubstr("agent said \\x01 no\\r\\x1b[1A\\u009b31m"));
    EXPECT_THAT(findings, HasSubstr("mlx5_0\\u202e/1"));
    EXPECT_THAT(findings, HasSubstr("ConnectX-7 | forged |\\n| forged"));

    const std::string matrices =
        controller::RenderPairMatrices({kNode, "node2"}, {c.pairs().begin(), c.pairs().end()},
                                       {c.suspects().begin(), c.suspects().end()}, color);
    EXPECT_EQ(Hidden(matrices, OwnSequence), "") << matrices;
    EXPECT_THAT(matrices, HasSubstr("suspect node1\\x1b[2J\\x1b]0;pwned\\x07/mlx5_0\\u202e"));
  }
  const std::string uplink = controller::RenderUplinkTables(c.uplink());
  EXPECT_EQ(Hidden(uplink), "") << uplink;
  EXPECT_THAT(uplink, HasSubstr("node1\\x1b[2J"));
}

TEST(HostileText, DiffTextAndJsonCarryNoTerminalControls) {
  const v1::Certificate old_cert = Hostile();
  v1::Certificate new_cert = Hostile();
  new_cert.set_cluster(kNode);
  new_cert.mutable_checks(0)->set_status(v1::Finding::unknown);
  new_cert.mutable_checks(0)->set_observed(kError);
  new_cert.mutable_nodes(1)->mutable_inventory()->mutable_rdma_devices(0)->set_fw_ver(kError);
  const controller::CertificateDiff diff = controller::DiffCertificates(old_cert, new_cert, {});
  ASSERT_FALSE(diff.entries.empty());
  for (bool color : {false, true}) {
    const std::string text = controller::RenderDiffText(diff, color);
    EXPECT_EQ(Hidden(text, OwnSequence), "") << text;
    EXPECT_THAT(text, HasSubstr("node1\\x1b[2J\\x1b]0;pwned\\x07"));
  }
  const std::string json = controller::RenderDiffJson(diff);
  EXPECT_EQ(Hidden(json), "") << json;
  EXPECT_THAT(json, HasSubstr("node1\\u001b[2J\\u001b]0;pwned\\u0007"));
  EXPECT_THAT(json, HasSubstr("\\u009b31m"));
}

// A FILE* the test reads back.
class CapturedFile {
 public:
  CapturedFile() : file_(open_memstream(&buffer_, &size_)) {}
  ~CapturedFile() {
    std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* get() { return file_; }
  std::string Text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

TEST(HostileText, ProgressLinesBlocksAndBarsObeyNoAgent) {
  for (bool tty : {false, true}) {
    CapturedFile out;
    controller::Progress progress(out.get(), /*quiet=*/false, tty,
                                  [] { return absl::UnixEpoch(); });
    progress.Line("connect", absl::StrCat(kNode, " unreachable: ", kError));
    progress.Block(absl::StrCat("#  size  busbw\n", kBroken, "\r\x1b[1A", kModel, "\n"));
    progress.StartBar("pairwise", 2, "cells");
    progress.Advance("pairwise", 1, 2, absl::StrCat(kNode, "->node2 write_bw"));
    progress.EndBar();
    const std::string text = out.Text();
    EXPECT_EQ(Hidden(text, OwnSequence), "") << (tty ? "tty: " : "log: ") << text;
    EXPECT_THAT(text, HasSubstr("[connect] node1\\x1b[2J\\x1b]0;pwned\\x07 unreachable"));
    EXPECT_THAT(text, HasSubstr("\\r\\x1b[1AConnectX-7 | forged |\n| forged | row |\n"));
    if (tty) {
      EXPECT_THAT(text, HasSubstr("node1\\x1b[2J\\x1b]0;pwned\\x07->node2 write_bw"));
    }
  }
}

}  // namespace
}  // namespace clustercert::controller::report
