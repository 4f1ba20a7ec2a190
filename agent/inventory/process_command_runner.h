#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/inventory/command_runner.h"

namespace clustercert::inventory {

// The live CommandRunner: posix_spawn without a shell, stdin from /dev/null,
// stdout and stderr captured through pipes (at most 1 MiB each), a deadline
// enforced by killing the child's whole process group (ofed_info is a shell
// script with children of its own). The child is always reaped, on every path.
class ProcessCommandRunner : public CommandRunner {
 public:
  // Searches $PATH, or the usual system directories when $PATH is unset.
  ProcessCommandRunner();
  // Searches `search_path` (colon-separated directories) for argv[0] without a '/'.
  explicit ProcessCommandRunner(std::string search_path);

  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                                    absl::Duration timeout) override;

 private:
  absl::StatusOr<std::string> FindProgram(const std::string& name) const;

  std::string search_path_;
};

}  // namespace clustercert::inventory
