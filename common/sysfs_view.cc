#include "common/sysfs_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/printable.h"
#include "common/regular_file.h"

namespace clustercert {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;
constexpr int kMaxSymlinkHops = 40;
// openat2 answers EAGAIN when a rename or mount raced a RESOLVE_BENEATH walk.
constexpr int kOpenat2Attempts = 8;
// Paths reach messages; part of one may come from the network.
std::string Printable(absl::string_view path) { return PrintableText(path); }

absl::Status ErrnoStatus(int err, absl::string_view path) {
  std::string message = absl::StrCat(Printable(path), ": ", std::strerror(err));
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

// The components of an absolute host path, "." and empty ones dropped.
// ".." is refused outright: no caller needs it, and a name taken from a
// request ("../../etc") is the way out of a directory it did not choose.
absl::StatusOr<std::vector<std::string>> Components(absl::string_view path) {
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("not an absolute path: '", Printable(path), "'"));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(Printable(path), ": has a NUL byte; give a plain path"));
  }
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          Printable(path), ": has a '..' component, which the view refuses; name the file itself"));
    }
    parts.emplace_back(part);
  }
  return parts;
}

std::string JoinRelative(const std::vector<std::string>& parts) {
  return parts.empty() ? std::string(".") : absl::StrJoin(parts, "/");
}

std::string JoinAbsolute(const std::vector<std::string>& parts) {
  return parts.empty() ? std::string("/") : absl::StrCat("/", absl::StrJoin(parts, "/"));
}

// openat2 beneath `dir_fd`: no absolute symlink, no ".." above dir_fd, no
// /proc magic link. -1 with errno set on failure.
int Openat2Beneath(int dir_fd, const std::string& relative, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 1;; ++attempt) {
    const long fd = ::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    if ((errno != EAGAIN && errno != EINTR) || attempt == kOpenat2Attempts) return -1;
  }
}

// What a walk beneath the root found: the resolved components, each held
// open (O_PATH), and the tail that does not exist.
struct Walk {
  std::vector<std::string> names;
  std::vector<UniqueFd> fds;  // fds[i] is names[0..i]
  std::vector<std::string> missing;
  int missing_errno = 0;

  int parent_of_last(int root_fd) const {
    return fds.size() >= 2 ? fds[fds.size() - 2].get() : root_fd;
  }
};

}  // namespace

SysfsView::SysfsView(std::filesystem::path root, Resolution resolution)
    : root_(root.empty() ? std::filesystem::path("/") : std::move(root)) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(root_, ec);
  if (!ec) root_ = canonical;
  live_ = (root_ == std::filesystem::path("/"));
  const int fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    root_errno_ = errno;
    return;
  }
  root_fd_ = std::make_shared<const UniqueFd>(fd);
  if (resolution == Resolution::kAuto) {
    // ENOSYS before Linux 5.6; EPERM from container seccomp profiles that
    // predate openat2. Either way the walk keeps the same rules.
    const int probe = Openat2Beneath(fd, ".", O_PATH);
    if (probe >= 0) {
      ::close(probe);
      openat2_ = true;
    }
  }
}

std::filesystem::path SysfsView::HostPath(absl::string_view path) const {
  absl::string_view relative = path;
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  if (relative.empty()) return root_;
  return root_ / std::filesystem::path(std::string(relative));
}

namespace {

absl::Status Escapes(const std::filesystem::path& root, absl::string_view path) {
  return absl::PermissionDeniedError(
      absl::StrCat(Printable(path), ": resolves outside the view's root ", root.string(),
                   " (an absolute symlink, or a symlink climbing above the root); refused"));
}

// Resolves `parts` beneath `root_fd` one component at a time, opening each
// with O_NOFOLLOW and reading links with readlinkat, so nothing is followed
// that was not checked: a ".." above the root is refused (Escapes), and so
// is an absolute link, except on the live root outside /proc (`live`): there
// the walk starts again at "/" with the link's target, as the kernel would,
// because package managers make such links (/usr/local/cuda ->
// /etc/alternatives/cuda -> /usr/local/cuda-13.0 on every host with NVIDIA's
// CUDA packages). /proc's magic links (root, cwd, exe, fd/N) stay refused.
// The last component is followed only when `follow_last`.
absl::StatusOr<Walk> WalkBeneath(int root_fd, const std::filesystem::path& root,
                                 absl::string_view path, const std::vector<std::string>& parts,
                                 bool follow_last, bool live) {
  Walk walk;
  std::vector<std::string> pending(parts.rbegin(), parts.rend());
  int hops = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (!walk.missing.empty()) {
      // Below a missing component only text is left; a link's ".." can
      // climb back to what exists.
      if (part == "..") {
        walk.missing.pop_back();
      } else {
        walk.missing.push_back(std::move(part));
      }
      continue;
    }
    if (part == "..") {
      if (walk.names.empty()) return Escapes(root, path);
      walk.names.pop_back();
      walk.fds.pop_back();
      continue;
    }
    const int parent = walk.fds.empty() ? root_fd : walk.fds.back().get();
    UniqueFd fd(::openat(parent, part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno != ENOENT && errno != ENOTDIR) return ErrnoStatus(errno, path);
      walk.missing_errno = errno;
      walk.missing.push_back(std::move(part));
      continue;
    }
    struct stat info;
    if (::fstat(fd.get(), &info) != 0) return ErrnoStatus(errno, path);
    if (S_ISLNK(info.st_mode) && (follow_last || !pending.empty())) {
      if (++hops > kMaxSymlinkHops) return ErrnoStatus(ELOOP, path);
      char target[PATH_MAX];
      const ssize_t length = ::readlinkat(fd.get(), "", target, sizeof(target));
      if (length < 0) return ErrnoStatus(errno, path);
      if (static_cast<size_t>(length) == sizeof(target)) return ErrnoStatus(ENAMETOOLONG, path);
      const absl::string_view text(target, static_cast<size_t>(length));
      if (text.empty()) return ErrnoStatus(ENOENT, path);
      // Magic links read as absolute paths or "pipe:[N]" names, so they end
      // here or as a missing name.
      if (text.front() == '/') {
        if (!live || (!walk.names.empty() && walk.names.front() == "proc")) {
          return Escapes(root, path);
        }
        walk.names.clear();
        walk.fds.clear();
      }
      std::vector<absl::string_view> target_parts = absl::StrSplit(text, '/', absl::SkipEmpty());
      for (auto it = target_parts.rbegin(); it != target_parts.rend(); ++it) {
        pending.emplace_back(*it);
      }
      continue;
    }
    walk.names.push_back(std::move(part));
    walk.fds.push_back(std::move(fd));
  }
  return walk;
}

}  // namespace

absl::StatusOr<UniqueFd> SysfsView::Open(absl::string_view path, int flags) const {
  if (root_fd_ == nullptr) {
    return ErrnoStatus(
        root_errno_, absl::StrCat(root_.string(), " (the view's root, for ", Printable(path), ")"));
  }
  absl::StatusOr<std::vector<std::string>> parts = Components(path);
  if (!parts.ok()) return parts.status();
  if (!openat2_) return OpenByWalk(path, *parts, flags);
  const int fd = Openat2Beneath(root_fd_->get(), JoinRelative(*parts), flags);
  if (fd < 0) {
    // openat2 refuses every absolute link; the walk knows which the live
    // root may follow.
    if (errno == EXDEV && live_) return OpenByWalk(path, *parts, flags);
    if (errno == EXDEV) return Escapes(root_, path);
    return ErrnoStatus(errno, path);
  }
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> SysfsView::OpenByWalk(absl::string_view path,
                                               const std::vector<std::string>& parts,
                                               int flags) const {
  const int root_fd = root_fd_->get();
  absl::StatusOr<Walk> walk =
      WalkBeneath(root_fd, root_, path, parts, /*follow_last=*/(flags & O_NOFOLLOW) == 0, live_);
  if (!walk.ok()) return walk.status();
  if (!walk->missing.empty()) return ErrnoStatus(walk->missing_errno, path);
  int fd;
  if (walk->names.empty()) {
    fd = ::openat(root_fd, ".", flags | O_CLOEXEC);
  } else {
    // The directories are held open, so only the last name can change now;
    // O_NOFOLLOW refuses a link swapped in since the walk.
    fd = ::openat(walk->parent_of_last(root_fd), walk->names.back().c_str(),
                  flags | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return ErrnoStatus(errno, path);
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> SysfsView::OpenRegular(absl::string_view path) const {
  // O_PATH first: it opens nothing, so a FIFO planted in a fixture or capture
  // cannot block and a device node cannot act on open (a tree extracted as
  // root may hold any) before the type is known.
  absl::StatusOr<UniqueFd> checked = Open(path, O_PATH);
  if (!checked.ok()) return checked.status();
  // sysfs attributes and /proc files are regular files (of st_size 0, so the
  // read goes to end-of-file, bounded); a FIFO, device or socket in a tree is
  // not one the kernel made there, and /dev/zero would never end.
  struct stat before;
  if (::fstat(checked->get(), &before) != 0) return ErrnoStatus(errno, path);
  if (!S_ISREG(before.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Printable(path), ": ", FileTypeText(before.st_mode),
                     " where a sysfs or proc file should be, not read (only regular files are)"));
  }
  absl::StatusOr<UniqueFd> fd = ReopenSameFile(
      checked->get(), before,
      [&] {
        absl::StatusOr<UniqueFd> again = Open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        return again.ok() ? *std::move(again) : UniqueFd();
      },
      Printable(path), "sysfs or proc file");
  if (!fd.ok()) return fd.status();
  // Blocking reads, as before: sysfs and proc ignore O_NONBLOCK on regular
  // files, but a read must not end early on EAGAIN if one did not.
  const int status_flags = ::fcntl(fd->get(), F_GETFL);
  if (status_flags >= 0) ::fcntl(fd->get(), F_SETFL, status_flags & ~O_NONBLOCK);
  return fd;
}

absl::StatusOr<std::string> SysfsView::Read(absl::string_view path, size_t max_bytes,
                                            bool refuse_longer) const {
  absl::StatusOr<UniqueFd> fd = OpenRegular(path);
  if (!fd.ok()) return fd.status();
  std::string content;
  char buffer[4096];
  // One byte past the limit tells a file of exactly max_bytes from a longer one.
  const size_t limit = refuse_longer ? max_bytes + 1 : max_bytes;
  while (content.size() < limit) {
    ssize_t n = ::read(fd->get(), buffer, std::min(sizeof(buffer), limit - content.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, path);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  if (refuse_longer && content.size() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(Printable(path), ": larger than ", max_bytes, " bytes, not read"));
  }
  return content;
}

absl::StatusOr<std::string> SysfsView::ReadBytes(absl::string_view path, size_t max_bytes) const {
  return Read(path, max_bytes, /*refuse_longer=*/true);
}

absl::StatusOr<std::string> SysfsView::ReadText(absl::string_view path) const {
  auto read = Read(path, kMaxFileBytes, /*refuse_longer=*/false);
  if (!read.ok()) return read.status();
  std::string content = *std::move(read);
  while (!content.empty() &&
         (content.back() == '\n' || content.back() == ' ' || content.back() == '\t' ||
          content.back() == '\r' || content.back() == '\0')) {
    content.pop_back();
  }
  return content;
}

absl::StatusOr<std::vector<std::string>> SysfsView::List(absl::string_view path,
                                                         size_t max_entries) const {
  absl::StatusOr<UniqueFd> fd = Open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
  if (!fd.ok()) return fd.status();
  DIR* dir = ::fdopendir(fd->get());
  if (dir == nullptr) return ErrnoStatus(errno, path);
  fd->Release();  // the DIR owns it now
  std::unique_ptr<DIR, int (*)(DIR*)> owned(dir, ::closedir);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) return ErrnoStatus(errno, path);
      break;
    }
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == max_entries) {
      return absl::ResourceExhaustedError(
          absl::StrCat(Printable(path), ": more than ", max_entries, " entries, not listed"));
    }
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<std::string>> SysfsView::ListDir(absl::string_view path) const {
  return List(path, std::numeric_limits<size_t>::max());
}

absl::StatusOr<std::vector<std::string>> SysfsView::ListDirBounded(absl::string_view path,
                                                                   size_t max_entries) const {
  return List(path, max_entries);
}

bool SysfsView::Exists(absl::string_view path) const { return Open(path, O_PATH).ok(); }

absl::StatusOr<std::string> SysfsView::Resolve(absl::string_view path) const {
  absl::StatusOr<std::vector<std::string>> parts = Components(path);
  if (!parts.ok()) return parts.status();
  if (root_fd_ == nullptr) {
    return ErrnoStatus(
        root_errno_, absl::StrCat(root_.string(), " (the view's root, for ", Printable(path), ")"));
  }
  absl::StatusOr<Walk> walk =
      WalkBeneath(root_fd_->get(), root_, path, *parts, /*follow_last=*/true, live_);
  if (!walk.ok()) return walk.status();
  std::vector<std::string> names = std::move(walk->names);
  names.insert(names.end(), walk->missing.begin(), walk->missing.end());
  return JoinAbsolute(names);
}

std::string ReasonOf(const absl::Status& status) {
  absl::string_view message = status.message();
  // Messages are "<path>: <reason>"; keep the reason only, the path is stored apart.
  auto colon = message.rfind(": ");
  if (colon != absl::string_view::npos) return std::string(message.substr(colon + 2));
  return std::string(message);
}

}  // namespace clustercert
