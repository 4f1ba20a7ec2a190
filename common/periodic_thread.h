#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace clustercert {

// Calls `tick` every `period` on a thread of its own, from Start until the
// object is destroyed (which wakes the thread and joins it, so no tick runs
// after). The registries' lease reapers.
class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Call once.
  void Start(absl::Duration period, std::function<void()> tick);
  // Wakes the thread and joins it: no tick runs after. Idempotent.
  void Stop();

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace clustercert
