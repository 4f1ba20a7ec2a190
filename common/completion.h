#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "absl/time/time.h"

namespace clustercert {

// A count of events that threads wait on reaching zero: Completion(1) is a
// one-shot "it has happened", Completion(n) waits for n callbacks. Built on
// std::mutex and std::condition_variable rather than absl::Notification or
// absl::BlockingCounter because Debian's abseil is not compiled with
// ThreadSanitizer: the ordering those give is invisible to it, so every
// result handed from a callback thread to the waiter reads as a data race.
class Completion {
 public:
  explicit Completion(size_t count = 1) : pending_(count) {}
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // One event; extra events once the count is zero are ignored.
  void Notify() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_ > 0 && --pending_ == 0) done_.notify_all();
  }
  bool HasBeenNotified() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_ == 0;
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }
  // True when the count reached zero within `timeout`.
  bool WaitFor(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return done_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                          [this] { return pending_ == 0; });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable done_;
  size_t pending_;
};

}  // namespace clustercert
