#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/process/command_runner.h"
#include "common/process/process_spawner.h"

namespace clustercert::process {

// The live CommandRunner over ChildProcess (child_process.h): no shell, stdin
// at end of file, stdout and stderr captured (at most 1 MiB each), a deadline
// enforced by killing the child's whole process group (ofed_info is a shell
// script with children of its own), no inherited descriptors or ambient
// capabilities. The child is always reaped, on every path.
class ProcessCommandRunner : public CommandRunner {
 public:
  // Searches $PATH, or the usual system directories when $PATH is unset.
  ProcessCommandRunner();
  // Searches `search_path` (colon-separated directories) for argv[0] without
  // a '/', and starts it through `spawner` (a test's fake; by default the live one).
  explicit ProcessCommandRunner(std::string search_path, ProcessSpawner& spawner = LiveSpawner());

  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                                    absl::Duration timeout) override;

 private:
  // An absolute path to `name`: as given when it holds a '/', else the first
  // executable match on the search path.
  absl::StatusOr<std::string> FindProgram(const std::string& name) const;

  std::string search_path_;
  ProcessSpawner& spawner_;
};

}  // namespace clustercert::process
