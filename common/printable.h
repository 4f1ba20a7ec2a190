#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace clustercert {

// `text` as it may appear in a message or a log line when it came from the
// network or from a file the agent did not write: bytes outside printable
// ASCII become \xNN and the text is cut after `max_chars` with "...", so a
// hostile value can neither forge a line nor flood one.
std::string PrintableText(absl::string_view text, size_t max_chars = 256);

}  // namespace clustercert
