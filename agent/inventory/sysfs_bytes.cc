#include "agent/inventory/sysfs_bytes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace clustercert::inventory {
namespace {

// The same errno -> code mapping as SysfsView, so callers treat both alike.
absl::Status ErrnoStatus(int err, absl::string_view path) {
  std::string message = absl::StrCat(path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(message);
    case EINVAL:
      return absl::InvalidArgumentError(message);
    case EOPNOTSUPP:
      return absl::UnimplementedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

}  // namespace

absl::StatusOr<std::string> ReadSysfsBytes(const SysfsView& view, absl::string_view path,
                                           size_t max_bytes) {
  auto resolved = view.Resolve(path);
  if (!resolved.ok()) return resolved.status();
  const std::string host = view.HostPath(*resolved).string();
  // The path is resolved already: a symlink in the last component now would
  // be a race, and is refused rather than followed out of the root.
  int fd = ::open(host.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return ErrnoStatus(errno, path);
  std::string content;
  char buffer[4096];
  while (content.size() <= max_bytes) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, path);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (content.size() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": larger than ", max_bytes, " bytes, not read"));
  }
  return content;
}

}  // namespace clustercert::inventory
