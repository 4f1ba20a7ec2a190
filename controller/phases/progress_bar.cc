#include "controller/phases/progress_bar.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustercert::controller {
namespace {

constexpr int kBarWidth = 20;
constexpr absl::Duration kPlainLinePeriod = absl::Seconds(30);

}  // namespace

std::string FormatShortDuration(absl::Duration duration) {
  const int64_t seconds = std::max<int64_t>(0, absl::ToInt64Seconds(duration));
  if (seconds < 60) return absl::StrCat(seconds, "s");
  if (seconds < 3600) return absl::StrFormat("%dm%02ds", seconds / 60, seconds % 60);
  return absl::StrFormat("%dh%02dm", seconds / 3600, seconds % 3600 / 60);
}

ProgressBar::ProgressBar(std::string phase, int total, std::string unit, absl::Time start)
    : phase_(std::move(phase)), total_(std::max(total, 1)), unit_(std::move(unit)), start_(start) {}

void ProgressBar::Update(int done, int total, std::string what) {
  total_ = std::max(total, 1);
  // Never backwards: callers on different threads may report out of order.
  done_ = std::max(done_, std::clamp(done, 0, total_));
  what_ = std::move(what);
}

std::string ProgressBar::Counts() const {
  return absl::StrCat(done_, "/", total_, unit_.empty() ? "" : " ", unit_);
}

std::string ProgressBar::Eta(absl::Time now) const {
  if (finished()) return "done";
  if (done_ == 0) return "ETA --";
  const absl::Duration elapsed = now - start_;
  return absl::StrCat("ETA ", FormatShortDuration(elapsed * (total_ - done_) / done_));
}

std::string ProgressBar::StatusLine(absl::Time now) const {
  const int filled = done_ * kBarWidth / total_;
  std::string line = absl::StrCat("[", phase_, "] [", std::string(filled, '#'),
                                  std::string(kBarWidth - filled, '.'), "] ", Counts(), "  ",
                                  FormatShortDuration(now - start_), " elapsed  ", Eta(now));
  if (!what_.empty()) absl::StrAppend(&line, "  ", what_);
  return line;
}

std::string ProgressBar::PlainLine(absl::Time now) const {
  return absl::StrCat("[", phase_, "] ", Counts(), ", ", FormatShortDuration(now - start_),
                      " elapsed, ", Eta(now));
}

std::string ProgressBar::StoppedLine(absl::Time now) const {
  return absl::StrCat("[", phase_, "] stopped at ", Counts(), ", ",
                      FormatShortDuration(now - start_), " elapsed");
}

int ProgressBar::Step(int done) const { return done * 10 / total_; }

bool ProgressBar::PlainLineDue(absl::Time now) const {
  if (plain_done_ < 0) return true;
  if (done_ == plain_done_) return false;
  return finished() || Step(done_) > Step(plain_done_) || now - plain_at_ >= kPlainLinePeriod;
}

void ProgressBar::MarkPlainLine(absl::Time now) {
  plain_done_ = done_;
  plain_at_ = now;
}

}  // namespace clustercert::controller
