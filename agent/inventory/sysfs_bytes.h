#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/sysfs_view.h"

namespace clustercert::inventory {

// The raw bytes of the file at host path `path` under `view` (symlinks
// resolved inside the root, as SysfsView does), nothing trimmed: for binary
// sysfs files (a PCI function's `vpd` and `config`) and for copying a file
// byte for byte. Reads at most `max_bytes`; a longer file is
// ResourceExhausted, never silently cut. Errors keep SysfsView's errno
// meaning (NotFound, PermissionDenied, InvalidArgument, Unavailable) and name
// the path.
absl::StatusOr<std::string> ReadSysfsBytes(const SysfsView& view, absl::string_view path,
                                           size_t max_bytes);

}  // namespace clustercert::inventory
