#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

// Collects every mistake found in one plan file so that a single run of the
// parser reports them all. Each error becomes a "file:line:col: message"
// line; ToStatus() sorts them by position so the output reads top to bottom
// like the file, lists the first `max_listed` and counts the rest in one last
// line (so a file with a million mistakes costs a hundred messages, not a
// million). The key path of every error is indexed so that cross-section
// rules can stay quiet about values already reported as wrong (one mistake,
// one message) in constant time per question.
class PlanErrorList {
 public:
  explicit PlanErrorList(std::string file_name, size_t max_listed = 100);

  // Records `message` (a sentence) at `at` (1-based; line 0 prints as 1).
  // `path` is the plan key the message is about ("fabric.type"), or empty.
  void Add(const SourceLocation& at, absl::string_view path, std::string message);

  // True when an error was recorded for `path` or for a key under it
  // ("nodes[1]" covers "nodes[1].agent").
  bool HasErrorAt(absl::string_view path) const;
  // True when an error was recorded for exactly `path`.
  bool HasErrorExactlyAt(absl::string_view path) const;
  // True when some error's path satisfies `matches` (a scan: call it once,
  // not once per node).
  bool AnyErrorPath(const std::function<bool(absl::string_view)>& matches) const;

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  const std::string& file_name() const { return file_name_; }

  // OK when no error was recorded; otherwise InvalidArgument whose message
  // holds one error per line.
  absl::Status ToStatus() const;

 private:
  struct Entry {
    int line = 0;
    int column = 0;
    uint64_t order = 0;  // keeps errors at one position in the order they were found
    std::string message;
  };
  static bool Before(const Entry& a, const Entry& b);

  std::string file_name_;
  size_t max_listed_;
  size_t count_ = 0;
  std::vector<Entry> listed_;  // a max-heap by position: the first max_listed_ errors
  // Every error's path and each of its parents, mapped to whether an error
  // names that path itself. One open-addressing table, because a hostile
  // plan can hold a million errors (issue 15: 100,000 nodes with ten unknown
  // keys each) and std::unordered_set's node per entry cost 3.9 s there.
  absl::flat_hash_map<std::string, bool> covered_;
};

}  // namespace clustercert::controller::plan
