#include "common/quoted_text.h"

#include "absl/strings/str_cat.h"

namespace clustercert {

std::string QuotedText(absl::string_view text, size_t max_chars) {
  if (text.size() > max_chars) return absl::StrCat("'", text.substr(0, max_chars), "…'");
  return absl::StrCat("'", text, "'");
}

}  // namespace clustercert
