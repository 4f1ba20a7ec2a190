#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace clustercert {

// Neutralisers for text that did not come from us: node, device and netdev
// names, PCI VPD and nvidia-smi strings, firmware versions, NCCL log lines and
// the errors an agent returns. One function per sink, applied where the text
// is written (the certificate keeps the raw recorded value). Every sink gets
// the same guarantees:
//   - invalid UTF-8 (truncated or overlong sequences, surrogates, beyond
//     U+10FFFF, stray continuation bytes) becomes U+FFFD, one per maximal
//     ill-formed subpart as Unicode recommends;
//   - C0 controls, DEL, C1 controls, the bidirectional overrides/isolates
//     that reorder what a reader sees (CVE-2021-42574) and U+2028/U+2029
//     become visible escapes: "\x1b", "\x7f", "\u009b", "\u202e". These
//     escapes leave backslashes alone, so a terminal line that mixes our own
//     words with an agent's comes out the same if it is neutralised twice.
// Where a sink keeps line breaks or turns them into spaces is said below.

// A single-line terminal field (a node name, an error in a table row): line
// breaks and tabs become "\n", "\r", "\t" too, so nothing can start a forged
// line or move the cursor.
std::string TerminalText(absl::string_view text);

// Terminal text written as a block (an nccl-tests table): '\n' and '\t' are
// kept, every other control (including '\r', which would overwrite the line)
// becomes visible.
std::string TerminalBlock(absl::string_view text);

// Markdown prose (a paragraph, a list item, a heading's text): line breaks
// and tabs become spaces, so a list item stays one item; '\', '`', '*', '~',
// '[', ']', '#', '&' and '<' are escaped, so the text cannot open code, emphasis,
// strikethrough, a link, an image, an entity, a heading or raw HTML ('!'
// opens an image only before a '[', which is escaped); '_' is escaped unless
// it sits inside a word (write_bw stays readable, and GitHub Markdown never
// opens emphasis there); '>', '+', '-', '=' and "1." are escaped only where
// they begin the text, the one place they start a quote, list or rule.
// Mid-line '>' is inert once '<' is escaped ("node1 -> node2" stays).
std::string MarkdownText(absl::string_view text);

// A Markdown table cell: MarkdownText plus '|', so the row keeps its columns.
std::string MarkdownCell(absl::string_view text);

// An inline code span whose fence is longer than any backtick run in the
// text; line breaks and tabs become spaces, controls become visible. Nothing
// inside a code span is markup. Empty text gives an empty string.
std::string MarkdownCode(absl::string_view text);

// A code span inside a table cell: GitHub needs '|' escaped even there.
std::string MarkdownCellCode(absl::string_view text);

// HTML element text and double- or single-quoted attribute values: &, <, >,
// " and ' as entities; '\n' and '\t' kept (a <pre> keeps its lines), '\r'
// visible like every other control (the file may be read on a terminal).
std::string HtmlEscape(absl::string_view text);

// XML 1.0 text and attribute values (junit.xml): the HTML entities with
// &apos;, '\n' and '\t' as character references so attributes keep them,
// '\r' visible, and every character XML 1.0 cannot carry even as a reference (C0
// controls, U+FFFE, U+FFFF, lone surrogates) made visible, so a strict
// parser accepts the file.
std::string XmlEscape(absl::string_view text);

// The inside of a JSON string (RFC 8259) for output a person may read on a
// terminal: '"' and '\' escaped, every hidden character above as a \u
// escape (the value survives exactly for a JSON reader), invalid UTF-8 as
// U+FFFD, since JSON text must be UTF-8.
std::string JsonEscape(absl::string_view text);

// The longest prefix of `text` no longer than `max_bytes` that ends on a
// character boundary: cutting a label never leaves half a UTF-8 sequence.
size_t Utf8Prefix(absl::string_view text, size_t max_bytes);

// Characters (code points) in valid UTF-8: the columns a Latin-script label
// takes in a terminal table.
size_t Utf8Length(absl::string_view text);

}  // namespace clustercert
