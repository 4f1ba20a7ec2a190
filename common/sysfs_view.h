#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// A read-only view of a host's /sys and /proc, rooted at a directory.
//
// Every hardware read in the agent goes through one SysfsView so that the
// same collector code runs on a live host (root "/") and on a fixture or a
// captured tree (root "tests/fixtures/sysfs/roce-broken"). Paths are always
// given as absolute host paths ("/sys/class/infiniband"); the view maps them
// under its root. Symlinks are resolved inside the root, so an absolute link
// in a capture never escapes to the machine running the tests.
//
// Errors keep the errno meaning: NotFound (ENOENT), PermissionDenied (EPERM,
// EACCES), InvalidArgument (EINVAL, which sysfs returns for empty GID slots),
// Unimplemented (EOPNOTSUPP), Unavailable (EIO and the rest). Each message
// names the host path and the reason.
class SysfsView {
 public:
  explicit SysfsView(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }

  // True when the view is the running host ("/"), so live probes (verbs,
  // netlink, CUDA) describe the same machine as the files.
  bool is_live() const { return live_; }

  // The file's contents with trailing whitespace and newlines removed.
  absl::StatusOr<std::string> ReadText(absl::string_view path) const;

  // The raw bytes of the file, nothing trimmed: for binary sysfs files (a PCI
  // function's `vpd` and `config`) and for copying a file byte for byte. At
  // most `max_bytes`; a longer file is ResourceExhausted, never silently cut.
  // The last component is opened without following a symlink (the path is
  // resolved inside the root first; a link appearing now is refused).
  absl::StatusOr<std::string> ReadBytes(absl::string_view path, size_t max_bytes) const;

  // Names in a directory, sorted, without "." and "..".
  absl::StatusOr<std::vector<std::string>> ListDir(absl::string_view path) const;

  // ListDir for directories the view does not control (/usr/lib, a capture's
  // library folders): ResourceExhausted once more than `max_entries` names
  // are seen, so a hostile tree cannot make the caller hold an unbounded list.
  absl::StatusOr<std::vector<std::string>> ListDirBounded(absl::string_view path,
                                                          size_t max_entries) const;

  bool Exists(absl::string_view path) const;

  // The host path with every symlink resolved inside the root, e.g.
  // "/sys/class/net/eth0" -> "/sys/devices/pci0000:00/0000:00:04.0/virtio1/net/eth0".
  absl::StatusOr<std::string> Resolve(absl::string_view path) const;

  // The path on the machine running the code, for messages and tests.
  std::filesystem::path HostPath(absl::string_view path) const;

 private:
  // Up to `max_bytes` of the file; `refuse_longer`: a longer file is an error.
  absl::StatusOr<std::string> Read(absl::string_view path, size_t max_bytes, bool refuse_longer,
                                   int extra_flags) const;

  std::filesystem::path root_;
  bool live_;
};

// The canonical "reason" text for an Unknown entry from a failed read.
std::string ReasonOf(const absl::Status& status);

}  // namespace clustercert
