#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "controller/plan/plan.h"

namespace clustercert::plan {

// Collects every mistake found in one plan file so that a single run of the
// parser reports them all. Each error becomes a "file:line:col: message"
// line; ToStatus() sorts them by position so the output reads top to bottom
// like the file. The key path of each error is remembered so that
// cross-section rules can stay quiet about values already reported as wrong
// (one mistake, one message).
class PlanErrorList {
 public:
  explicit PlanErrorList(std::string file_name);

  // Records `message` (a sentence) at `at` (1-based; line 0 prints as 1).
  // `path` is the plan key the message is about ("fabric.type"), or empty.
  void Add(const SourceLocation& at, absl::string_view path, std::string message);

  // True when an error was recorded for `path` or for a key under it
  // ("nodes[1]" covers "nodes[1].agent").
  bool HasErrorAt(absl::string_view path) const;
  // True when some error's path satisfies `matches`.
  bool AnyErrorPath(const std::function<bool(absl::string_view)>& matches) const;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const std::string& file_name() const { return file_name_; }

  // OK when no error was recorded; otherwise InvalidArgument whose message
  // holds one error per line.
  absl::Status ToStatus() const;

 private:
  struct Entry {
    int line = 0;
    int column = 0;
    std::string path;
    std::string message;
  };

  std::string file_name_;
  std::vector<Entry> entries_;
};

}  // namespace clustercert::plan
