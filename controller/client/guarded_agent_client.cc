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

void GuardedAgentClient::GetInventory(const v1::GetInventoryRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::GetInventoryResponse> done) {
  Guard<v1::GetInventoryResponse>(
      "GetInventory", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.GetInventory(request, t, cb); });
}

void GuardedAgentClient::PrepareEndpoint(const v1::PrepareEndpointRequest& request,
                                         absl::Duration timeout,
                                         AgentCallback<v1::PrepareEndpointResponse> done) {
  Guard<v1::PrepareEndpointResponse>(
      "PrepareEndpoint", CallKind::kCreates, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.PrepareEndpoint(request, t, cb); });
}

void GuardedAgentClient::ConnectEndpoint(const v1::ConnectEndpointRequest& request,
                                         absl::Duration timeout,
                                         AgentCallback<v1::ConnectEndpointResponse> done) {
  Guard<v1::ConnectEndpointResponse>(
      "ConnectEndpoint", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.ConnectEndpoint(request, t, cb); });
}

void GuardedAgentClient::RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration timeout,
                                     AgentCallback<v1::RunEndpointResponse> done) {
  Guard<v1::RunEndpointResponse>(
      "RunEndpoint", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.RunEndpoint(request, t, cb); });
}

void GuardedAgentClient::CloseEndpoint(const v1::CloseEndpointRequest& request,
                                       absl::Duration timeout,
                                       AgentCallback<v1::CloseEndpointResponse> done) {
  Guard<v1::CloseEndpointResponse>(
      "CloseEndpoint", CallKind::kCleanup, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.CloseEndpoint(request, t, cb); });
}

void GuardedAgentClient::GetEndpointProgress(const v1::GetEndpointProgressRequest& request,
                                             absl::Duration timeout,
                                             AgentCallback<v1::GetEndpointProgressResponse> done) {
  Guard<v1::GetEndpointProgressResponse>(
      "GetEndpointProgress", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.GetEndpointProgress(request, t, cb); });
}

void GuardedAgentClient::ReadPortCounters(const v1::ReadPortCountersRequest& request,
                                          absl::Duration timeout,
                                          AgentCallback<v1::ReadPortCountersResponse> done) {
  Guard<v1::ReadPortCountersResponse>(
      "ReadPortCounters", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.ReadPortCounters(request, t, cb); });
}

void GuardedAgentClient::StartCollective(const v1::StartCollectiveRequest& request,
                                         absl::Duration timeout,
                                         AgentCallback<v1::StartCollectiveResponse> done) {
  Guard<v1::StartCollectiveResponse>(
      "StartCollective", CallKind::kCreates, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.StartCollective(request, t, cb); });
}

void GuardedAgentClient::PollCollective(const v1::PollCollectiveRequest& request,
                                        absl::Duration timeout,
                                        AgentCallback<v1::PollCollectiveResponse> done) {
  Guard<v1::PollCollectiveResponse>(
      "PollCollective", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.PollCollective(request, t, cb); });
}

void GuardedAgentClient::StopCollective(const v1::StopCollectiveRequest& request,
                                        absl::Duration timeout,
                                        AgentCallback<v1::StopCollectiveResponse> done) {
  Guard<v1::StopCollectiveResponse>(
      "StopCollective", CallKind::kCleanup, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.StopCollective(request, t, cb); });
}

void GuardedAgentClient::ExchangeTime(const v1::ExchangeTimeRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::ExchangeTimeResponse> done) {
  Guard<v1::ExchangeTimeResponse>(
      "ExchangeTime", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.ExchangeTime(request, t, cb); });
}

void GuardedAgentClient::RunUplinkFlows(const v1::RunUplinkFlowsRequest& request,
                                        absl::Duration timeout,
                                        AgentCallback<v1::RunUplinkFlowsResponse> done) {
  Guard<v1::RunUplinkFlowsResponse>(
      "RunUplinkFlows", CallKind::kWork, timeout, std::move(done),
      [&](absl::Duration t, auto cb) { inner_.RunUplinkFlows(request, t, cb); });
}

}  // namespace clustercert::controller
