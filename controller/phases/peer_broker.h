#pragma once

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "clustercert/v1/peer.pb.h"
#include "common/completion.h"
#include "controller/client/agent_client.h"

namespace clustercert::controller {

// One end of a brokered peer test: the agent, its name for messages, and
// the spec it is prepared with.
struct BrokeredSide {
  AgentClient* client = nullptr;
  std::string name;
  v1::PeerTestSpec spec;
};

// What a brokered test returned; `error` is empty when both ends ran.
struct BrokeredRun {
  std::string error;  // "node2 connect: ...", both ends' failures joined
  v1::PeerTestResult client_result;
  v1::PeerTestResult server_result;
  bool has_client_result = false;
  bool has_server_result = false;
};

// Called while both ends run, on the caller's thread, with the endpoint ids;
// returns when `first_done` is notified, at the first end's answer (live
// progress polling).
using WhileRunning =
    std::function<void(const std::string& client_endpoint, const std::string& server_endpoint,
                       Completion& first_done)>;

// The controller's side of a peer test (node_agent.proto): prepare the
// server end then the client end, connect each to the other's EndpointInfo,
// run both at once (each bounded by `run_timeout`; when one end fails first,
// the other is closed at once, which stops its run), close both whatever
// happened. Agents never talk to each other except over the data plane the
// test measures. Every call carries a deadline, so a dead data plane ends
// in a connect or run error rather than a hang.
BrokeredRun RunBrokeredTest(const BrokeredSide& server, const BrokeredSide& client,
                            const std::string& test_id, absl::Duration run_timeout,
                            const WhileRunning& while_running = nullptr);

}  // namespace clustercert::controller
