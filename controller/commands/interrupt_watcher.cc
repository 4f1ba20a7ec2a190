#include "controller/commands/interrupt_watcher.h"

#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "controller/commands/diagnostics.h"

namespace clustercert::controller {
namespace {

// How often the watcher looks at quit_ between signals.
constexpr long kWakeNanoseconds = 100 * 1000 * 1000;

const char* SignalName(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace

InterruptWatcher::InterruptWatcher(RunStop& stop, std::function<absl::Time()> now)
    : stop_(stop), now_(std::move(now)) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  thread_ = std::thread([this] { Watch(); });
}

InterruptWatcher::~InterruptWatcher() {
  quit_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

int InterruptWatcher::exit_code() const {
  const int signal = signal_;
  return signal == 0 ? 0 : 128 + signal;
}

void InterruptWatcher::Watch() {
  const timespec wake{0, kWakeNanoseconds};
  while (!quit_) {
    const int signal = sigtimedwait(&signals_, nullptr, &wake);
    if (signal < 0) continue;  // EAGAIN (the wake) or EINTR
    if (signal_ != 0) {
      Diagnostics().error(
          "second {}: exiting now; devices the agents lease for this run stay leased until their "
          "lease runs out (60 s at most)",
          SignalName(signal));
      std::_Exit(128 + signal);
    }
    signal_ = signal;
    Diagnostics().info(
        "{}: stopping: ending the agents' tests and jobs, then writing the partial certificate "
        "(send it again to exit at once)",
        SignalName(signal));
    stop_.Request(SignalName(signal), now_());
  }
}

}  // namespace clustercert::controller
