#include "common/process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/errno_text.h"
#include "common/unique_fd.h"

extern char** environ;

namespace clustercert::process {
namespace {

// The highest descriptor the child marks close-on-exec by hand when the
// kernel lacks close_range(CLOSE_RANGE_CLOEXEC) (Linux < 5.11).
constexpr int kManualCloexecLimit = 4096;
// close_range's flag, spelled out so the build does not need linux/close_range.h.
constexpr unsigned kCloseRangeCloexec = 1u << 2;

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

absl::StatusOr<Pipe> MakePipe(const std::string& executable) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start ", executable, ": pipe2 failed: ", ErrnoText(errno),
                     "; the process is out of file descriptors (raise its ulimit -n)"));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

absl::Status SpawnFailure(const std::string& executable, int err) {
  std::string message = absl::StrCat("cannot start ", executable, ": ", ErrnoText(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(
          absl::StrCat(message, "; make it executable (chmod +x ", executable,
                       ") and check that its filesystem is not mounted noexec"));
    case ENOEXEC:
      return absl::FailedPreconditionError(
          absl::StrCat(message,
                       "; it is not a program this host can run (another architecture, or a script "
                       "without #!): rebuild or reinstall it for this host"));
    default:
      return absl::FailedPreconditionError(
          absl::StrCat(message, "; check the path and the process limits (ulimit -u, -n)"));
  }
}

namespace {

// Runs in the forked child, so only async-signal-safe calls: everything it
// touches was prepared by the parent before fork().
[[noreturn]] void ExecChild(pid_t parent, int stdin_read, int stdout_write, int stderr_write,
                            int error_write, const char* path, char* const* argv,
                            char* const* envp) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect; then nobody would kill us.
  if (::getppid() != parent) ::_exit(127);

  // Exec keeps ignored dispositions and the blocked mask; the agent ignores
  // SIGPIPE and blocks SIGTERM/SIGINT, and a child must get neither.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);

  // Lift the pipe ends above 2 first, so one that landed on 0..2 (an agent
  // started with a closed stdin) is not overwritten by an earlier dup2.
  int sources[3] = {stdin_read, stdout_write, stderr_write};
  int lifted[3];
  for (int i = 0; i < 3; ++i) {
    lifted[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, 3);
    if (lifted[i] < 0) {
      int err = errno;
      (void)!::write(error_write, &err, sizeof(err));
      ::_exit(127);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (::dup2(lifted[i], i) < 0) {  // dup2 clears close-on-exec on the target
      int err = errno;
      (void)!::write(error_write, &err, sizeof(err));
      ::_exit(127);
    }
  }
  // Descriptors other parts of the agent opened without O_CLOEXEC must not
  // reach the child either. The error pipe is already close-on-exec.
  if (::syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec) != 0) {
    for (int fd = 3; fd < kManualCloexecLimit; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }

  // The hardened unit gives the agent CAP_SYS_ADMIN as an ambient capability
  // (for PCIe config space); no child needs it, so none inherits it.
  // Root outside the unit keeps root's capabilities either way.
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  ::execve(path, argv, envp);
  int err = errno;
  (void)!::write(error_write, &err, sizeof(err));
  ::_exit(127);
}

}  // namespace

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev == nullptr) return absl::StrCat("signal ", signal);
  return absl::StrCat("SIG", abbrev);
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(
    const std::string& executable, const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env) {
  if (executable.empty() || executable[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot start '", executable,
                     "': the executable must be an absolute path (the caller resolves it)"));
  }

  // Everything the child needs is built here: after fork it may not allocate.
  std::vector<std::string> argv_storage;
  argv_storage.reserve(args.size() + 1);
  argv_storage.push_back(executable);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_storage;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string_view name = text.substr(0, text.find('='));
    if (env.count(std::string(name)) == 0) env_storage.emplace_back(text);
  }
  for (const auto& [name, value] : env) env_storage.push_back(absl::StrCat(name, "=", value));
  std::vector<char*> envp;
  for (auto& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);

  auto stdin_pipe = MakePipe(executable);
  if (!stdin_pipe.ok()) return stdin_pipe.status();
  auto stdout_pipe = MakePipe(executable);
  if (!stdout_pipe.ok()) return stdout_pipe.status();
  auto stderr_pipe = MakePipe(executable);
  if (!stderr_pipe.ok()) return stderr_pipe.status();
  auto error_pipe = MakePipe(executable);
  if (!error_pipe.ok()) return error_pipe.status();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot start ", executable,
                                                     ": fork failed: ", ErrnoText(errno),
                                                     "; check the ulimit -u and free memory"));
  }
  if (pid == 0) {
    ExecChild(parent, stdin_pipe->read.get(), stdout_pipe->write.get(), stderr_pipe->write.get(),
              error_pipe->write.get(), executable.c_str(), argv.data(), envp.data());
  }
  // Also from this side, so Kill() reaches the group even before the child
  // ran its own setpgid. EACCES after the child's exec is expected.
  ::setpgid(pid, pid);
  stdin_pipe->read.Reset();
  stdout_pipe->write.Reset();
  stderr_pipe->write.Reset();
  error_pipe->write.Reset();

  // The error pipe closes on a successful exec and carries errno otherwise.
  int exec_errno = 0;
  ssize_t got = 0;
  do {
    got = ::read(error_pipe->read.get(), &exec_errno, sizeof(exec_errno));
  } while (got < 0 && errno == EINTR);
  if (got > 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return SpawnFailure(executable, got == sizeof(exec_errno) ? exec_errno : EIO);
  }

  int exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // O_CLOEXEC by default
  SetNonBlocking(stdin_pipe->write.get());
  SetNonBlocking(stdout_pipe->read.get());
  SetNonBlocking(stderr_pipe->read.get());
  return std::unique_ptr<ChildProcess>(
      new ChildProcess(executable, pid, stdin_pipe->write.Release(), stdout_pipe->read.Release(),
                       stderr_pipe->read.Release(), exit_fd < 0 ? -1 : exit_fd));
}

ChildProcess::ChildProcess(std::string executable, pid_t pid, int stdin_fd, int stdout_fd,
                           int stderr_fd, int exit_fd)
    : executable_(std::move(executable)),
      pid_(pid),
      stdin_fd_(stdin_fd),
      stdout_fd_(stdout_fd),
      stderr_fd_(stderr_fd),
      exit_fd_(exit_fd) {}

ChildProcess::~ChildProcess() {
  Kill();
  CloseStdin();
  CloseStdout();
  CloseStderr();
  Reap(/*block=*/true);
  if (exit_fd_ >= 0) ::close(exit_fd_);
}

void ChildProcess::CloseStdout() {
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  stdout_fd_ = -1;
}

void ChildProcess::CloseStderr() {
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
  stderr_fd_ = -1;
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
  stdin_pending_.clear();
}

void ChildProcess::WriteLine(std::string_view line) {
  if (stdin_fd_ < 0) return;
  stdin_pending_.append(line);
  if (line.empty() || line.back() != '\n') stdin_pending_.push_back('\n');
  FlushStdin();
}

void ChildProcess::FlushStdin() {
  if (stdin_fd_ < 0 || stdin_pending_.empty()) return;

  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  sigset_t previous_mask;
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous_mask);
  // A SIGPIPE already pending for this thread is someone else's: leave it.
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;

  bool broken = false;
  size_t written = 0;
  while (written < stdin_pending_.size()) {
    ssize_t n =
        ::write(stdin_fd_, stdin_pending_.data() + written, stdin_pending_.size() - written);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;  // the pipe is full; poll for POLLOUT
    broken = true;                        // EPIPE: the child stopped reading
    break;
  }
  if (broken && !was_pending) {
    const timespec no_wait = {0, 0};
    while (sigtimedwait(&pipe_signal, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);

  if (broken) {
    CloseStdin();
    return;
  }
  stdin_pending_.erase(0, written);
}

void ChildProcess::Kill() {
  if (exit_.has_value()) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
}

std::optional<ChildExit> ChildProcess::TryReap() { return Reap(/*block=*/false); }

ChildExit ChildProcess::Wait() { return *Reap(/*block=*/true); }

std::optional<ChildExit> ChildProcess::Reap(bool block) {
  if (exit_.has_value()) return exit_;
  // Peek first (WNOWAIT): while the child is an unreaped zombie its pid and
  // process-group id cannot be reused, so the group kill below is safe.
  siginfo_t info = {};
  int rc = 0;
  do {
    rc = ::waitid(P_PID, pid_, &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    // ECHILD: someone reaped it behind our back (SIGCHLD ignored); how it
    // ended is lost.
    exit_ = ChildExit{};
    return exit_;
  }
  if (info.si_pid == 0) return std::nullopt;  // still running
  ::kill(-pid_, SIGKILL);                     // grandchildren must not outlive the child
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ChildExit result;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  exit_ = result;
  if (exit_fd_ >= 0) ::close(exit_fd_);
  exit_fd_ = -1;
  return exit_;
}

}  // namespace clustercert::process
