#include "agent/inventory/process_command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/unique_fd.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace clustercert::inventory {
namespace {

constexpr char kDefaultSearchPath[] =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr size_t kMaxCapturedBytes = 1 << 20;
constexpr auto kReapPollInterval = std::chrono::milliseconds(5);

using SteadyClock = std::chrono::steady_clock;


// A read end and a write end, both close-on-exec.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&attr_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// A spawned child in its own process group; killed and reaped on destruction
// unless Wait() already reaped it.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (reaped_) return;
    Kill();
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }

  void Kill() const {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }

  // The raw wait status once the child exited; nullopt while it still runs.
  absl::StatusOr<std::optional<int>> TryWait() {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) return std::optional<int>();
    if (r < 0) {
      if (errno == EINTR) return std::optional<int>();
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    }
    reaped_ = true;
    // Grandchildren that outlive the child must not keep running unattended.
    ::kill(-pid_, SIGKILL);
    return std::optional<int>(status);
  }

 private:
  pid_t pid_;
  bool reaped_ = false;
};

absl::Status SpawnError(int err, const std::string& program) {
  std::string message = absl::StrCat(program, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(absl::StrCat("posix_spawn ", message));
  }
}

}  // namespace

ProcessCommandRunner::ProcessCommandRunner()
    : ProcessCommandRunner([] {
        const char* path = std::getenv("PATH");
        return std::string(path != nullptr && *path != '\0' ? path : kDefaultSearchPath);
      }()) {}

ProcessCommandRunner::ProcessCommandRunner(std::string search_path)
    : search_path_(std::move(search_path)) {}

absl::StatusOr<std::string> ProcessCommandRunner::FindProgram(const std::string& name) const {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return name;
    return SpawnError(errno, name);
  }
  for (absl::string_view dir : absl::StrSplit(search_path_, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(name, " not found in ", search_path_));
}

absl::StatusOr<CommandResult> ProcessCommandRunner::Run(const std::vector<std::string>& argv,
                                                        absl::Duration timeout) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("empty command line");
  auto program = FindProgram(argv[0]);
  if (!program.ok()) return program.status();

  auto out = MakePipe();
  if (!out.ok()) return out.status();
  auto err = MakePipe();
  if (!err.ok()) return err.status();

  SpawnSetup setup;
  ::posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(setup.actions(), out->write.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(setup.actions(), err->write.get(), STDERR_FILENO);
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&default_signals, sig);
  ::posix_spawnattr_setflags(
      setup.attr(), POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setpgroup(setup.attr(), 0);
  ::posix_spawnattr_setsigmask(setup.attr(), &empty_mask);
  ::posix_spawnattr_setsigdefault(setup.attr(), &default_signals);

  std::vector<char*> raw_argv;
  raw_argv.reserve(argv.size() + 1);
  for (const auto& arg : argv) raw_argv.push_back(const_cast<char*>(arg.c_str()));
  raw_argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, program->c_str(), setup.actions(), setup.attr(), raw_argv.data(),
                         environ);
  if (rc != 0) return SpawnError(rc, *program);
  Child child(pid);
  out->write.Reset();
  err->write.Reset();

  const auto deadline =
      SteadyClock::now() + std::chrono::microseconds(absl::ToInt64Microseconds(timeout));
  auto deadline_error = [&] {
    child.Kill();
    return absl::DeadlineExceededError(absl::StrCat(argv[0], " did not finish within ",
                                                    absl::FormatDuration(timeout), "; killed it"));
  };

  CommandResult result;
  struct Stream {
    UniqueFd* fd;
    std::string* text;
  };
  Stream streams[] = {{&out->read, &result.stdout_text}, {&err->read, &result.stderr_text}};
  char buffer[4096];
  while (out->read.valid() || err->read.valid()) {
    auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (remaining.count() <= 0) return deadline_error();
    pollfd fds[2];
    nfds_t count = 0;
    Stream* polled[2];
    for (auto& stream : streams) {
      if (!stream.fd->valid()) continue;
      fds[count] = pollfd{stream.fd->get(), POLLIN, 0};
      polled[count++] = &stream;
    }
    int ready = ::poll(fds, count, static_cast<int>(remaining.count()) + 1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        polled[i]->fd->Reset();
        continue;
      }
      std::string& text = *polled[i]->text;
      size_t room = kMaxCapturedBytes - std::min(kMaxCapturedBytes, text.size());
      text.append(buffer, std::min(room, static_cast<size_t>(n)));
    }
  }

  // Both pipes closed: the child has exited or is about to.
  while (true) {
    auto status = child.TryWait();
    if (!status.ok()) return status.status();
    if (status->has_value()) {
      int wait_status = **status;
      if (WIFEXITED(wait_status)) {
        result.exit_code = WEXITSTATUS(wait_status);
        return result;
      }
      return absl::InternalError(absl::StrCat(argv[0], " was killed by signal ",
                                              WTERMSIG(wait_status), " (",
                                              strsignal(WTERMSIG(wait_status)), ")"));
    }
    if (SteadyClock::now() >= deadline) return deadline_error();
    std::this_thread::sleep_for(kReapPollInterval);
  }
}

}  // namespace clustercert::inventory
