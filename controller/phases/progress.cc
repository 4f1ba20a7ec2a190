#include "controller/phases/progress.h"

namespace clustercert::controller {

void Progress::Line(const std::string& phase, const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::fprintf(out_, "[%s] %s\n", phase.c_str(), text.c_str());
  std::fflush(out_);
}

void Progress::Block(const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

}  // namespace clustercert::controller
