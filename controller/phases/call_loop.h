#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/client/agent_client.h"

namespace clustercert::controller {

// The one thread a phase's asynchronous agent calls continue on. The phase
// starts calls from the loop's thread; each call's callback, made by Bind,
// only queues its continuation, so no client thread blocks or runs phase
// logic, and the phase's state needs no lock: everything that touches it
// runs here, one task at a time. A round of a thousand pair tests is a
// thousand small state machines on this thread, not a thousand threads.
class CallLoop {
 public:
  CallLoop() = default;
  CallLoop(const CallLoop&) = delete;
  CallLoop& operator=(const CallLoop&) = delete;
  // Runs what is queued and waits for every bound callback still out (each
  // agent call carries its own deadline, so this ends).
  ~CallLoop();

  // Queues `task` for the loop's thread; callable from any thread.
  void Post(std::function<void()> task);

  // The callback for one agent call: queues `continuation` with the answer.
  // A callback the client drops without calling (it must not; every call
  // answers once) still continues, with an Internal error, so no state
  // machine waits forever for it.
  template <typename Response>
  AgentCallback<Response> Bind(std::function<void(absl::StatusOr<Response>)> continuation);

  // Runs queued tasks on the calling thread until `done()` holds, checked
  // after each task. While it waits, `tick` runs every `tick_period` of wall
  // time (live progress; no deadline depends on it).
  void RunUntil(const std::function<bool()>& done,
                absl::Duration tick_period = absl::InfiniteDuration(),
                const std::function<void()>& tick = nullptr);

  // Runs until nothing is queued and no bound callback is out.
  void Drain();

 private:
  template <typename Response>
  class PendingCall;

  // A bound call's answer: queues its continuation and counts the call in.
  void Answered(std::function<void()> continuation);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  size_t calls_out_ = 0;                     // guarded by mutex_
};

template <typename Response>
class CallLoop::PendingCall {
 public:
  PendingCall(CallLoop& loop, std::function<void(absl::StatusOr<Response>)> continuation)
      : loop_(loop), continuation_(std::move(continuation)) {}
  PendingCall(const PendingCall&) = delete;
  PendingCall& operator=(const PendingCall&) = delete;
  ~PendingCall() {
    if (!answered_) {
      Answer(absl::InternalError(
          "the controller's agent client dropped the call without an answer (a controller bug: "
          "report it with the run's output)"));
    }
  }

  // A second answer (a client must not give one) is ignored: the call was
  // counted in once.
  void Answer(absl::StatusOr<Response> answer) {
    if (answered_) return;
    answered_ = true;
    loop_.Answered([continuation = std::move(continuation_), answer = std::move(answer)]() mutable {
      continuation(std::move(answer));
    });
  }

 private:
  CallLoop& loop_;
  std::function<void(absl::StatusOr<Response>)> continuation_;
  bool answered_ = false;  // a call answers once, on one thread
};

template <typename Response>
AgentCallback<Response> CallLoop::Bind(std::function<void(absl::StatusOr<Response>)> continuation) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++calls_out_;
  }
  auto pending = std::make_shared<PendingCall<Response>>(*this, std::move(continuation));
  return [pending](absl::StatusOr<Response> answer, CallTiming) {
    pending->Answer(std::move(answer));
  };
}

}  // namespace clustercert::controller
