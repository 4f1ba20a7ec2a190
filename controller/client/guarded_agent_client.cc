#include "controller/client/guarded_agent_client.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace clustercert::controller {
namespace {

using CallKind = GuardedAgentClient::CallKind;

// One call's answer, given once: by the agent, or earlier by the guard.
template <typename Response>
struct OneAnswer {
  explicit OneAnswer(AgentCallback<Response> done) : done(std::move(done)) {}
  bool Give(absl::StatusOr<Response> answer, CallTiming timing) {
    if (given.exchange(true)) return false;
    done(std::move(answer), timing);
    return true;
  }
  std::atomic<bool> given{false};
  AgentCallback<Response> done;
};

std::string StoppedSentence(const RunStop& stop, const std::string& node, const char* call,
                            bool in_flight) {
  const std::optional<StopRequest> request = stop.request();
  const std::string signal = request ? request->signal : "a signal";
  return in_flight
             ? absl::StrCat("the run was interrupted by ", signal, " before ", node, " answered ",
                            call)
             : absl::StrCat(call, " to ", node, " not made: the run was interrupted by ", signal);
}

}  // namespace

void GuardedAgentClient::InFlight::End(
    const std::function<bool(CallKind)>& matches,
    const std::function<absl::Status(const char* call)>& status_for) {
  std::vector<Entry> ended;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = calls.begin(); it != calls.end();) {
      if (matches(it->second.kind)) {
        ended.push_back(std::move(it->second));
        it = calls.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Outside the lock: an answer may start the caller's next call.
  for (Entry& entry : ended) entry.answer(status_for(entry.call));
}

GuardedAgentClient::GuardedAgentClient(AgentClient& inner, std::string node,
                                       std::shared_ptr<NodeHealth> health, RunStop* stop)
    : inner_(inner), node_(std::move(node)), health_(std::move(health)), stop_(stop) {
  if (stop_ == nullptr) return;
  // Captures only shared state: the listener may run after this client is gone.
  listener_ = stop_->AddListener([in_flight = in_flight_, stop = stop_, node = node_] {
    in_flight->End([](CallKind kind) { return kind == CallKind::kWork; },
                   [stop, &node](const char* call) {
                     return absl::CancelledError(StoppedSentence(*stop, node, call, true));
                   });
  });
}

GuardedAgentClient::~GuardedAgentClient() {
  if (stop_ != nullptr) stop_->RemoveListener(listener_);
}

template <typename Response, typename Invoke>
void GuardedAgentClient::Guard(const char* call, CallKind kind, absl::Duration timeout,
                               AgentCallback<Response> done, Invoke invoke) {
  auto answer = std::make_shared<OneAnswer<Response>>(std::move(done));
  const absl::Time now = absl::Now();
  if (stop_ != nullptr && stop_->requested()) {
    if (kind != CallKind::kCleanup) {
      answer->Give(absl::CancelledError(StoppedSentence(*stop_, node_, call, false)), {now, now});
      return;
    }
    timeout = std::min(timeout, kCleanupDeadline);
  }
  if (absl::Status refused = health_->Admit(node_, call); !refused.ok()) {
    answer->Give(std::move(refused), {now, now});
    return;
  }
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(in_flight_->mutex);
    id = in_flight_->next_id++;
    in_flight_->calls[id] = {kind, call, [answer, now](const absl::Status& status) {
                               answer->Give(status, {now, absl::Now()});
                             }};
  }
  if (stop_ != nullptr && kind == CallKind::kWork && stop_->requested()) {
    // The stop came between the check above and the registration.
    in_flight_->End([](CallKind k) { return k == CallKind::kWork; },
                    [this](const char* ended) {
                      return absl::CancelledError(StoppedSentence(*stop_, node_, ended, false));
                    });
    return;
  }
  invoke(timeout, [answer, id, call, timeout, in_flight = in_flight_, health = health_,
                   node = node_](absl::StatusOr<Response> result, CallTiming timing) {
    {
      std::lock_guard<std::mutex> lock(in_flight->mutex);
      in_flight->calls.erase(id);
    }
    if (answer->given) return;  // the guard answered already
    bool new_stall = false;
    if (!result.ok()) {
      absl::Status judged = health->Judge(node, call, timeout, result.status(), &new_stall);
      result = std::move(judged);
    }
    const absl::Status status = result.ok() ? absl::OkStatus() : result.status();
    answer->Give(std::move(result), timing);
    if (new_stall) {
      // The node's other calls in flight would each wait out their own deadline.
      in_flight->End([](CallKind) { return true; }, [&status](const char*) { return status; });
    }
  });
}

void GuardedAgentClient::GetVersion(absl::Duration timeout,
                                    AgentCallback<v1::GetVersionResponse> done) {
  Guard<v1::GetVersionResponse>("GetVersion", CallKind::kWork, timeout, std::move(done),
                                [&](absl::Duration t, auto cb) { inner_.GetVersion(t, cb); });
}

// Each RPC's method is the same adapter onto Guard, with its CallKind.
#define CLUSTERCERT_GUARDED_RPC(Name, Kind)                                                     \
  void GuardedAgentClient::Name(const v1::Name##Request& request, absl::Duration timeout,       \
                                AgentCallback<v1::Name##Response> done) {                       \
    Guard<v1::Name##Response>(#Name, CallKind::Kind, timeout, std::move(done),                  \
                              [&](absl::Duration t, auto cb) { inner_.Name(request, t, cb); }); \
  }

CLUSTERCERT_GUARDED_RPC(GetInventory, kWork)
CLUSTERCERT_GUARDED_RPC(PrepareEndpoint, kCreates)
CLUSTERCERT_GUARDED_RPC(ConnectEndpoint, kWork)
CLUSTERCERT_GUARDED_RPC(RunEndpoint, kWork)
CLUSTERCERT_GUARDED_RPC(CloseEndpoint, kCleanup)
CLUSTERCERT_GUARDED_RPC(GetEndpointProgress, kWork)
CLUSTERCERT_GUARDED_RPC(ReadPortCounters, kWork)
CLUSTERCERT_GUARDED_RPC(StartCollective, kCreates)
CLUSTERCERT_GUARDED_RPC(PollCollective, kWork)
CLUSTERCERT_GUARDED_RPC(StopCollective, kCleanup)
CLUSTERCERT_GUARDED_RPC(ExchangeTime, kWork)
CLUSTERCERT_GUARDED_RPC(RunUplinkFlows, kWork)

#undef CLUSTERCERT_GUARDED_RPC

}  // namespace clustercert::controller
