#include "common/text_escape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace clustercert {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What an agent's strings were seen to carry (issue 15, "escaping
// everywhere"): a terminal clear and window title, a Markdown row and link,
// HTML, a C0 byte, an 8-bit CSI, a right-to-left override and broken UTF-8.
constexpr char kTerminalAttack[] = "node1\x1b[2J\x1b]0;pwned\x07";
constexpr char kCsi8Bit[] =
    "a\xC2\x9B"
    "31mred";  // U+009B, the one-character CSI
constexpr char kRtlOverride[] =
    "gpu\xE2\x80\xAE"
    "0";  // U+202E
constexpr char kReplacement[] = "\xEF\xBF\xBD";

TEST(TextEscape, TerminalTextMakesEveryControlVisible) {
  EXPECT_EQ(TerminalText(kTerminalAttack), "node1\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(TerminalText("line\nforged\rover\ttab"), "line\\nforged\\rover\\ttab");
  EXPECT_EQ(TerminalText(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
  EXPECT_EQ(TerminalText(kCsi8Bit), "a\\u009b31mred");
  EXPECT_EQ(TerminalText(kRtlOverride), "gpu\\u202e0");
  // Printable UTF-8 (a product name with a trademark sign) passes untouched.
  EXPECT_EQ(TerminalText("ConnectX\xC2\xAE-7 caf\xC3\xA9 \xE2\x9C\x97"),
            "ConnectX\xC2\xAE-7 caf\xC3\xA9 \xE2\x9C\x97");
}

TEST(TextEscape, TerminalTextIsStableWhenAppliedTwice) {
  // Lines mixing our words with an agent's may pass two writers.
  const std::string once = TerminalText(kTerminalAttack);
  EXPECT_EQ(TerminalText(once), once);
}

TEST(TextEscape, TerminalBlockKeepsLinesButNotCarriageReturns) {
  EXPECT_EQ(TerminalBlock("size\tbusbw\n8\t0.1\r\x1b[1Afake\n"),
            "size\tbusbw\n8\t0.1\\r\\x1b[1Afake\n");
}

TEST(TextEscape, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = kReplacement;
  EXPECT_EQ(TerminalText("a\xFF"
                         "b"),
            "a" + r + "b");  // never a lead byte
  EXPECT_EQ(TerminalText("a\x80"
                         "b"),
            "a" + r + "b");  // stray continuation
  EXPECT_EQ(TerminalText("a\xC0\xAF"
                         "b"),
            "a" + r + r + "b");  // overlong '/'
  EXPECT_EQ(TerminalText("a\xED\xA0\x80"
                         "b"),
            "a" + r + r + r + "b");                                   // lone surrogate
  EXPECT_EQ(TerminalText("a\xF4\x90\x80\x80"), "a" + r + r + r + r);  // beyond U+10FFFF
  EXPECT_EQ(TerminalText("a\xE2\x9C"
                         "b"),
            "a" + r + "b");  // truncated: one maximal subpart
  EXPECT_EQ(TerminalText("end\xF0\x9F"), "end" + r);
  EXPECT_EQ(TerminalText("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");  // a valid 4-byte character
  for (const std::string& out : {MarkdownText("\xC3\x28"), HtmlEscape("\xC3\x28"),
                                 XmlEscape("\xC3\x28"), MarkdownCode("\xC3\x28")}) {
    EXPECT_THAT(out, HasSubstr(r)) << out;
    EXPECT_THAT(out, Not(HasSubstr("\xC3\x28"))) << out;
  }
}

TEST(TextEscape, MarkdownTextCannotOpenLinksImagesHtmlOrBlocks) {
  EXPECT_EQ(MarkdownText("[click](http://evil)"), "\\[click\\](http://evil)");
  EXPECT_EQ(MarkdownText("![img](http://evil/x.png)"), "!\\[img\\](http://evil/x.png)");
  EXPECT_EQ(MarkdownText("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)>");
  EXPECT_EQ(MarkdownText("&lt;b&gt;"), "&amp;lt;b&amp;gt;");
  EXPECT_EQ(MarkdownText("*bold* `code` ~~gone~~ \\"),
            "\\*bold\\* \\`code\\` \\~\\~gone\\~\\~ \\\\");
  EXPECT_EQ(MarkdownText("_em_ write_bw"), "\\_em\\_ write_bw");
  EXPECT_EQ(MarkdownText("# title"), "\\# title");
  EXPECT_EQ(MarkdownText("> quote"), "\\> quote");
  EXPECT_EQ(MarkdownText("- item"), "\\- item");
  EXPECT_EQ(MarkdownText("12. item"), "12\\. item");
  EXPECT_EQ(MarkdownText("node1 -> node2"), "node1 -> node2");
  EXPECT_EQ(MarkdownText("one\ntwo\r\nthree"), "one two  three");
  // Visible escapes are themselves escaped, so they render as typed.
  EXPECT_EQ(MarkdownText(kTerminalAttack), "node1\\\\x1b\\[2J\\\\x1b\\]0;pwned\\\\x07");
}

TEST(TextEscape, MarkdownCellKeepsTheRowsColumns) {
  EXPECT_EQ(MarkdownCell("ConnectX | forged |\n| forged | row |"),
            "ConnectX \\| forged \\| \\| forged \\| row \\|");
  EXPECT_EQ(MarkdownCellCode("a|b"), "`a\\|b`");
}

TEST(TextEscape, MarkdownCodeFencesOutlastTheTextsBackticks) {
  EXPECT_EQ(MarkdownCode("plain"), "`plain`");
  EXPECT_EQ(MarkdownCode(""), "");
  EXPECT_EQ(MarkdownCode("a `tick` here"), "``a `tick` here``");
  EXPECT_EQ(MarkdownCode("`edge"), "`` `edge ``");
  EXPECT_EQ(MarkdownCode("two\nlines"), "`two lines`");
  EXPECT_EQ(MarkdownCode(kTerminalAttack), "`node1\\x1b[2J\\x1b]0;pwned\\x07`");
  EXPECT_EQ(MarkdownCode("<img src=x>"), "`<img src=x>`");  // literal inside a span
}

TEST(TextEscape, HtmlEscapeCoversTextAndAttributes) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">Tom & 'Jerry'</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(HtmlEscape("pre\n\tkept\r"), "pre\n\tkept\\r");
  EXPECT_EQ(HtmlEscape(kTerminalAttack), "node1\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(HtmlEscape(kRtlOverride), "gpu\\u202e0");
}

TEST(TextEscape, XmlEscapeLeavesOnlyCharactersXml10Allows) {
  EXPECT_EQ(XmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(XmlEscape("line\nnext\ttab\r"), "line&#10;next&#9;tab\\r");
  EXPECT_EQ(XmlEscape(std::string("nul\0bell\x07 soh\x01 esc\x1b", 19)),
            "nul\\x00bell\\x07 soh\\x01 esc\\x1b");
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBE\xEF\xBF\xBF"), "\\ufffe\\uffff");  // XML 1.0 non-characters
  EXPECT_EQ(XmlEscape("\xE2\x9C\x97"), "\xE2\x9C\x97");
}

TEST(TextEscape, JsonEscapeKeepsTheValueForMachinesAndNothingForTerminals) {
  EXPECT_EQ(JsonEscape("say \"hi\"\\\n"), "say \\\"hi\\\"\\\\\\n");
  EXPECT_EQ(JsonEscape(kTerminalAttack), "node1\\u001b[2J\\u001b]0;pwned\\u0007");
  EXPECT_EQ(JsonEscape(kCsi8Bit), "a\\u009b31mred");
  EXPECT_EQ(JsonEscape("\xFF"), kReplacement);
}

TEST(TextEscape, Utf8PrefixNeverCutsACharacter) {
  const std::string text =
      "ab\xE2\x9C\x97"
      "c";  // a, b, a 3-byte cross, c
  EXPECT_EQ(Utf8Prefix(text, 2), 2u);
  EXPECT_EQ(Utf8Prefix(text, 3), 2u);
  EXPECT_EQ(Utf8Prefix(text, 4), 2u);
  EXPECT_EQ(Utf8Prefix(text, 5), 5u);
  EXPECT_EQ(Utf8Prefix(text, 99), text.size());
  EXPECT_EQ(Utf8Length(text), 4u);
}

}  // namespace
}  // namespace clustercert
