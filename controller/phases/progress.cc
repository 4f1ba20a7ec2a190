#include "controller/phases/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/time/clock.h"
#include "common/text_escape.h"

namespace clustercert::controller {
namespace {

// Back to column 0 and erase the line: the bar is redrawn over itself.
constexpr char kEraseLine[] = "\r\033[2K";

}  // namespace

Progress::Progress(std::FILE* out, bool quiet, bool tty, Clock clock)
    : out_(out), quiet_(quiet), tty_(tty), clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return absl::Now(); };
}

bool Progress::IsInteractive(std::FILE* out) {
  const char* term = std::getenv("TERM");
  return ::isatty(::fileno(out)) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

void Progress::Line(const std::string& phase, const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ClearBar();
  // Lines quote agents (names, errors, NCCL output): neutralised here, at
  // the terminal, so the certificate keeps what was said.
  std::fprintf(out_, "[%s] %s\n", TerminalText(phase).c_str(), TerminalText(text).c_str());
  RedrawBar();
  std::fflush(out_);
}

void Progress::Block(const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ClearBar();
  std::fputs(TerminalBlock(text).c_str(), out_);
  RedrawBar();
  std::fflush(out_);
}

void Progress::StartBar(const std::string& phase, int total, const std::string& unit) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  FinishBar();
  if (total <= 0) return;
  bar_.emplace(phase, total, unit, clock_());
  ShowBar();
  std::fflush(out_);
}

void Progress::Advance(const std::string& phase, int done, int total, const std::string& what) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (bar_ && bar_->phase() != phase) FinishBar();
  if (!bar_) {
    if (total <= 0) return;
    bar_.emplace(phase, total, "", clock_());
  }
  bar_->Update(done, total, what);
  ShowBar();
  if (bar_->finished()) {
    if (bar_drawn_) std::fputc('\n', out_);
    bar_drawn_ = false;
    bar_.reset();
  }
  std::fflush(out_);
}

void Progress::EndBar() {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  FinishBar();
  std::fflush(out_);
}

void Progress::ShowBar() {
  const absl::Time now = clock_();
  if (tty_) {
    std::fprintf(out_, "%s%s", kEraseLine,
                 FitToTerminal(TerminalText(bar_->StatusLine(now))).c_str());
    bar_drawn_ = true;
  } else if (bar_->PlainLineDue(now)) {
    std::fprintf(out_, "%s\n", TerminalText(bar_->PlainLine(now)).c_str());
    bar_->MarkPlainLine(now);
  }
}

void Progress::ClearBar() {
  if (bar_drawn_) std::fputs(kEraseLine, out_);
}

void Progress::RedrawBar() {
  if (bar_drawn_) {
    std::fputs(FitToTerminal(TerminalText(bar_->StatusLine(clock_()))).c_str(), out_);
  }
}

void Progress::FinishBar() {
  if (!bar_) return;
  if (bar_drawn_) {
    std::fputc('\n', out_);  // leave it where it stopped
  } else if (!tty_) {
    std::fprintf(out_, "%s\n", TerminalText(bar_->StoppedLine(clock_())).c_str());
  }
  bar_drawn_ = false;
  bar_.reset();
}

// A status line longer than the terminal wraps, and \r then only returns to
// the start of its last row: the bar would repeat down the screen.
std::string Progress::FitToTerminal(std::string line) const {
  struct winsize size {};
  if (::ioctl(::fileno(out_), TIOCGWINSZ, &size) == 0 && size.ws_col > 1 &&
      line.size() >= size.ws_col) {
    line.resize(Utf8Prefix(line, size.ws_col - 1));  // never half a character
  }
  return line;
}

}  // namespace clustercert::controller
