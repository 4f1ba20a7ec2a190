#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace clustercert::controller {

// Why and when a run was asked to stop, and in which phase.
struct StopRequest {
  std::string signal;  // "SIGINT", "SIGTERM"
  absl::Time at;
  std::string phase;  // the phase under way when it came
};

// The run's cancellation token. The signal watcher requests the stop; the
// phases check requested() between steps and start nothing new; the agent
// clients' guards answer the calls in flight at once (listeners), so no
// phase sits out a 40 s deadline after Ctrl-C. Thread-safe.
class RunStop {
 public:
  // Notes the phase under way, for the certificate's `interrupted.phase`.
  void EnterPhase(const std::string& phase);

  // Asks the run to stop; only the first request counts (returns false for
  // the others). Runs the listeners on the caller's thread.
  bool Request(const std::string& signal, absl::Time at);

  bool requested() const;
  std::optional<StopRequest> request() const;

  // `listener` runs once when the stop is requested (at once if it already
  // was); RemoveListener before whatever it touches goes away.
  int AddListener(std::function<void()> listener);
  void RemoveListener(int id);

 private:
  mutable std::mutex mutex_;
  std::string phase_ = "connect";  // a run is connecting from its first moment
  std::optional<StopRequest> request_;
  std::map<int, std::function<void()>> listeners_;
  int next_id_ = 0;
};

}  // namespace clustercert::controller
