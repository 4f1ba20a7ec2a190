#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace clustercert {

// Pieces of a tool's output or a host file as an error sentence shows them.
// The bytes are kept as they are: text that came from a remote peer wants
// PrintableText (common/printable.h) instead.

// `text` in single quotes, cut after `max_chars` bytes with "…" so that a long
// output cannot swamp the sentence: "'5.15.0-91-generic'".
std::string QuotedText(absl::string_view text, size_t max_chars);

// The first line of `text` that is not blank, without its surrounding white
// space; "" when there is none.
std::string FirstLine(absl::string_view text);

}  // namespace clustercert
