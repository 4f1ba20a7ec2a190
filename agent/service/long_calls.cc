#include "agent/service/long_calls.h"

#include "absl/strings/str_cat.h"

namespace clustercert::agent {

LongCalls::LongCalls(size_t max_running) : max_running_(max_running) {}

LongCalls::~LongCalls() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& run : runs_) run.thread.join();
}

absl::Status LongCalls::Start(std::function<void()> run) {
  std::lock_guard<std::mutex> lock(mutex_);
  JoinFinishedLocked();
  if (runs_.size() >= max_running_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("node-agent already runs ", max_running_,
                     " long calls (RunEndpoint/RunUplinkFlows); wait for them to finish or raise "
                     "--max-long-calls"));
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  runs_.push_back({std::thread([run = std::move(run), done] {
                     run();
                     done->store(true);
                   }),
                   done});
  return absl::OkStatus();
}

size_t LongCalls::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t running = 0;
  for (const auto& run : runs_) running += run.done->load() ? 0 : 1;
  return running;
}

void LongCalls::JoinFinishedLocked() {
  // A long-lived agent keeps no dead threads, and a finished run frees its slot.
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = runs_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace clustercert::agent
