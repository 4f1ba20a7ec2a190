#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// `prefix` followed by 128 bits from the kernel's CSPRNG (getrandom(2)) as 32
// lower-case hex digits, e.g. "ep-3f0c...". The agent names endpoints and
// collective jobs this way so that an id cannot be guessed from the ones a
// caller was given: a sequential "ep-7" let any caller close another's test.
// Internal error only when the kernel refuses randomness (no getrandom).
absl::StatusOr<std::string> RandomId(absl::string_view prefix);

}  // namespace clustercert
