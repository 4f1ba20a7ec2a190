#include "common/periodic_thread.h"

#include <utility>

namespace clustercert {

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicThread::Start(absl::Duration period, std::function<void()> tick) {
  thread_ = std::thread([this, period, tick = std::move(tick)] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, absl::ToChronoMilliseconds(period));
      if (stopping_) break;
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

}  // namespace clustercert
