#pragma once

#include <string>

#include "absl/time/time.h"

namespace clustercert::controller {

// An interval as the progress bar shows it: "45s", "2m05s", "1h02m"
// (truncated to the unit shown; negative intervals show as "0s").
std::string FormatShortDuration(absl::Duration duration);

// One phase's progress (done of total units, e.g. pairwise cells or
// collective sizes) since it started, and the text that shows it: a status
// line redrawn in place on a terminal, throttled plain lines in a log. It does
// no I/O and no locking; Progress owns both and the clock.
class ProgressBar {
 public:
  ProgressBar(std::string phase, int total, std::string unit, absl::Time start);

  // `done` of `total` are finished (total may grow, e.g. with retests);
  // `what` names the one that just finished.
  void Update(int done, int total, std::string what);

  const std::string& phase() const { return phase_; }
  bool finished() const { return done_ >= total_; }

  // "[pairwise] [##########..........] 12/24 cells  2m05s elapsed  ETA 2m05s  node1->node3
  // write_bw", without a newline.
  std::string StatusLine(absl::Time now) const;
  // "[pairwise] 12/24 cells, 2m05s elapsed, ETA 2m05s", without a newline.
  std::string PlainLine(absl::Time now) const;
  // "[pairwise] stopped at 12/24 cells, 2m05s elapsed": a bar ended early.
  std::string StoppedLine(absl::Time now) const;

  // Off a terminal, a line is due at the start, at each new 10% step, when
  // 30 s passed since the last one with progress made since, and at the end.
  bool PlainLineDue(absl::Time now) const;
  void MarkPlainLine(absl::Time now);

 private:
  std::string Counts() const;             // "12/24 cells"
  std::string Eta(absl::Time now) const;  // "ETA 2m05s", "ETA --", "done"
  int Step(int done) const;               // the 10% step `done` is in

  std::string phase_;
  int total_;
  std::string unit_;
  absl::Time start_;
  int done_ = 0;
  std::string what_;
  int plain_done_ = -1;  // done at the last plain line; -1: none yet
  absl::Time plain_at_ = absl::InfinitePast();
};

}  // namespace clustercert::controller
