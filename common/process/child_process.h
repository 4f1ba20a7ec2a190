#pragma once

// ChildProcess owns one child process (a collective worker, a tool the
// CommandRunner runs, mpirun): the one way this code base starts a process,
// with a pipe on each of its stdin, stdout and stderr. The child leads its own process group,
// so Kill() reaches whatever it started; it inherits none of the parent's file
// descriptors (every pipe is O_CLOEXEC and the child marks all its other
// descriptors close-on-exec before exec, so gRPC sockets never leak into a
// worker); and it gets PR_SET_PDEATHSIG(SIGKILL), so a crashed parent takes its
// children along. Because the kernel ties PR_SET_PDEATHSIG to the *thread* that
// forked, call Spawn from a thread that outlives the child (CollectiveJob
// spawns from its own event-loop thread, never from a gRPC pool thread that
// may be retired while the child runs).
//
// Not thread-safe: the owner serialises calls (CollectiveJob holds its mutex).
// The destructor kills the group and reaps the child, so no zombie outlives it;
// it blocks until the kernel has ended the child, which after SIGKILL is at
// once unless the child sits in uninterruptible sleep inside a driver.

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace clustercert::process {

// How a reaped child ended: exactly one of exit_code >= 0 or signal > 0.
struct ChildExit {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;      // 0 when it exited by itself
};

class ChildProcess {
 public:
  // Starts `executable` (an absolute path) with `args` (without argv[0]) and
  // this process's environment plus `env` (which overrides same-named
  // variables), with no ambient capabilities (the hardened unit gives the
  // agent CAP_SYS_ADMIN for PCIe config space; no child needs it).
  // Returns only once the exec has happened; an exec that fails is reported
  // as SpawnFailure's sentence, and the child is reaped.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(
      const std::string& executable, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& env);

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& executable() const { return executable_; }

  // Non-blocking read ends of the child's stdout and stderr; -1 once closed.
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  void CloseStdout();
  void CloseStderr();
  // A pidfd that polls readable when the child exits; -1 when the kernel has
  // no pidfd_open (then poll TryReap on a timer).
  int exit_fd() const { return exit_fd_; }

  // Queues `line` for the child's stdin and writes as much as the pipe takes
  // without blocking; the rest waits for FlushStdin (poll stdin_fd() for
  // POLLOUT while HasPendingStdin()). A child that closed its stdin or exited
  // makes the write fail with EPIPE: the bytes are dropped and nothing is
  // reported, since the child's exit status tells the story. SIGPIPE never
  // fires, whatever the process's disposition: the write runs with SIGPIPE
  // blocked in the calling thread and the SIGPIPE an EPIPE raises is consumed
  // before it is unblocked (node-agent also ignores SIGPIPE in main.cc).
  void WriteLine(std::string_view line);
  void FlushStdin();
  bool HasPendingStdin() const { return !stdin_pending_.empty(); }
  int stdin_fd() const { return stdin_fd_; }
  void CloseStdin();

  // SIGKILL to the child's process group (and the child itself, in case it
  // left the group). A no-op once the child is reaped, so a reused pid is
  // never hit.
  void Kill();
  // Reaps the child if it has exited; nullopt while it runs. Before reaping it
  // kills the rest of the group, so grandchildren do not outlive the child.
  std::optional<ChildExit> TryReap();
  // Blocks until the child exits, then as TryReap.
  ChildExit Wait();
  bool reaped() const { return exit_.has_value(); }

 private:
  ChildProcess(std::string executable, pid_t pid, int stdin_fd, int stdout_fd, int stderr_fd,
               int exit_fd);
  std::optional<ChildExit> Reap(bool block);

  std::string executable_;
  pid_t pid_;
  int stdin_fd_;
  int stdout_fd_;
  int stderr_fd_;
  int exit_fd_;
  std::string stdin_pending_;
  std::optional<ChildExit> exit_;
};

// "SIGSEGV" for SIGSEGV; "signal 77" for one without a name.
std::string SignalName(int signal);

// Why `executable` cannot start, from the errno of exec (or access): NotFound,
// PermissionDenied with the chmod fix, FailedPrecondition otherwise, each a
// sentence beginning "cannot start <executable>: <errno text>".
absl::Status SpawnFailure(const std::string& executable, int err);

}  // namespace clustercert::process
