#pragma once

#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "controller/phases/progress_bar.h"

namespace clustercert::controller {

// Progress lines for long work ("[connect] node1 ok ..."), written to stderr
// so stdout stays clean for --json, and a progress bar with an ETA for the
// phases that count their work (pairwise cells, collective sizes): redrawn in
// place on a terminal, throttled plain lines in a log. Thread-safe: callbacks
// report from client threads. Every line, block and bar is neutralised for the
// terminal here (common/text_escape.h): the agents' names, errors and NCCL
// output it quotes are shown, never obeyed.
class Progress {
 public:
  using Clock = std::function<absl::Time()>;

  // A terminal or not is decided from `out` (isatty, and TERM not "dumb").
  explicit Progress(std::FILE* out = stderr, bool quiet = false)
      : Progress(out, quiet, IsInteractive(out), nullptr) {}
  // `tty` forces the mode; `clock` (absl::Now when empty) times the bar.
  Progress(std::FILE* out, bool quiet, bool tty, Clock clock);

  void Line(const std::string& phase, const std::string& text);
  // Text written as it is (a table such as nccl-tests'), lines ending in '\n'.
  void Block(const std::string& text);

  // Starts the bar of `phase` at 0 of `total` `unit` ("cells", "sizes"); the
  // elapsed time and the ETA count from now. Ends a bar still showing.
  void StartBar(const std::string& phase, int total, const std::string& unit);
  // `done` of `total` are finished; `what` names the one just finished
  // ("node1->node3 write_bw"); a smaller done than before is ignored, so
  // threads may race to report. done == total ends the bar. A phase with no bar
  // started gets one now (no unit; elapsed counts from this call).
  void Advance(const std::string& phase, int done, int total, const std::string& what);
  // Ends the bar where it stands (a phase that stopped early); no-op without one.
  void EndBar();

  static bool IsInteractive(std::FILE* out);
  // --quiet: nothing is written, so nothing need be measured to be shown.
  bool quiet() const { return quiet_; }

 private:
  // All with mutex_ held.
  void ShowBar();
  void ClearBar();
  void RedrawBar();
  void FinishBar();
  std::string FitToTerminal(std::string line) const;

  std::FILE* out_;
  bool quiet_;
  bool tty_;
  Clock clock_;
  std::mutex mutex_;
  std::optional<ProgressBar> bar_;
  bool bar_drawn_ = false;  // tty: the status line is on screen, cursor at its end
};

}  // namespace clustercert::controller
