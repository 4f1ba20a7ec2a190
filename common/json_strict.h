#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// A strict pre-pass over JSON text before protobuf's JSON mapping reads it.
//
// protobuf's JsonStringToMessage keeps the last of two equal keys, while
// other readers (jq's first-wins tools, a Python script's hooks) may keep the
// first: a signed certificate with `"verdict":"not-certified"` prepended as a
// duplicate still verified, and a first-wins reader then saw the forged
// value. The JSON mapping also accepts a field under both its proto name and
// its lowerCamel name ("avg_gbps", "avgGbps"), another way to say one field
// twice. This pass refuses both, and anything else that two readers could
// read differently: invalid UTF-8, a lone surrogate escape, nesting deeper
// than `max_depth`, and text after the value. It runs in one linear pass
// (keys are kept per open object in hash sets) with recursion bounded by
// `max_depth`.
//
// Returns InvalidArgument naming `name`, the line and byte offset, and for a
// duplicate the key and where it first appeared.
//
// Keys are compared as protobuf compares field names (escapes decoded,
// "a_b" equal to "aB"), so two keys of a proto map that differ only that way
// are refused too; no map in this project's files is keyed like that.
absl::Status CheckStrictJson(absl::string_view json, absl::string_view name,
                             size_t max_depth = 100);

}  // namespace clustercert
