#include "controller/phases/call_loop.h"

#include <chrono>

namespace clustercert::controller {

CallLoop::~CallLoop() { Drain(); }

void CallLoop::Post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(task));
  wake_.notify_one();
}

void CallLoop::Answered(std::function<void()> continuation) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(continuation));
  --calls_out_;  // in the same lock as the push: Drain never sees neither
  wake_.notify_one();
}

void CallLoop::RunUntil(const std::function<bool()>& done, absl::Duration tick_period,
                        const std::function<void()>& tick) {
  using SteadyClock = std::chrono::steady_clock;
  const bool ticking = tick != nullptr && tick_period < absl::InfiniteDuration();
  const auto period = ticking ? absl::ToChronoNanoseconds(tick_period) : std::chrono::nanoseconds();
  auto next_tick = SteadyClock::now() + period;
  while (!done()) {
    // Checked before waiting, so a steady stream of answers (a thousand
    // pairs) cannot hold the tick off.
    if (ticking && SteadyClock::now() >= next_tick) {
      next_tick = SteadyClock::now() + period;
      tick();
      continue;
    }
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto ready = [this] { return !queue_.empty(); };
      if (!ticking) {
        wake_.wait(lock, ready);
      } else if (!wake_.wait_until(lock, next_tick, ready)) {
        continue;  // time to tick
      }
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void CallLoop::Drain() {
  RunUntil([this] {
    std::lock_guard<std::mutex> lock(mutex_);
    return queue_.empty() && calls_out_ == 0;
  });
}

}  // namespace clustercert::controller
