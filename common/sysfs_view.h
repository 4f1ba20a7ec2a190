#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/unique_fd.h"

namespace clustercert {

// A read-only view of a host's /sys and /proc, rooted at a directory.
//
// Every hardware read in the agent goes through one SysfsView so that the
// same collector code runs on a live host (root "/") and on a fixture or a
// captured tree (root "tests/fixtures/sysfs/roce-broken"). Paths are always
// given as absolute host paths ("/sys/class/infiniband"); the view maps them
// under its root.
//
// The view never reaches outside its root, because parts of the paths it is
// asked for come from the network (a device name in a request) and a
// captured tree comes from a customer: a path with a ".." component is
// refused before anything is opened, and every open resolves beneath an
// O_PATH descriptor of the root with openat2(2) RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS, so an absolute symlink, a relative one that climbs
// above the root, or a /proc magic link (/proc/self/root, /proc/PID/fd/N) is
// refused (PermissionDenied; a magic link reads as a symlink loop), never
// followed. One exception, on the live root only: an absolute symlink
// outside /proc is followed from "/", as the kernel would, because the
// host's own packages make them (/usr/local/cuda -> /etc/alternatives/cuda
// -> /usr/local/cuda-13.0); a fixture or capture must use relative links.
// Relative symlinks that stay beneath the root (sysfs is made of
// them: /sys/class/net/eth0 -> ../../devices/...) work as before. Where the
// kernel has no openat2 (before 5.6, or a seccomp filter answering ENOSYS or
// EPERM) the same rules hold through a walk of one component at a time with
// O_NOFOLLOW and readlinkat. Listing a directory and reading a link are
// confined the same way; error messages name the path and the reason and
// never carry a file's contents.
//
// Errors keep the errno meaning: NotFound (ENOENT), PermissionDenied (EPERM,
// EACCES, and a path leaving the root), InvalidArgument (EINVAL, which sysfs
// returns for empty GID slots, and a path with ".."), Unimplemented
// (EOPNOTSUPP), Unavailable (EIO and the rest); a read of something that is
// not a regular file (a FIFO, device or socket) is FailedPrecondition. Each
// message names the host path and the reason.
class SysfsView {
 public:
  // How paths are resolved beneath the root. kAuto uses openat2 where the
  // kernel has it and the component walk elsewhere; kComponentWalk always
  // walks, so tests can hold the fallback to the same rules.
  enum class Resolution { kAuto, kComponentWalk };

  explicit SysfsView(std::filesystem::path root, Resolution resolution = Resolution::kAuto);

  const std::filesystem::path& root() const { return root_; }

  // True when the view is the running host ("/"), so live probes (verbs,
  // netlink, CUDA) describe the same machine as the files.
  bool is_live() const { return live_; }

  // True when opens go through openat2 rather than the component walk.
  bool uses_openat2() const { return openat2_; }

  // The file's contents with trailing whitespace and newlines removed, at
  // most 1 MiB of them.
  //
  // ReadText and ReadBytes read regular files only: the path is checked
  // through an O_PATH descriptor before anything is opened, and a FIFO,
  // device or socket found there is FailedPrecondition naming the path and
  // what it is, so a FIFO planted in a fixture or capture cannot hang the
  // collector's thread, a device node cannot act on open, and /dev/zero
  // cannot be read without end. sysfs attributes and /proc files are regular
  // files (of size 0: they are read to end-of-file).
  absl::StatusOr<std::string> ReadText(absl::string_view path) const;

  // The raw bytes of the file, nothing trimmed: for binary sysfs files (a PCI
  // function's `vpd` and `config`) and for copying a file byte for byte. At
  // most `max_bytes`; a longer file is ResourceExhausted, never silently cut.
  // Symlinks are followed beneath the root like any read.
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
  // A missing tail is kept as given (the caller's read reports it); a link
  // that leaves the root is an error, as for a read.
  absl::StatusOr<std::string> Resolve(absl::string_view path) const;

  // The path on the machine running the code, for messages and tests. It is
  // plain text joining: never open it, read through the view.
  std::filesystem::path HostPath(absl::string_view path) const;

 private:
  // `path` opened with `flags` beneath the root (the last component followed
  // unless flags has O_NOFOLLOW).
  absl::StatusOr<UniqueFd> Open(absl::string_view path, int flags) const;
  absl::StatusOr<UniqueFd> OpenByWalk(absl::string_view path, const std::vector<std::string>& parts,
                                      int flags) const;
  // `path` opened for reading when it is a regular file; anything else is
  // refused without being opened (FailedPrecondition).
  absl::StatusOr<UniqueFd> OpenRegular(absl::string_view path) const;
  // Up to `max_bytes` of the file; `refuse_longer`: a longer file is an error.
  absl::StatusOr<std::string> Read(absl::string_view path, size_t max_bytes,
                                   bool refuse_longer) const;
  absl::StatusOr<std::vector<std::string>> List(absl::string_view path, size_t max_entries) const;

  std::filesystem::path root_;
  bool live_;
  // Shared so a copied view keeps the same root directory open.
  std::shared_ptr<const UniqueFd> root_fd_;
  int root_errno_ = 0;  // why root_fd_ could not be opened
  bool openat2_ = false;
};

// The canonical "reason" text for an Unknown entry from a failed read.
std::string ReasonOf(const absl::Status& status);

}  // namespace clustercert
