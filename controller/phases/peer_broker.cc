#include "controller/phases/peer_broker.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/grpc_status.h"

namespace clustercert::controller {
namespace {

// A keep-alive that is not answered in this long is simply sent again.
constexpr absl::Duration kKeepAliveTimeout = absl::Seconds(1);

std::string Named(const BrokeredSide& side, const char* step, const absl::Status& status) {
  return absl::StrCat(side.name, " ", step, ": ", status.message());
}

// A failure that says nothing of the fabric: the agent never answered,
// refused the prepare because its device is held by another test, or no
// longer holds the endpoint a connect or run names (NOT_FOUND: its lease ran
// out because the keep-alives did not get through, or it was closed). Seen
// at 1,024 loopback agents on two cores, where it was judged a fabric fault
// with an MTU remedy.
bool ControlPlaneFailure(const char* step, const absl::Status& status) {
  if (IsNoAnswer(status)) return true;
  const absl::string_view name = step;
  if (name == "prepare") return absl::IsResourceExhausted(status);
  return (name == "connect" || name == "run") && absl::IsNotFound(status);
}

// An agent's path MTU as the certificate keeps it: its text fields bounded
// (the agent is another host; its answer is not trusted to be short).
v1::PathMtu BoundedPathMtu(v1::PathMtu mtu) {
  constexpr size_t kMaxNoteBytes = 512;
  mtu.set_peer_address(ClipValue(mtu.peer_address()));
  mtu.set_note(TruncateMessage(mtu.note(), kMaxNoteBytes));
  return mtu;
}

// One test's state machine; every method runs on the loop's thread. Each
// step's continuation holds the test alive (shared_from_this) until its
// answer has been handled.
class BrokeredTest : public std::enable_shared_from_this<BrokeredTest> {
 public:
  BrokeredTest(CallLoop& loop, BrokeredSide server, BrokeredSide client, std::string test_id,
               BrokerDeadlines deadlines, BrokerEvents events)
      : loop_(loop),
        ends_{End(std::move(server)), End(std::move(client))},
        test_id_(std::move(test_id)),
        deadlines_(deadlines),
        events_(std::move(events)),
        busy_ticks_(absl::ToInt64Seconds(deadlines.busy_wait)) {}

  void Start() { Prepare(kServer); }

  // The caller's tick, once a second: asks a busy prepare again (within
  // BrokerDeadlines::busy_wait), and renews the lease of each end the test
  // holds but is not calling now (it waits on the other end's prepare,
  // connect or run): a progress read touches it.
  void KeepAlive() {
    if (waiting_) {
      // The last reference but the caller's may be this one: held to the end.
      const std::shared_ptr<BrokeredTest> self = std::exchange(waiting_, nullptr);
      Prepare(busy_role_);
    }
    for (Role role : {kServer, kClient}) {
      End& end = ends_[role];
      if (!end.open || end.calling || end.touching) continue;
      end.touching = true;
      v1::GetEndpointProgressRequest request;
      request.set_endpoint_id(end.endpoint);
      end.side.client->GetEndpointProgress(
          request, kKeepAliveTimeout,
          loop_.Bind<v1::GetEndpointProgressResponse>(
              [self = shared_from_this(),
               role](const absl::StatusOr<v1::GetEndpointProgressResponse>&) {
                self->ends_[role].touching = false;
              }));
    }
  }

 private:
  enum Role { kServer = 0, kClient = 1 };
  struct End {
    explicit End(BrokeredSide end) : side(std::move(end)) {}
    BrokeredSide side;
    std::string endpoint;  // set once prepared
    v1::EndpointInfo info;
    bool open = false;      // prepared and its close not yet sent
    bool calling = false;   // its connect or run is out (the agent holds its lease then)
    bool touching = false;  // a keep-alive is out
    std::optional<absl::StatusOr<v1::RunEndpointResponse>> run;
  };

  static Role Other(Role role) { return role == kServer ? kClient : kServer; }

  // Prepare the server, then the client: a client endpoint never exists
  // without the server it would connect to.
  void Prepare(Role role) {
    v1::PrepareEndpointRequest request;
    *request.mutable_spec() = ends_[role].side.spec;
    request.set_test_id(test_id_);
    request.set_lease_s(kEndpointLeaseSeconds);
    request.set_share_group(ends_[role].side.share_group);
    ends_[role].side.client->PrepareEndpoint(
        request, deadlines_.call,
        loop_.Bind<v1::PrepareEndpointResponse>(
            [self = shared_from_this(), role](absl::StatusOr<v1::PrepareEndpointResponse> answer) {
              self->Prepared(role, std::move(answer));
            }));
  }

  void Prepared(Role role, absl::StatusOr<v1::PrepareEndpointResponse> answer) {
    End& end = ends_[role];
    if (absl::IsResourceExhausted(answer.status()) && busy_ticks_ > 0) {
      // Asked again at the next tick: a dead controller's endpoint frees
      // its device within one lease.
      --busy_ticks_;
      waiting_ = shared_from_this();  // no call is out to hold the test meanwhile
      busy_role_ = role;
      return;
    }
    if (!answer.ok()) {
      if (IsNoAnswer(answer.status())) CloseByTestId(role);
      return Fail(Named(end.side, "prepare", answer.status()),
                  ControlPlaneFailure("prepare", answer.status()));
    }
    end.endpoint = answer->endpoint_id();
    end.info = answer->info();
    end.open = true;
    if (role == kServer) return Prepare(kClient);
    Connect(kServer);
  }

  // Connect the server to the client's info, then the client to the server's.
  void Connect(Role role) {
    ends_[role].calling = true;
    v1::ConnectEndpointRequest request;
    request.set_endpoint_id(ends_[role].endpoint);
    *request.mutable_peer() = ends_[Other(role)].info;
    request.set_timeout_ms(
        static_cast<uint32_t>(absl::ToInt64Milliseconds(deadlines_.data_connect)));
    ends_[role].side.client->ConnectEndpoint(
        request, deadlines_.data_connect + deadlines_.call,
        loop_.Bind<v1::ConnectEndpointResponse>(
            [self = shared_from_this(),
             role](const absl::StatusOr<v1::ConnectEndpointResponse>& answer) {
              self->Connected(role, answer);
            }));
  }

  void Connected(Role role, const absl::StatusOr<v1::ConnectEndpointResponse>& answer) {
    ends_[role].calling = false;
    const absl::Status& status = answer.status();
    if (status.ok() && answer->has_path_mtu()) {
      (role == kClient ? result_.client_path_mtu : result_.server_path_mtu) =
          BoundedPathMtu(answer->path_mtu());
    }
    if (!status.ok()) {
      return Fail(Named(ends_[role].side, "connect", status),
                  ControlPlaneFailure("connect", status));
    }
    if (role == kServer) return Connect(kClient);
    Run(kServer);
    Run(kClient);
    if (events_.running) events_.running(ends_[kClient].endpoint, ends_[kServer].endpoint);
  }

  void Run(Role role) {
    ends_[role].calling = true;
    v1::RunEndpointRequest request;
    request.set_endpoint_id(ends_[role].endpoint);
    request.set_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(deadlines_.run)));
    ends_[role].side.client->RunEndpoint(
        request, deadlines_.run + deadlines_.call,
        loop_.Bind<v1::RunEndpointResponse>(
            [self = shared_from_this(), role](absl::StatusOr<v1::RunEndpointResponse> answer) {
              self->RunAnswered(role, std::move(answer));
            }));
  }

  // When one end fails first, the other is closed at once, which makes its
  // agent cancel the run: an RC QP that went to error on one side leaves the
  // other polling for a message that never comes until its own deadline (a
  // lab cell under CPU load waited 70 s for "ping 584").
  void RunAnswered(Role role, absl::StatusOr<v1::RunEndpointResponse> answer) {
    const bool first = !ends_[Other(role)].run.has_value();
    const bool failed = !answer.ok();
    ends_[role].calling = false;
    ends_[role].run = std::move(answer);
    if (first) {
      if (failed) Close(Other(role));
      return;
    }
    if (events_.runs_answered) events_.runs_answered();
    Collect();
    CloseAndFinish();
  }

  // Both ends' failures: the one that saw the peer vanish and the vanished
  // one itself ("node4 run: ... Socket closed").
  void Collect() {
    std::vector<std::string> failures;
    for (Role role : {kClient, kServer}) {
      const absl::StatusOr<v1::RunEndpointResponse>& run = *ends_[role].run;
      if (!run.ok()) {
        failures.push_back(Named(ends_[role].side, "run", run.status()));
        // The end that never answered explains the other's failure ("peer
        // closed the connection" once its agent was gone).
        result_.control_plane = result_.control_plane || ControlPlaneFailure("run", run.status());
        continue;
      }
      if (role == kClient) {
        result_.client_result = run->result();
        result_.has_client_result = true;
      } else {
        result_.server_result = run->result();
        result_.has_server_result = true;
      }
    }
    result_.error = absl::StrJoin(failures, "; ");
  }

  void Fail(std::string error, bool control_plane) {
    result_.error = std::move(error);
    result_.control_plane = control_plane;
    CloseAndFinish();
  }

  // The agent may have made the endpoint after all, its answer lost: close
  // whatever it holds for this test (best effort; the lease is the backstop).
  void CloseByTestId(Role role) {
    ++closes_out_;
    v1::CloseEndpointRequest request;
    request.set_test_id(test_id_);
    ends_[role].side.client->CloseEndpoint(
        request, deadlines_.call,
        loop_.Bind<v1::CloseEndpointResponse>(
            [self = shared_from_this()](const absl::StatusOr<v1::CloseEndpointResponse>&) {
              --self->closes_out_;
              self->FinishWhenClosed();
            }));
  }

  void CloseAndFinish() {
    closing_ = true;
    Close(kClient);
    Close(kServer);
    FinishWhenClosed();
  }

  void Close(Role role) {
    End& end = ends_[role];
    if (!end.open) return;
    end.open = false;
    ++closes_out_;
    v1::CloseEndpointRequest request;
    request.set_endpoint_id(end.endpoint);
    end.side.client->CloseEndpoint(
        request, deadlines_.call,
        loop_.Bind<v1::CloseEndpointResponse>(
            [self = shared_from_this()](const absl::StatusOr<v1::CloseEndpointResponse>&) {
              --self->closes_out_;
              self->FinishWhenClosed();
            }));
  }

  void FinishWhenClosed() {
    if (!closing_ || closes_out_ > 0 || finished_) return;
    finished_ = true;
    events_.finished(std::move(result_));
  }

  CallLoop& loop_;
  End ends_[2];
  const std::string test_id_;
  const BrokerDeadlines deadlines_;
  BrokerEvents events_;
  BrokeredRun result_;
  int closes_out_ = 0;
  bool closing_ = false;  // both runs answered, or a step failed
  int64_t busy_ticks_;    // busy prepares left to ask again (a tick apart)
  // Set while a busy prepare waits for the next tick (a cycle, broken by it).
  std::shared_ptr<BrokeredTest> waiting_;
  Role busy_role_ = kServer;  // the end whose prepare is asked again
  bool finished_ = false;
};

}  // namespace

std::function<void()> StartBrokeredTest(CallLoop& loop, const BrokeredSide& server,
                                        const BrokeredSide& client, const std::string& test_id,
                                        const BrokerDeadlines& deadlines, BrokerEvents events) {
  auto test =
      std::make_shared<BrokeredTest>(loop, server, client, test_id, deadlines, std::move(events));
  test->Start();
  // Weak: the test lives as long as its calls, not as long as the caller's tick.
  return [weak = std::weak_ptr<BrokeredTest>(test)] {
    if (auto held = weak.lock()) held->KeepAlive();
  };
}

BrokeredRun RunBrokeredTest(const BrokeredSide& server, const BrokeredSide& client,
                            const std::string& test_id, const BrokerDeadlines& deadlines) {
  CallLoop loop;
  std::optional<BrokeredRun> run;
  BrokerEvents events;
  events.finished = [&run](BrokeredRun finished) { run = std::move(finished); };
  const std::function<void()> keep_alive =
      StartBrokeredTest(loop, server, client, test_id, deadlines, std::move(events));
  loop.RunUntil([&run] { return run.has_value(); }, absl::Seconds(1), keep_alive);
  return std::move(*run);
}

}  // namespace clustercert::controller
