#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process/child_process.h"

namespace clustercert::process {

// Starts child processes: the seam where a test puts a fake
// (tests/support/fake_process_spawner.h) between a component and the host's
// process table. The live spawner is ChildProcess::Spawn; arguments as there.
class ProcessSpawner {
 public:
  virtual ~ProcessSpawner() = default;
  virtual absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(
      const std::string& executable, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& env) = 0;
};

// ChildProcess::Spawn behind the interface; stateless, so one serves all.
class LiveProcessSpawner final : public ProcessSpawner {
 public:
  absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(
      const std::string& executable, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& env) override {
    return ChildProcess::Spawn(executable, args, env);
  }
};

// The process-wide live spawner, for components built without one.
ProcessSpawner& LiveSpawner();

}  // namespace clustercert::process
