#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/unique_fd.h"

namespace clustercert {

// Opening files that an operator, a plan or another user can name.
//
// open(2) on a FIFO blocks until a writer appears, and read(2) on /dev/zero
// never ends, so a path that names anything but a regular file can hang a CLI
// or a daemon's thread, or exhaust its memory. Every file the project reads
// on someone's word (keys, plans, TLS files, a capture tree) goes through
// here. The path is first opened O_PATH, which opens nothing (no FIFO
// blocks, no device acts on open), and fstat'ed; only a regular file is then
// opened, non-blocking, through that descriptor. Anything else is refused
// naming the path, what it was meant to be ("signing key") and what it is
// ("a FIFO"), and a read stops one byte past a stated cap. Errors keep the
// errno meaning (NotFound, PermissionDenied); a special file is
// FailedPrecondition, a file over the cap ResourceExhausted.

// "a regular file", "a directory", "a FIFO", "a character device", "a block
// device", "a socket", "a symlink": for messages.
std::string FileTypeText(mode_t mode);

// `path` opened read-only, close-on-exec, non-blocking, and checked to be a
// regular file. `what` names the file's role in messages ("signing key").
// With `follow_symlinks` false a symlink as the last component is refused
// (O_NOFOLLOW), for files whose name must not be redirected.
absl::StatusOr<UniqueFd> OpenRegularFile(const std::string& path, absl::string_view what,
                                         bool follow_symlinks);

// The same beneath an open directory: `name` is one entry of `dir_fd` and
// `path` its full name for messages.
absl::StatusOr<UniqueFd> OpenRegularFileAt(int dir_fd, const std::string& name,
                                           const std::string& path, absl::string_view what,
                                           bool follow_symlinks);

// The second half of every open here, for callers that resolve the path
// their own way (the rooted sysfs view, the plan): `path_fd` is an O_PATH
// descriptor whose fstat gave `checked`, a regular file. Opens that file for
// reading (non-blocking, close-on-exec) through /proc/self/fd, so the file
// whose type was checked is the one opened even if its name now leads
// elsewhere; where /proc is not mounted, `open_by_name` opens it by name
// (non-blocking) and the result must be the same file (device and inode).
// Errors name `what` and `path`.
absl::StatusOr<UniqueFd> ReopenSameFile(int path_fd, const struct stat& checked,
                                        const std::function<UniqueFd()>& open_by_name,
                                        const std::string& path, absl::string_view what);

// Everything from an open descriptor, at most `max_bytes`: a longer file is
// ResourceExhausted naming the size and the cap, never silently cut.
absl::StatusOr<std::string> ReadOpenFile(int fd, const std::string& path, size_t max_bytes,
                                         absl::string_view what);

// Reads the whole of a regular file, at most max_bytes; refuses a FIFO, device, socket or
// directory naming the path
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes,
                                            absl::string_view what);

// The names in the open directory `dir_fd` (never "." or ".."), unsorted,
// that `keep` accepts; at most `max_kept` of them: one more is
// ResourceExhausted, so a caller's cap holds without reading a whole huge
// directory. Lists from the first entry each time (through a duplicate that
// is rewound: it shares the offset); `dir_fd` stays open. Errors name `path`
// and `what`.
absl::StatusOr<std::vector<std::string>> ListOpenDirectory(
    int dir_fd, const std::string& path, absl::string_view what,
    const std::function<bool(absl::string_view)>& keep, size_t max_kept);

// For files whose contents are trusted (trusted keys, their directory, a
// capture directory): OK when `info` is owned by root or by the effective
// user running us and neither group nor others may write it; otherwise
// PermissionDenied naming the path, the owner and mode found and the
// chown/chmod that fixes it, then `or_instead` when the caller has another
// fix ("name a new directory").
absl::Status CheckTrustedOwnership(const struct stat& info, const std::string& path,
                                   absl::string_view what, absl::string_view or_instead = "");

}  // namespace clustercert
