#include "agent/capture/tree_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clustercert::agent {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLeftOutLines = 1000;

bool IsAbsent(const absl::Status& status) {
  return absl::IsNotFound(status) || absl::IsInvalidArgument(status);
}

// The area a written file counts under: its first two path components.
std::string AreaOf(const std::string& host_path) {
  std::vector<absl::string_view> parts = absl::StrSplit(host_path, '/', absl::SkipEmpty());
  if (parts.empty()) return "/";
  if (parts[0] == "clustercert-capture" || parts.size() == 1) return std::string(parts[0]);
  return absl::StrCat(parts[0], "/", parts[1]);
}

}  // namespace

std::string ParentOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string BaseNameOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

fs::path KernelLinkText(const std::string& dir, const std::string& target) {
  const fs::path up = fs::path(ParentOf(target)).lexically_relative(dir);
  if (up.empty()) return {};
  if (up == ".") return BaseNameOf(target);
  return up / BaseNameOf(target);
}

void TreeWriter::CopyFile(const std::string& path, size_t max_bytes) {
  auto resolved = view_.Resolve(path);
  if (!resolved.ok()) return LeaveOut(path, resolved.status());
  if (copied_.count(*resolved)) return;
  // The view opens non-blocking and reads regular files only: a FIFO,
  // device or socket in the source is left out with what it is.
  auto bytes = view_.ReadBytes(*resolved, max_bytes);
  if (!bytes.ok()) {
    if (IsAbsent(bytes.status())) return;
    return LeaveOut(path, bytes.status());
  }
  WriteFile(*resolved, *bytes);
}

bool TreeWriter::WriteFile(const std::string& path, absl::string_view content) {
  if (report_.files >= kMaxCaptureFiles || report_.bytes + content.size() > kMaxCaptureTotalBytes) {
    LeaveOut(path, absl::StrCat("the capture is at its limit (", kMaxCaptureFiles, " files, ",
                                kMaxCaptureTotalBytes >> 20, " MiB)"));
    return false;
  }
  if (!MakeDir(ParentOf(path))) return false;
  const std::string dest = Dest(path).string();
  int fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    LeaveOut(path, absl::StrCat("cannot create ", dest, ": ", std::strerror(errno)));
    return false;
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_error_ = absl::StrCat("writing ", dest, ": ", std::strerror(errno));
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    write_error_ = absl::StrCat("closing ", dest, ": ", std::strerror(errno));
    return false;
  }
  copied_.insert(path);
  ++report_.files;
  report_.bytes += content.size();
  auto& area = report_.areas[AreaOf(path)];
  ++area.files;
  area.bytes += content.size();
  return true;
}

std::optional<std::string> TreeWriter::CopyLink(const std::string& path) {
  auto parent = view_.Resolve(ParentOf(path));
  if (!parent.ok()) return std::nullopt;
  const std::string link = *parent == "/" ? absl::StrCat("/", BaseNameOf(path))
                                          : absl::StrCat(*parent, "/", BaseNameOf(path));
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(view_.HostPath(link), ec))) return std::nullopt;
  auto target = view_.Resolve(link);
  if (!target.ok()) {
    LeaveOut(path, target.status());
    return std::nullopt;
  }
  if (!links_.count(link)) {
    const fs::path text = KernelLinkText(*parent, *target);
    if (text.empty() || !MakeDir(*parent)) return std::nullopt;
    fs::create_symlink(text, Dest(link), ec);
    if (ec && ec != std::errc::file_exists) {
      LeaveOut(path, absl::StrCat("cannot create the link: ", ec.message()));
      return std::nullopt;
    }
    links_.insert(link);
    ++report_.links;
  }
  if (fs::is_directory(fs::status(view_.HostPath(*target), ec))) MakeDir(*target);
  return *target;
}

bool TreeWriter::MakeDir(const std::string& path) {
  fs::path current = out_;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == "." || part == "..") {
      LeaveOut(path, "not a resolved path (it has . or ..)");
      return false;
    }
    current /= std::string(part);
    std::error_code ec;
    auto status = fs::symlink_status(current, ec);
    if (fs::is_symlink(status) || (fs::exists(status) && !fs::is_directory(status))) {
      LeaveOut(path, absl::StrCat(current.string(), " is in the way (a link or a file)"));
      return false;
    }
    if (!fs::exists(status) && !fs::create_directory(current, ec) && ec) {
      write_error_ = absl::StrCat("creating ", current.string(), ": ", ec.message());
      return false;
    }
  }
  return true;
}

std::vector<std::string> TreeWriter::List(const std::string& path) {
  auto names = view_.ListDir(path);
  if (!names.ok()) {
    if (!absl::IsNotFound(names.status())) LeaveOut(path, names.status());
    return {};
  }
  if (names->size() > kMaxCaptureListing) {
    LeaveOut(path,
             absl::StrCat(names->size(), " entries, only the first ", kMaxCaptureListing, " kept"));
    names->resize(kMaxCaptureListing);
  }
  return *std::move(names);
}

void TreeWriter::LeaveOut(const std::string& path, const absl::Status& status) {
  LeaveOut(path, ReasonOf(status));
}

void TreeWriter::LeaveOut(const std::string& path, absl::string_view reason) {
  if (report_.left_out.size() < kMaxLeftOutLines) {
    report_.left_out.push_back(absl::StrCat(path, ": ", reason));
  }
}

}  // namespace clustercert::agent
