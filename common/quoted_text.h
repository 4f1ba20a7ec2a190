#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace clustercert {

// `text` in single quotes for an error sentence, cut after `max_chars` bytes
// with "…" so that a long tool output or file cannot swamp the sentence:
// "'5.15.0-91-generic'". The bytes are kept as they are; a caller quoting
// what a remote peer sent wants PrintableText (common/printable.h) instead.
std::string QuotedText(absl::string_view text, size_t max_chars);

}  // namespace clustercert
