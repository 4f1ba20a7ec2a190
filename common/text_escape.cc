#include "common/text_escape.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustercert {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
constexpr char32_t kInvalid = 0xFFFD;

struct CodePoint {
  char32_t value;
  size_t length;  // bytes consumed
  bool valid;
};

// One code point at text[i], by the table of well-formed sequences in
// Unicode 15 section 3.9 (D92). An ill-formed sequence consumes its maximal
// subpart: the lead byte and the continuation bytes that were still
// acceptable, so "\xE2\x9C" then "x" is one U+FFFD and an "x".
CodePoint DecodeAt(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1, true};
  size_t need;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  char32_t value;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    value = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    value = lead & 0x07;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // beyond U+10FFFF
  } else {
    return {kInvalid, 1, false};  // stray continuation byte, C0/C1 overlong lead, F5..FF
  }
  for (size_t k = 1; k <= need; ++k) {
    const unsigned char lo = k == 1 ? low : 0x80, hi = k == 1 ? high : 0xBF;
    if (i + k >= text.size() || byte(i + k) < lo || byte(i + k) > hi) {
      return {kInvalid, k, false};
    }
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  return {value, need + 1, true};
}

// Characters a reader cannot see that change what they see: controls that
// move the cursor, recolour or retitle a terminal, and the bidirectional
// controls that reorder a line.
bool IsHidden(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

void AppendVisible(char32_t c, std::string& out) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
  }
  if (c < 0x80) {
    out += absl::StrFormat("\\x%02x", static_cast<unsigned>(c));
  } else {
    out += absl::StrFormat("\\u%04x", static_cast<unsigned>(c));
  }
}

// Calls emit(code point, its bytes) for each character of valid UTF-8, with
// U+FFFD and its bytes in place of each ill-formed subpart.
template <typename Emit>
void ForEachCodePoint(absl::string_view text, Emit emit) {
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = DecodeAt(text, i);
    emit(cp.value, cp.valid ? text.substr(i, cp.length) : absl::string_view(kReplacement));
    i += cp.length;
  }
}

// The loop every sink shares: `escape(c, out)` writes what the sink puts in
// place of a character it rewrites and returns true; every other character is
// copied as its bytes (U+FFFD's for an ill-formed subpart).
template <typename Escape>
std::string Rewrite(absl::string_view text, size_t reserve, Escape escape) {
  std::string out;
  out.reserve(reserve);
  ForEachCodePoint(text, [&](char32_t c, absl::string_view bytes) {
    if (!escape(c, out)) out.append(bytes.data(), bytes.size());
  });
  return out;
}

// A hidden character's visible escape; false, with nothing written, for any other.
bool AppendIfHidden(char32_t c, std::string& out) {
  if (!IsHidden(c)) return false;
  AppendVisible(c, out);
  return true;
}

std::string Terminal(absl::string_view text, bool block) {
  return Rewrite(text, text.size(), [block](char32_t c, std::string& out) {
    // A block keeps its line breaks and tabs as they are.
    if (block && (c == '\n' || c == '\t')) return false;
    return AppendIfHidden(c, out);
  });
}

bool IsWordByte(char c) { return absl::ascii_isalnum(c) || static_cast<unsigned char>(c) >= 0x80; }

// Markdown prose over text that is already valid UTF-8 with no controls.
std::string MarkdownEscapeClean(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '~':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      case '_': {
        const bool inside_word =
            i > 0 && i + 1 < text.size() && IsWordByte(text[i - 1]) && IsWordByte(text[i + 1]);
        if (!inside_word) out += '\\';
        out += c;
        break;
      }
      case '<':
        out += "&lt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  // What opens a block only at the start of a line: a quote, a bullet, a
  // thematic break or setext underline, or an ordered list ("1." / "1)").
  if (!out.empty() && (out[0] == '>' || out[0] == '+' || out[0] == '-' || out[0] == '=')) {
    out.insert(0, "\\");
  } else {
    size_t digits = 0;
    while (digits < out.size() && absl::ascii_isdigit(out[digits])) ++digits;
    if (digits > 0 && digits < out.size() && (out[digits] == '.' || out[digits] == ')')) {
      out.insert(digits, "\\");
    }
  }
  return out;
}

// Line breaks and tabs as spaces, other hidden characters visible, invalid
// UTF-8 replaced: what every Markdown form starts from.
std::string MarkdownClean(absl::string_view text) {
  return Rewrite(text, text.size(), [](char32_t c, std::string& out) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      return true;
    }
    return AppendIfHidden(c, out);
  });
}

std::string EscapePipes(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string EscapeMarkup(absl::string_view text, bool xml) {
  return Rewrite(text, text.size() + text.size() / 8, [xml](char32_t c, std::string& out) {
    switch (c) {
      case '&':
        out += "&amp;";
        return true;
      case '<':
        out += "&lt;";
        return true;
      case '>':
        out += "&gt;";
        return true;
      case '"':
        out += "&quot;";
        return true;
      case '\'':
        out += xml ? "&apos;" : "&#39;";
        return true;
      case '\n':
      case '\t':
        // XML attribute normalisation turns raw line breaks and tabs into
        // spaces; a reference survives it. '\r' is not kept: read on a
        // terminal it would return to the start of the line and overwrite it.
        if (!xml) return false;
        absl::StrAppendFormat(&out, "&#%d;", static_cast<int>(c));
        return true;
    }
    if (c == 0xFFFE || c == 0xFFFF) {
      AppendVisible(c, out);
      return true;
    }
    return AppendIfHidden(c, out);
  });
}

std::string Json(absl::string_view text) {
  return Rewrite(text, text.size(), [](char32_t c, std::string& out) {
    switch (c) {
      case '"':
        out += "\\\"";
        return true;
      case '\\':
        out += "\\\\";
        return true;
      case '\n':
        out += "\\n";
        return true;
      case '\r':
        out += "\\r";
        return true;
      case '\t':
        out += "\\t";
        return true;
    }
    if (!IsHidden(c)) return false;
    out += absl::StrFormat("\\u%04x", static_cast<unsigned>(c));
    return true;
  });
}

}  // namespace

std::string TerminalText(absl::string_view text) { return Terminal(text, /*block=*/false); }

std::string TerminalBlock(absl::string_view text) { return Terminal(text, /*block=*/true); }

std::string MarkdownText(absl::string_view text) {
  return MarkdownEscapeClean(MarkdownClean(text));
}

std::string MarkdownCell(absl::string_view text) { return EscapePipes(MarkdownText(text)); }

std::string MarkdownCode(absl::string_view text) {
  const std::string body = MarkdownClean(text);
  if (body.empty()) return "";  // "``" would show as two backticks
  size_t run = 0, longest = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // A space between fence and text that starts or ends with a backtick; the
  // renderer strips one space from each side.
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`' ||
                                     (body.front() == ' ' && body.back() == ' '));
  return absl::StrCat(fence, pad ? " " : "", body, pad ? " " : "", fence);
}

std::string MarkdownCellCode(absl::string_view text) { return EscapePipes(MarkdownCode(text)); }

std::string HtmlEscape(absl::string_view text) { return EscapeMarkup(text, /*xml=*/false); }

std::string XmlEscape(absl::string_view text) { return EscapeMarkup(text, /*xml=*/true); }

std::string JsonEscape(absl::string_view text) { return Json(text); }

size_t Utf8Prefix(absl::string_view text, size_t max_bytes) {
  if (max_bytes >= text.size()) return text.size();
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) to the start of their character.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return end;
}

size_t Utf8Length(absl::string_view text) {
  size_t length = 0;
  ForEachCodePoint(text, [&](char32_t, absl::string_view) { ++length; });
  return length;
}

}  // namespace clustercert
