#include "common/regular_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/errno_text.h"
#include "common/printable.h"

namespace clustercert {
namespace {

// Paths may come from a plan or a request; keep them printable in messages.
std::string Shown(const std::string& path) { return PrintableText(path, 512); }

absl::Status OpenError(int err, const std::string& path, absl::string_view what,
                       bool follow_symlinks) {
  const std::string prefix = absl::StrCat("cannot open the ", what, " ", Shown(path), ": ");
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(
          absl::StrCat(prefix, ErrnoText(err), "; check the path and that the file exists"));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(absl::StrCat(
          prefix, ErrnoText(err), "; run as a user who may read it, or fix its permissions"));
    case ELOOP:
      if (!follow_symlinks) {
        return absl::FailedPreconditionError(
            absl::StrCat(prefix, "it is a symlink, which is refused here; name the file itself"));
      }
      return absl::FailedPreconditionError(absl::StrCat(prefix, ErrnoText(err)));
    case ENXIO:
      // open(2) answers ENXIO for a Unix socket (and a FIFO opened for
      // writing, which we never do).
      return absl::FailedPreconditionError(absl::StrCat(
          prefix, "it is a socket, not a regular file; give the path of the ", what, " file"));
    default:
      return absl::UnavailableError(absl::StrCat(prefix, ErrnoText(err)));
  }
}

absl::StatusOr<UniqueFd> CheckRegular(UniqueFd fd, const std::string& path,
                                      absl::string_view what) {
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot stat the ", what, " ", Shown(path), ": ", ErrnoText(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", what, " ", Shown(path), " is ", FileTypeText(info.st_mode),
        ", not a regular file; only regular files are read (a FIFO would block and a device ",
        "never end): give the path of the ", what, " file itself"));
  }
  return fd;
}

constexpr int kOpenFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

}  // namespace

std::string FileTypeText(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symlink";
  return "a special file";
}

absl::StatusOr<UniqueFd> OpenRegularFile(const std::string& path, absl::string_view what,
                                         bool follow_symlinks) {
  return OpenRegularFileAt(AT_FDCWD, path, path, what, follow_symlinks);
}

absl::StatusOr<UniqueFd> ReopenSameFile(int path_fd, const struct stat& checked,
                                        const std::function<UniqueFd()>& open_by_name,
                                        const std::string& path, absl::string_view what) {
  const std::string self = absl::StrCat("/proc/self/fd/", path_fd);
  UniqueFd fd(::open(self.c_str(), kOpenFlags));
  if (!fd.valid() && errno == ENOENT) fd = open_by_name();
  if (!fd.valid()) return OpenError(errno, path, what, /*follow_symlinks=*/true);
  absl::StatusOr<UniqueFd> regular = CheckRegular(std::move(fd), path, what);
  if (!regular.ok()) return regular.status();
  struct stat opened;
  if (::fstat(regular->get(), &opened) != 0 || opened.st_dev != checked.st_dev ||
      opened.st_ino != checked.st_ino) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", what, " ", Shown(path), " changed while it was being opened; try again"));
  }
  return regular;
}

absl::StatusOr<UniqueFd> OpenRegularFileAt(int dir_fd, const std::string& name,
                                           const std::string& path, absl::string_view what,
                                           bool follow_symlinks) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no ", what, " file given: pass the path of the ", what));
  }
  const int nofollow = follow_symlinks ? 0 : O_NOFOLLOW;
  // O_PATH first: it opens nothing, so the type is known before a FIFO could
  // block or a device's open could act (a watchdog device arms on open).
  UniqueFd path_fd(::openat(dir_fd, name.c_str(), O_PATH | O_CLOEXEC | nofollow));
  if (!path_fd.valid()) return OpenError(errno, path, what, follow_symlinks);
  struct stat checked;
  if (::fstat(path_fd.get(), &checked) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot stat the ", what, " ", Shown(path), ": ", ErrnoText(errno)));
  }
  if (S_ISLNK(checked.st_mode)) return OpenError(ELOOP, path, what, follow_symlinks);
  if (!S_ISREG(checked.st_mode)) return CheckRegular(std::move(path_fd), path, what);
  return ReopenSameFile(
      path_fd.get(), checked,
      [&] { return UniqueFd(::openat(dir_fd, name.c_str(), kOpenFlags | nofollow)); }, path, what);
}

absl::StatusOr<std::string> ReadOpenFile(int fd, const std::string& path, size_t max_bytes,
                                         absl::string_view what) {
  std::string content;
  char buffer[8192];
  // One byte past the cap tells a file of exactly max_bytes from a longer one.
  const size_t limit = max_bytes + 1;
  while (content.size() < limit) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof(buffer), limit - content.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("cannot read the ", what, " ", Shown(path), ": ", ErrnoText(errno)));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  if (content.size() > max_bytes) {
    struct stat info;
    const std::string size = (::fstat(fd, &info) == 0 && info.st_size > 0)
                                 ? absl::StrCat(info.st_size, " bytes")
                                 : absl::StrCat("more than ", max_bytes, " bytes");
    return absl::ResourceExhaustedError(absl::StrCat(
        "the ", what, " ", Shown(path), " is ", size, ", over the cap of ", max_bytes,
        " bytes for a ", what, "; not read: check that the path names the ", what, " file"));
  }
  return content;
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes,
                                            absl::string_view what) {
  absl::StatusOr<UniqueFd> fd = OpenRegularFile(path, what, /*follow_symlinks=*/true);
  if (!fd.ok()) return fd.status();
  return ReadOpenFile(fd->get(), path, max_bytes, what);
}

absl::StatusOr<std::vector<std::string>> ListOpenDirectory(
    int dir_fd, const std::string& path, absl::string_view what,
    const std::function<bool(absl::string_view)>& keep, size_t max_kept) {
  const auto cannot_list = [&](int err) {
    return absl::PermissionDeniedError(absl::StrCat("cannot list the ", what, " ", Shown(path),
                                                    ": ", ErrnoText(err), "; make it readable"));
  };
  const int listing_fd = ::dup(dir_fd);
  DIR* listing = listing_fd < 0 ? nullptr : ::fdopendir(listing_fd);
  if (listing == nullptr) {
    const int err = errno;
    if (listing_fd >= 0) ::close(listing_fd);
    return cannot_list(err);
  }
  std::unique_ptr<DIR, int (*)(DIR*)> owned(listing, ::closedir);
  // A duplicate shares the directory's offset: start from its first entry
  // whatever an earlier listing left it at.
  ::rewinddir(listing);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(listing);
    if (entry == nullptr) {
      if (errno != 0) return cannot_list(errno);
      return names;
    }
    const absl::string_view name = entry->d_name;
    if (name == "." || name == ".." || !keep(name)) continue;
    if (names.size() == max_kept) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the ", what, " ", Shown(path), " holds more than ", max_kept, " entries"));
    }
    names.emplace_back(name);
  }
}

absl::Status CheckTrustedOwnership(const struct stat& info, const std::string& path,
                                   absl::string_view what, absl::string_view or_instead) {
  const uid_t self = ::geteuid();
  const bool owner_ok = info.st_uid == 0 || info.st_uid == self;
  const bool mode_ok = (info.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  if (owner_ok && mode_ok) return absl::OkStatus();
  const std::string found =
      absl::StrFormat("owned by uid %u with mode %04o", static_cast<unsigned>(info.st_uid),
                      static_cast<unsigned>(info.st_mode & 07777));
  std::string fix;
  if (!owner_ok) {
    fix = absl::StrFormat("chown %u %s", static_cast<unsigned>(self), Shown(path));
    if (!mode_ok) absl::StrAppend(&fix, " and ");
  }
  if (!mode_ok) absl::StrAppend(&fix, "chmod go-w ", Shown(path));
  if (!or_instead.empty()) absl::StrAppend(&fix, ", or ", or_instead);
  return absl::PermissionDeniedError(absl::StrCat(
      "the ", what, " ", Shown(path), " is ", found, "; it must be owned by root or by uid ",
      static_cast<unsigned>(self), " (the user running this) and not writable by group or ",
      "others, or whoever can write it decides what is trusted: ", fix));
}

}  // namespace clustercert
