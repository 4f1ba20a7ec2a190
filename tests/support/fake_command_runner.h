#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/process/command_runner.h"

namespace clustercert::testing {

// A CommandRunner with canned answers by command line ("scontrol show
// hostnames node[1-4]", words joined by spaces); records every argv and
// timeout it was given. A command line with no answer is NotFound, as a
// missing program is.
class FakeCommandRunner : public process::CommandRunner {
 public:
  void Answer(const std::string& command_line, absl::StatusOr<process::CommandResult> result) {
    answers_[command_line] = std::move(result);
  }
  void AnswerText(const std::string& command_line, std::string stdout_text, int exit_code = 0,
                  std::string stderr_text = "") {
    Answer(command_line,
           process::CommandResult{exit_code, std::move(stdout_text), std::move(stderr_text)});
  }

  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration timeout) override {
    calls_.push_back(argv);
    timeouts_.push_back(timeout);
    auto it = answers_.find(absl::StrJoin(argv, " "));
    if (it == answers_.end()) {
      return absl::NotFoundError(absl::StrCat("no canned answer for: ", absl::StrJoin(argv, " ")));
    }
    return it->second;
  }

  const std::vector<std::vector<std::string>>& calls() const { return calls_; }
  const std::vector<absl::Duration>& timeouts() const { return timeouts_; }

 private:
  std::map<std::string, absl::StatusOr<process::CommandResult>> answers_;
  std::vector<std::vector<std::string>> calls_;
  std::vector<absl::Duration> timeouts_;
};

}  // namespace clustercert::testing
