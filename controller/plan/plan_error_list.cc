#include "controller/plan/plan_error_list.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustercert::controller::plan {

PlanErrorList::PlanErrorList(std::string file_name, size_t max_listed)
    : file_name_(std::move(file_name)), max_listed_(std::max<size_t>(max_listed, 1)) {}

bool PlanErrorList::Before(const Entry& a, const Entry& b) {
  return std::tie(a.line, a.column, a.order) < std::tie(b.line, b.column, b.order);
}

void PlanErrorList::Add(const SourceLocation& at, absl::string_view path, std::string message) {
  Entry entry{std::max(at.line, 1), std::max(at.column, 1), count_++, std::move(message)};
  // Keep the first max_listed_ by position: the heap's top is the last of them.
  if (listed_.size() < max_listed_ || Before(entry, listed_.front())) {
    listed_.push_back(std::move(entry));
    std::push_heap(listed_.begin(), listed_.end(), Before);
    if (listed_.size() > max_listed_) {
      std::pop_heap(listed_.begin(), listed_.end(), Before);
      listed_.pop_back();
    }
  }
  if (path.empty()) return;
  covered_[path] = true;
  // "nodes[1].rails[0]" covers "nodes[1].rails", "nodes[1]" and "nodes"; a
  // parent already present means its own parents are too.
  for (size_t i = path.size(); i-- > 0;) {
    if (path[i] != '.' && path[i] != '[') continue;
    if (!covered_.try_emplace(path.substr(0, i), false).second) break;
  }
}

bool PlanErrorList::HasErrorAt(absl::string_view path) const { return covered_.contains(path); }

bool PlanErrorList::HasErrorExactlyAt(absl::string_view path) const {
  const auto it = covered_.find(path);
  return it != covered_.end() && it->second;
}

bool PlanErrorList::AnyErrorPath(const std::function<bool(absl::string_view)>& matches) const {
  for (const auto& [path, exact] : covered_) {
    if (exact && matches(path)) return true;
  }
  return false;
}

absl::Status PlanErrorList::ToStatus() const {
  if (count_ == 0) return absl::OkStatus();
  std::vector<Entry> sorted = listed_;
  std::sort(sorted.begin(), sorted.end(), Before);
  std::vector<std::string> lines;
  lines.reserve(sorted.size() + 1);
  for (const Entry& entry : sorted) {
    lines.push_back(
        absl::StrCat(file_name_, ":", entry.line, ":", entry.column, ": ", entry.message));
  }
  if (count_ > sorted.size()) {
    const Entry& last = sorted.back();
    lines.push_back(absl::StrCat(file_name_, ":", last.line, ":", last.column, ": and ",
                                 count_ - sorted.size(),
                                 " more error(s) after this line, not "
                                 "listed (only the first ",
                                 max_listed_, " are); fix these and check the plan again."));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace clustercert::controller::plan
