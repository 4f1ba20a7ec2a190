#include "controller/client/node_health.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/client/agent_client.h"

namespace clustercert::controller {
namespace {

std::string Clock(absl::Time at) {
  return absl::FormatTime("%H:%M:%S UTC", at, absl::UTCTimeZone());
}

std::string Fix(const std::string& node) {
  return absl::StrCat("check that node-agent is running on ", node,
                      " and not stopped (systemctl status clustercert-agent; state T in ps means "
                      "it was stopped: kill -CONT it)");
}

std::string Silence(const Stall& stall) {
  return absl::StrCat(stall.node, " stopped answering at ", Clock(stall.at), " (", stall.call,
                      " deadline ", absl::FormatDuration(stall.deadline), ")");
}

// Silence counts when the agent never answered, except a short poll's
// deadline passing (see kShortestJudgedDeadline); a channel that is down
// counts whatever the deadline.
bool SilenceCounts(const absl::Status& status, absl::Duration deadline) {
  if (!IsNoAnswer(status)) return false;
  return !absl::IsDeadlineExceeded(status) || deadline >= NodeHealth::kShortestJudgedDeadline;
}

}  // namespace

NodeHealth::NodeHealth(std::function<absl::Time()> now) : now_(std::move(now)) {}

void NodeHealth::BeginPhase(const std::string& phase, bool judges) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
  judges_ = judges;
  stalls_.clear();
  order_.clear();
}

std::string NodeHealth::RefusalLocked(const Stall& stall) const {
  return absl::StrCat(Silence(stall), " and is not asked again in the ", phase_,
                      " phase: ", Fix(stall.node));
}

absl::Status NodeHealth::Admit(const std::string& node, absl::string_view) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stalls_.find(node);
  if (it == stalls_.end()) return absl::OkStatus();
  ++it->second.calls_not_made;
  // A call not made is as unanswered as the silence it stands for.
  return MarkNoAnswer(absl::UnavailableError(RefusalLocked(it->second)));
}

absl::Status NodeHealth::Judge(const std::string& node, absl::string_view call,
                               absl::Duration deadline, const absl::Status& status,
                               bool* new_stall) {
  *new_stall = false;
  if (!SilenceCounts(status, deadline)) return status;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!judges_) return status;
  if (auto it = stalls_.find(node); it != stalls_.end()) {
    // Calls already in flight when the node stopped end here too.
    return MarkNoAnswer(absl::UnavailableError(RefusalLocked(it->second)));
  }
  Stall stall{node, std::string(call), deadline, now_(), std::string(status.message()), 0};
  *new_stall = true;
  order_.push_back(node);
  auto& kept = stalls_[node] = std::move(stall);
  return MarkNoAnswer(
      absl::Status(status.code(), absl::StrCat(Silence(kept), "; its later calls in the ", phase_,
                                               " phase are not made: ", Fix(node))));
}

bool NodeHealth::Stalled(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stalls_.count(node) > 0;
}

std::vector<Stall> NodeHealth::Stalls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Stall> stalls;
  for (const std::string& node : order_) stalls.push_back(stalls_.at(node));
  return stalls;
}

std::string NodeHealth::Summary(const Stall& stall, const std::string& phase) {
  return absl::StrCat(Silence(stall), "; its remaining ", stall.calls_not_made, " call(s) in the ",
                      phase, " phase were not made: ", Fix(stall.node));
}

}  // namespace clustercert::controller
