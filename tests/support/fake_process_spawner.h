#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/process/process_spawner.h"

namespace clustercert::process::testing {

// The tests' one fake ProcessSpawner. It records every request (executable,
// args, env) and starts a stand-in instead of the executable asked for: the
// program registered with Substitute (a script under tests/, /bin/sh -c …),
// with the request's args and env. An executable registered with Refuse
// fails with that status; one not registered at all fails NotFound, so a test
// never starts a real tool by accident.
class FakeProcessSpawner final : public ProcessSpawner {
 public:
  struct Request {
    std::string executable;
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
  };

  // Runs `stand_in` (an absolute path) with `leading_args` before the
  // request's own, whenever `executable` is asked for.
  void Substitute(const std::string& executable, std::string stand_in,
                  std::vector<std::string> leading_args = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    stand_ins_[executable] = StandIn{std::move(stand_in), std::move(leading_args), {}};
  }
  void Refuse(const std::string& executable, absl::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    stand_ins_[executable] = StandIn{"", {}, std::move(status)};
  }

  absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(
      const std::string& executable, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& env) override {
    StandIn stand_in;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requests_.push_back(Request{executable, args, env});
      auto found = stand_ins_.find(executable);
      if (found == stand_ins_.end()) {
        return absl::NotFoundError("FakeProcessSpawner: no stand-in for " + executable);
      }
      stand_in = found->second;
    }
    if (!stand_in.refusal.ok()) return stand_in.refusal;
    std::vector<std::string> all = stand_in.leading_args;
    all.insert(all.end(), args.begin(), args.end());
    return ChildProcess::Spawn(stand_in.program, all, env);
  }

  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  struct StandIn {
    std::string program;
    std::vector<std::string> leading_args;
    absl::Status refusal;
  };
  mutable std::mutex mutex_;
  std::map<std::string, StandIn> stand_ins_;
  std::vector<Request> requests_;
};

}  // namespace clustercert::process::testing
