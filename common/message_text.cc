#include "common/message_text.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clustercert {

std::string QuotedText(absl::string_view text, size_t max_chars) {
  if (text.size() > max_chars) return absl::StrCat("'", text.substr(0, max_chars), "…'");
  return absl::StrCat("'", text, "'");
}

std::string FirstLine(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) return std::string(line);
  }
  return "";
}

}  // namespace clustercert
