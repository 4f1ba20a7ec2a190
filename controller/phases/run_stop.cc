#include "controller/phases/run_stop.h"

#include <utility>
#include <vector>

namespace clustercert::controller {

void RunStop::EnterPhase(const std::string& phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
}

bool RunStop::Request(const std::string& signal, absl::Time at) {
  std::vector<std::function<void()>> listeners;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (request_) return false;
    request_ = StopRequest{signal, at, phase_};
    for (auto& [id, listener] : listeners_) listeners.push_back(listener);
  }
  // Outside the lock: a listener may ask requested() or remove itself.
  for (auto& listener : listeners) listener();
  return true;
}

bool RunStop::requested() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return request_.has_value();
}

std::optional<StopRequest> RunStop::request() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return request_;
}

int RunStop::AddListener(std::function<void()> listener) {
  bool already = false;
  int id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    id = next_id_++;
    already = request_.has_value();
    if (!already) listeners_[id] = std::move(listener);
  }
  if (already) listener();
  return id;
}

void RunStop::RemoveListener(int id) {
  std::lock_guard<std::mutex> lock(mutex_);
  listeners_.erase(id);
}

}  // namespace clustercert::controller
