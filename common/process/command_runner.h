#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace clustercert::process {

// What a finished child process left behind.
struct CommandResult {
  int exit_code = 0;  // the child's exit status (0 = success)
  std::string stdout_text;
  std::string stderr_text;
};

// Runs an external tool (ofed_info, mpirun, …) to completion with a deadline.
//
// This is the boundary between the code that needs a tool's output and the
// host's process table: callers ask for argv and get text back, tests hand in
// canned output. Implementations never go through a shell. Errors: NotFound
// when the program does not exist, DeadlineExceeded when it outlives
// `timeout` (it is killed with its process group), Internal when it dies from
// a signal; a non-zero exit is a result, not an error.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                                            absl::Duration timeout) = 0;
};

}  // namespace clustercert::process
