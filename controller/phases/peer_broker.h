#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "clustercert/v1/peer.pb.h"
#include "controller/client/agent_client.h"
#include "controller/phases/call_loop.h"

namespace clustercert::controller {

// What the agents hold an endpoint for without a call from this controller.
// Short, so that a controller killed between calls frees the devices it held
// within seconds; safe, because no silence of a live controller is that long:
// a call in flight holds the lease to its own deadline (agent side), and
// while a test waits on one end the other is touched once a second (the
// keep-alive). A killed controller's runs end sooner still: their calls are
// cancelled when its connection closes, and the agent closes the endpoint.
inline constexpr uint32_t kEndpointLeaseSeconds = 10;
inline constexpr absl::Duration kEndpointLease = absl::Seconds(kEndpointLeaseSeconds);

// One end of a brokered peer test: the agent, its name for messages, the
// spec it is prepared with, and its share group (PrepareEndpointRequest:
// the receiving ends of one incast round share their device; empty, one
// test at a time per device). The group's initializer keeps the callers
// that brace-initialise the first three members free of
// -Wmissing-field-initializers.
struct BrokeredSide {
  AgentClient* client = nullptr;
  std::string name;
  v1::PeerTestSpec spec;
  std::string share_group = {};
};

// How long each step of a brokered test may take. `call` is the plan's
// agents.call_timeout_s: what a management round trip may cost on a loaded
// network (a 768-node ring missed fixed 10 s deadlines). The data-plane
// steps get it on top of their own wait, so an agent's answer about its data
// plane always arrives before the controller stops listening.
struct BrokerDeadlines {
  absl::Duration call = absl::Seconds(30);
  // How long an end waits for its peer's data-plane connection: a healthy
  // fabric connects in milliseconds, a dead one is declared after this.
  absl::Duration data_connect = absl::Seconds(10);
  absl::Duration run;  // the test's own bound (duration plus its slack)
  // How long a busy device is waited for, its prepare asked again at each
  // keep-alive tick; zero: a busy prepare fails the test at once (not
  // measured). A resumed run waits one lease: what the killed controller
  // left prepared frees itself within it.
  absl::Duration busy_wait = absl::ZeroDuration();
};

// What a brokered test returned; `error` is empty when both ends ran.
struct BrokeredRun {
  std::string error;  // "node2 connect: ...", both ends' failures joined
  // The failure is the control plane's, not the fabric's: a call went
  // unanswered (IsNoAnswer) or an agent refused a prepare as busy.
  bool control_plane = false;
  v1::PeerTestResult client_result;
  v1::PeerTestResult server_result;
  bool has_client_result = false;
  bool has_server_result = false;
  // The path MTU each end measured while it connected (mtu.path), kept for
  // a run that then fails and so returns no result; unset where that end's
  // connect did not succeed.
  std::optional<v1::PathMtu> client_path_mtu;
  std::optional<v1::PathMtu> server_path_mtu;
};

// What the broker tells its caller along the way, on the loop's thread:
// both ends' runs have started (with the endpoint ids, for live progress
// polling), the runs have answered (stop polling), the test is over.
struct BrokerEvents {
  std::function<void(const std::string& client_endpoint, const std::string& server_endpoint)>
      running;
  std::function<void()> runs_answered;
  std::function<void(BrokeredRun)> finished;  // required
};

// The controller's side of a peer test (node_agent.proto): prepare the
// server end then the client end, connect each to the other's EndpointInfo,
// run both at once (each bounded by `deadlines.run`; when one end fails first,
// the other is closed at once, which stops its run), close both whatever
// happened, then `finished`. Agents never talk to each other except over
// the data plane the test measures. Every call carries a deadline, so a dead
// data plane ends in a connect or run error rather than a hang. A prepare
// left unanswered is followed by a close by `test_id`, so an endpoint the
// agent made after all does not hold its device until its lease runs out.
// Starts the first call now and continues on `loop`, which must outlive the
// test. Returns the test's keep-alive, to be called on the loop's thread
// once a second while it runs (a no-op once it is over): it renews the short
// lease of each end that waits on the other end's step.
std::function<void()> StartBrokeredTest(CallLoop& loop, const BrokeredSide& server,
                                        const BrokeredSide& client, const std::string& test_id,
                                        const BrokerDeadlines& deadlines, BrokerEvents events);

// The same test, waited for on the calling thread (one test at a time).
BrokeredRun RunBrokeredTest(const BrokeredSide& server, const BrokeredSide& client,
                            const std::string& test_id, const BrokerDeadlines& deadlines);

}  // namespace clustercert::controller
