#include "common/process/process_command_runner.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/process/child_process.h"

namespace clustercert::process {
namespace {

constexpr char kDefaultSearchPath[] =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr size_t kMaxCapturedBytes = 1 << 20;
// Without a pidfd (Linux < 5.3) the exit is polled this often.
constexpr auto kReapPollInterval = std::chrono::milliseconds(5);

using SteadyClock = std::chrono::steady_clock;

int MillisecondsLeft(SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 1 << 30));
}

// Reads what is there on the child's stdout and stderr until both close or
// the deadline passes; false at the deadline.
absl::StatusOr<bool> Capture(ChildProcess& child, SteadyClock::time_point deadline,
                             CommandResult* result) {
  char buffer[4096];
  while (child.stdout_fd() >= 0 || child.stderr_fd() >= 0) {
    if (SteadyClock::now() >= deadline) return false;
    struct Stream {
      int fd;
      std::string* text;
      void (ChildProcess::*close)();
    };
    Stream streams[] = {{child.stdout_fd(), &result->stdout_text, &ChildProcess::CloseStdout},
                        {child.stderr_fd(), &result->stderr_text, &ChildProcess::CloseStderr}};
    pollfd fds[2] = {{streams[0].fd, POLLIN, 0}, {streams[1].fd, POLLIN, 0}};  // -1: ignored
    if (::poll(fds, 2, MillisecondsLeft(deadline)) < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    for (int i = 0; i < 2; ++i) {
      if (streams[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(streams[i].fd, buffer, sizeof(buffer));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        (child.*streams[i].close)();
        continue;
      }
      const size_t room = kMaxCapturedBytes - std::min(kMaxCapturedBytes, streams[i].text->size());
      streams[i].text->append(buffer, std::min(room, static_cast<size_t>(n)));
    }
  }
  return true;
}

// Waits for the exit once the pipes closed; nullopt at the deadline.
std::optional<ChildExit> AwaitExit(ChildProcess& child, SteadyClock::time_point deadline) {
  for (;;) {
    if (std::optional<ChildExit> exit = child.TryReap()) return exit;
    if (SteadyClock::now() >= deadline) return std::nullopt;
    if (child.exit_fd() >= 0) {
      pollfd exited{child.exit_fd(), POLLIN, 0};
      ::poll(&exited, 1, MillisecondsLeft(deadline));
    } else {
      std::this_thread::sleep_for(kReapPollInterval);
    }
  }
}

}  // namespace

ProcessCommandRunner::ProcessCommandRunner()
    : ProcessCommandRunner([] {
        const char* path = std::getenv("PATH");
        return std::string(path != nullptr && *path != '\0' ? path : kDefaultSearchPath);
      }()) {}

ProcessCommandRunner::ProcessCommandRunner(std::string search_path, ProcessSpawner& spawner)
    : search_path_(std::move(search_path)), spawner_(spawner) {}

absl::StatusOr<std::string> ProcessCommandRunner::FindProgram(const std::string& name) const {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) != 0) return SpawnFailure(name, errno);
    if (name[0] == '/') return name;
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return SpawnFailure(name, errno);
    return absl::StrCat(cwd, "/", name);
  }
  for (absl::string_view dir : absl::StrSplit(search_path_, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (candidate[0] == '/' && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(name, " not found in ", search_path_));
}

absl::StatusOr<CommandResult> ProcessCommandRunner::Run(const std::vector<std::string>& argv,
                                                        absl::Duration timeout) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("empty command line");
  absl::StatusOr<std::string> program = FindProgram(argv[0]);
  if (!program.ok()) return program.status();
  absl::StatusOr<std::unique_ptr<ChildProcess>> spawned =
      spawner_.Spawn(*program, std::vector<std::string>(argv.begin() + 1, argv.end()), {});
  if (!spawned.ok()) return spawned.status();
  ChildProcess& child = **spawned;
  child.CloseStdin();  // the tool reads end of file at once

  const auto deadline = SteadyClock::now() + absl::ToChronoMicroseconds(timeout);
  CommandResult result;
  absl::StatusOr<bool> captured = Capture(child, deadline, &result);
  if (!captured.ok()) return captured.status();
  const std::optional<ChildExit> exit = *captured ? AwaitExit(child, deadline) : std::nullopt;
  if (!exit.has_value()) {
    // ~ChildProcess kills the group and reaps.
    return absl::DeadlineExceededError(absl::StrCat(argv[0], " did not finish within ",
                                                    absl::FormatDuration(timeout), "; killed it"));
  }
  if (exit->signal != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " was killed by signal ", exit->signal, " (",
                                            SignalName(exit->signal), ")"));
  }
  if (exit->exit_code < 0) {
    // Reaped behind our back (SIGCHLD ignored in this process): not a result.
    return absl::InternalError(
        absl::StrCat(argv[0],
                     " ended but its exit status was lost (SIGCHLD is ignored in this process); "
                     "leave SIGCHLD at its default so the runner can reap its own children"));
  }
  result.exit_code = exit->exit_code;
  return result;
}

}  // namespace clustercert::process
