#include "controller/plan/plan_error_list.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustercert::plan {

PlanErrorList::PlanErrorList(std::string file_name) : file_name_(std::move(file_name)) {}

void PlanErrorList::Add(const SourceLocation& at, absl::string_view path, std::string message) {
  entries_.push_back(
      Entry{std::max(at.line, 1), std::max(at.column, 1), std::string(path), std::move(message)});
}

bool PlanErrorList::HasErrorAt(absl::string_view path) const {
  for (const Entry& entry : entries_) {
    absl::string_view recorded = entry.path;
    if (recorded == path) return true;
    if (absl::StartsWith(recorded, path) && recorded.size() > path.size() &&
        (recorded[path.size()] == '.' || recorded[path.size()] == '[')) {
      return true;
    }
  }
  return false;
}

bool PlanErrorList::AnyErrorPath(const std::function<bool(absl::string_view)>& matches) const {
  for (const Entry& entry : entries_) {
    if (matches(entry.path)) return true;
  }
  return false;
}

absl::Status PlanErrorList::ToStatus() const {
  if (entries_.empty()) return absl::OkStatus();
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  std::vector<std::string> lines;
  lines.reserve(sorted.size());
  for (const Entry& entry : sorted) {
    lines.push_back(
        absl::StrCat(file_name_, ":", entry.line, ":", entry.column, ": ", entry.message));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace clustercert::plan
