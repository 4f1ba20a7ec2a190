#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/client/agent_client.h"
#include "controller/client/node_health.h"
#include "controller/phases/run_stop.h"

namespace clustercert::controller {

// One node's AgentClient as the phases use it during a run: every call goes
// through the run's NodeHealth and RunStop, so neither the phases nor their
// call sites need to know about either.
//
// - A node that stopped answering in this phase is not called again: the
//   call is answered at once with NodeHealth's sentence, and the node's
//   other calls in flight end with it.
// - Once the run is asked to stop, no new work is started: calls in flight
//   are answered at once (CANCELLED), except PrepareEndpoint and
//   StartCollective, which are left to answer so that their caller learns
//   what to release; CloseEndpoint and StopCollective are still made, with
//   their deadline cut to kCleanupDeadline, so the agents free the devices
//   instead of holding them until the lease runs out.
class GuardedAgentClient final : public AgentClient {
 public:
  static constexpr absl::Duration kCleanupDeadline = absl::Seconds(2);

  // `inner` must outlive this client; `stop` may be null (nothing stops
  // the run but its end).
  GuardedAgentClient(AgentClient& inner, std::string node, std::shared_ptr<NodeHealth> health,
                     RunStop* stop);
  ~GuardedAgentClient() override;
  GuardedAgentClient(const GuardedAgentClient&) = delete;
  GuardedAgentClient& operator=(const GuardedAgentClient&) = delete;

  void GetVersion(absl::Duration timeout, AgentCallback<v1::GetVersionResponse> done) override;
  CLUSTERCERT_AGENT_REQUEST_RPCS(CLUSTERCERT_AGENT_RPC_OVERRIDE)

  // What a call is to the guard.
  enum class CallKind {
    kWork,     // answered at once when the run stops
    kCreates,  // leases something on the agent: left to answer
    kCleanup,  // releases it: still made after the stop, briefly
  };

  // The calls in flight, shared with their callbacks (which may outlive
  // this client when an answer comes after the guard gave one).
  struct InFlight {
    std::mutex mutex;
    uint64_t next_id = 0;
    struct Entry {
      CallKind kind;
      const char* call;  // "RunEndpoint"
      std::function<void(const absl::Status&)> answer;
    };
    std::map<uint64_t, Entry> calls;

    // Answers every call in flight that `matches` with `status_for(call)`.
    void End(const std::function<bool(CallKind)>& matches,
             const std::function<absl::Status(const char* call)>& status_for);
  };

 private:
  template <typename Response, typename Invoke>
  void Guard(const char* call, CallKind kind, absl::Duration timeout, AgentCallback<Response> done,
             Invoke invoke);

  AgentClient& inner_;
  std::string node_;
  std::shared_ptr<NodeHealth> health_;
  RunStop* stop_;
  std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
  int listener_ = -1;
};

}  // namespace clustercert::controller
