#include "common/sysfs_view.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clustercert {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;
constexpr int kMaxSymlinkHops = 40;

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

bool IsAbsoluteHostPath(absl::string_view path) { return !path.empty() && path.front() == '/'; }

}  // namespace

SysfsView::SysfsView(std::filesystem::path root)
    : root_(root.empty() ? std::filesystem::path("/") : std::move(root)) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(root_, ec);
  if (!ec) root_ = canonical;
  live_ = (root_ == std::filesystem::path("/"));
}

std::filesystem::path SysfsView::HostPath(absl::string_view path) const {
  absl::string_view relative = path;
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  if (relative.empty()) return root_;
  return root_ / std::filesystem::path(std::string(relative));
}

absl::StatusOr<std::string> SysfsView::Read(absl::string_view path, size_t max_bytes,
                                            bool refuse_longer, int extra_flags) const {
  if (!IsAbsoluteHostPath(path)) {
    return absl::InvalidArgumentError(absl::StrCat("not an absolute path: '", path, "'"));
  }
  auto resolved = Resolve(path);
  if (!resolved.ok()) return resolved.status();
  const std::string host = HostPath(*resolved).string();
  int fd = ::open(host.c_str(), O_RDONLY | O_CLOEXEC | extra_flags);
  if (fd < 0) return ErrnoStatus(errno, path);
  std::string content;
  char buffer[4096];
  // One byte past the limit tells a file of exactly max_bytes from a longer one.
  const size_t limit = refuse_longer ? max_bytes + 1 : max_bytes;
  while (content.size() < limit) {
    ssize_t n = ::read(fd, buffer, std::min(sizeof(buffer), limit - content.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, path);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (refuse_longer && content.size() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": larger than ", max_bytes, " bytes, not read"));
  }
  return content;
}

absl::StatusOr<std::string> SysfsView::ReadBytes(absl::string_view path, size_t max_bytes) const {
  return Read(path, max_bytes, /*refuse_longer=*/true, O_NOFOLLOW | O_NONBLOCK);
}

absl::StatusOr<std::string> SysfsView::ReadText(absl::string_view path) const {
  auto read = Read(path, kMaxFileBytes, /*refuse_longer=*/false, 0);
  if (!read.ok()) return read.status();
  std::string content = *std::move(read);
  while (!content.empty() &&
         (content.back() == '\n' || content.back() == ' ' || content.back() == '\t' ||
          content.back() == '\r' || content.back() == '\0')) {
    content.pop_back();
  }
  return content;
}

absl::StatusOr<std::vector<std::string>> SysfsView::ListDir(absl::string_view path) const {
  auto resolved = Resolve(path);
  if (!resolved.ok()) return resolved.status();
  std::error_code ec;
  std::filesystem::directory_iterator it(HostPath(*resolved), ec);
  if (ec) return ErrnoStatus(ec.value(), path);
  std::vector<std::string> names;
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<std::string>> SysfsView::ListDirBounded(absl::string_view path,
                                                                   size_t max_entries) const {
  auto resolved = Resolve(path);
  if (!resolved.ok()) return resolved.status();
  std::error_code ec;
  std::filesystem::directory_iterator it(HostPath(*resolved), ec);
  if (ec) return ErrnoStatus(ec.value(), path);
  std::vector<std::string> names;
  // increment(ec) rather than range-for: a read error mid-listing is a status, not a throw.
  for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
    if (names.size() == max_entries) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": more than ", max_entries, " entries, not listed"));
    }
    names.push_back(it->path().filename().string());
  }
  if (ec) return ErrnoStatus(ec.value(), path);
  std::sort(names.begin(), names.end());
  return names;
}

bool SysfsView::Exists(absl::string_view path) const {
  auto resolved = Resolve(path);
  if (!resolved.ok()) return false;
  std::error_code ec;
  return std::filesystem::exists(HostPath(*resolved), ec);
}

absl::StatusOr<std::string> SysfsView::Resolve(absl::string_view path) const {
  if (!IsAbsoluteHostPath(path)) {
    return absl::InvalidArgumentError(absl::StrCat("not an absolute path: '", path, "'"));
  }
  // Components still to walk, consumed from the front; `done` is the resolved
  // prefix as host-absolute components.
  std::vector<std::string> pending;
  for (auto part : absl::StrSplit(path, '/', absl::SkipEmpty())) pending.emplace_back(part);
  std::reverse(pending.begin(), pending.end());
  std::vector<std::string> done;
  int hops = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    std::string current;
    for (const auto& d : done) absl::StrAppend(&current, "/", d);
    std::error_code ec;
    const auto host = HostPath(current);
    auto status = std::filesystem::symlink_status(host, ec);
    if (ec || !std::filesystem::is_symlink(status))
      continue;  // a missing tail is the caller's error
    if (++hops > kMaxSymlinkHops) return ErrnoStatus(ELOOP, path);
    auto target = std::filesystem::read_symlink(host, ec);
    if (ec) return ErrnoStatus(ec.value(), path);
    done.pop_back();
    const std::string target_text = target.string();
    if (IsAbsoluteHostPath(target_text)) done.clear();
    std::vector<std::string> target_parts;
    for (auto t : absl::StrSplit(target_text, '/', absl::SkipEmpty())) target_parts.emplace_back(t);
    for (auto it = target_parts.rbegin(); it != target_parts.rend(); ++it) pending.push_back(*it);
  }
  std::string resolved;
  for (const auto& d : done) absl::StrAppend(&resolved, "/", d);
  return resolved.empty() ? std::string("/") : resolved;
}

std::string ReasonOf(const absl::Status& status) {
  absl::string_view message = status.message();
  // Messages are "<path>: <reason>"; keep the reason only, the path is stored apart.
  auto colon = message.rfind(": ");
  if (colon != absl::string_view::npos) return std::string(message.substr(colon + 2));
  return std::string(message);
}

}  // namespace clustercert
