#pragma once

#include <atomic>
#include <cstdint>

#include "absl/time/clock.h"
#include "clustercert/v1/peer.pb.h"

namespace clustercert::agent::peer {

// Bytes moved by a running test, written by the engine's data loops and read
// by progress queries from another thread (relaxed atomics: a progress figure
// may lag by one message).
class RunProgress {
 public:
  // Counts from construction until destruction, whichever way the run ends.
  class Running {
   public:
    explicit Running(RunProgress& progress) : progress_(progress) { progress_.Start(); }
    ~Running() { progress_.Stop(); }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;

   private:
    RunProgress& progress_;
  };

  void Start() {
    bytes_.store(0, std::memory_order_relaxed);
    start_us_.store(absl::ToUnixMicros(absl::Now()), std::memory_order_relaxed);
    running_.store(true, std::memory_order_release);
  }
  void Stop() { running_.store(false, std::memory_order_release); }
  std::atomic<uint64_t>* counter() { return &bytes_; }

  v1::PeerTestProgress Snapshot() const {
    v1::PeerTestProgress progress;
    progress.set_running(running_.load(std::memory_order_acquire));
    progress.set_bytes(bytes_.load(std::memory_order_relaxed));
    const int64_t start = start_us_.load(std::memory_order_relaxed);
    if (start > 0) progress.set_seconds((absl::ToUnixMicros(absl::Now()) - start) / 1e6);
    return progress;
  }

 private:
  std::atomic<uint64_t> bytes_{0};
  std::atomic<int64_t> start_us_{0};
  std::atomic<bool> running_{false};
};

}  // namespace clustercert::agent::peer
