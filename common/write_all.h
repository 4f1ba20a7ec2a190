#pragma once

#include "absl/strings/string_view.h"

namespace clustercert {

// Writes the whole of `bytes` to `fd`, through short writes and signals
// (EINTR); false, with errno set, when a write fails or writes nothing.
bool WriteAll(int fd, absl::string_view bytes);

}  // namespace clustercert
