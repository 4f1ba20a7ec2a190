#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "agent/capture/host_capture.h"
#include "common/sysfs_view.h"

namespace clustercert::agent {

// Limits of one capture: a sysfs attribute is a page at most, so a larger
// file is not one the collectors read; config and vpd have their own sizes.
inline constexpr size_t kMaxCaptureFileBytes = 64 * 1024;
inline constexpr uint64_t kMaxCaptureTotalBytes = 64ull << 20;
inline constexpr uint64_t kMaxCaptureFiles = 100000;
inline constexpr size_t kMaxCaptureListing = 8192;  // entries taken from one directory

// "/sys/class/net/eth0" -> "/sys/class/net"; "/x" -> "/".
std::string ParentOf(const std::string& path);
// "/sys/class/net/eth0" -> "eth0".
std::string BaseNameOf(const std::string& path);

// The text sysfs gives a link in `dir` to `target` (kernfs_get_target_path):
// up from `dir` to the nearest ancestor of the target's parent, then down to
// the target, so a link to an ancestor still names it:
// (".../0000:41:00.0/infiniband/mlx5_0", ".../0000:41:00.0") -> "../../../0000:41:00.0".
std::filesystem::path KernelLinkText(const std::string& dir, const std::string& target);

// Copies host paths of a SysfsView into an output directory, counting what it
// writes into a CaptureReport. Every destination is checked to have no
// symlink between the output root and itself, and files are created with
// O_EXCL|O_NOFOLLOW, so a link the capture made (or a source that changes
// under it) never redirects a write outside the output.
class TreeWriter {
 public:
  TreeWriter(const SysfsView& view, std::filesystem::path out, CaptureReport& report)
      : view_(view), out_(std::move(out)), report_(report) {}

  // Copies the regular file at host path `path` (symlinks resolved) byte for
  // byte, at most `max_bytes`; absent files (ENOENT, and EINVAL, the kernel's
  // answer for an empty GID slot's attributes) are skipped silently, others
  // (a FIFO, device, socket or directory, a file over `max_bytes`) noted in
  // left_out with the reason.
  void CopyFile(const std::string& path, size_t max_bytes = kMaxCaptureFileBytes);

  // Writes `content` at host path `path` (resolved: no symlink in it).
  bool WriteFile(const std::string& path, absl::string_view content);

  // Recreates the symlink at host path `path` as the kernel would write it,
  // and the target's directory when the target is one. Returns the resolved
  // target; nullopt when `path` is not a symlink.
  std::optional<std::string> CopyLink(const std::string& path);

  // Creates host directory `path` (resolved) in the output.
  bool MakeDir(const std::string& path);

  // The names in host directory `path`, at most kMaxCaptureListing; absent = none.
  std::vector<std::string> List(const std::string& path);

  void LeaveOut(const std::string& path, const absl::Status& status);
  void LeaveOut(const std::string& path, absl::string_view reason);

  // A failure that makes the capture unusable (a write to the output failed).
  const std::string& write_error() const { return write_error_; }

 private:
  std::filesystem::path Dest(const std::string& path) const { return out_ / path.substr(1); }

  const SysfsView& view_;
  std::filesystem::path out_;
  CaptureReport& report_;
  std::set<std::string> copied_;
  std::set<std::string> links_;
  std::string write_error_;
};

}  // namespace clustercert::agent
