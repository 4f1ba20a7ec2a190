#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/client/agent_client.h"

namespace clustercert::controller::testing {

// The base of the controller tests' fake node-agents: every RPC answers
// through Respond(), which asks OnCall() how. By default a call answers OK at
// once with an empty response; a fake overrides OnCall() to see, fail or
// silence every call by name, Holds() to keep a call's OK answer in `held`
// until the test runs it, and the RPCs its test is about to shape their
// responses. The uplink calls keep AgentClient's Unimplemented.
class FakeAgentClient : public AgentClient {
 public:
  void GetVersion(absl::Duration t, AgentCallback<v1::GetVersionResponse> done) override {
    Respond("GetVersion", t, std::move(done));
  }
  void GetInventory(const v1::GetInventoryRequest&, absl::Duration t,
                    AgentCallback<v1::GetInventoryResponse> done) override {
    Respond("GetInventory", t, std::move(done));
  }
  void PrepareEndpoint(const v1::PrepareEndpointRequest&, absl::Duration t,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    Respond("PrepareEndpoint", t, std::move(done));
  }
  void ConnectEndpoint(const v1::ConnectEndpointRequest&, absl::Duration t,
                       AgentCallback<v1::ConnectEndpointResponse> done) override {
    Respond("ConnectEndpoint", t, std::move(done));
  }
  void RunEndpoint(const v1::RunEndpointRequest&, absl::Duration t,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    Respond("RunEndpoint", t, std::move(done));
  }
  void CloseEndpoint(const v1::CloseEndpointRequest&, absl::Duration t,
                     AgentCallback<v1::CloseEndpointResponse> done) override {
    Respond("CloseEndpoint", t, std::move(done));
  }
  void GetEndpointProgress(const v1::GetEndpointProgressRequest&, absl::Duration t,
                           AgentCallback<v1::GetEndpointProgressResponse> done) override {
    Respond("GetEndpointProgress", t, std::move(done));
  }
  void ReadPortCounters(const v1::ReadPortCountersRequest&, absl::Duration t,
                        AgentCallback<v1::ReadPortCountersResponse> done) override {
    Respond("ReadPortCounters", t, std::move(done));
  }
  void StartCollective(const v1::StartCollectiveRequest&, absl::Duration t,
                       AgentCallback<v1::StartCollectiveResponse> done) override {
    Respond("StartCollective", t, std::move(done));
  }
  void PollCollective(const v1::PollCollectiveRequest&, absl::Duration t,
                      AgentCallback<v1::PollCollectiveResponse> done) override {
    Respond("PollCollective", t, std::move(done));
  }
  void StopCollective(const v1::StopCollectiveRequest&, absl::Duration t,
                      AgentCallback<v1::StopCollectiveResponse> done) override {
    Respond("StopCollective", t, std::move(done));
  }

  // Answers of held calls, in call order: each answers OK when run.
  std::vector<std::function<void()>> held;

 protected:
  // Whether the call named `call`, let through by OnCall(), answers later
  // (from `held`) rather than at once.
  virtual bool Holds(const std::string& call) { return false; }

  // How the call named `call` ("RunEndpoint") answers: OK for an empty
  // response, or the status to answer with instead.
  virtual absl::Status OnCall(const std::string& call, absl::Duration timeout) {
    return absl::OkStatus();
  }

  // For an override that shapes its own response: asks OnCall(), and when it
  // refuses the call answers with its status and returns true.
  template <typename Response>
  bool Refused(const std::string& call, absl::Duration timeout, AgentCallback<Response>& done) {
    absl::Status status = OnCall(call, timeout);
    if (status.ok()) return false;
    done(std::move(status), {});
    return true;
  }

  // Asks OnCall(), then answers with its status or an empty response.
  template <typename Response>
  void Respond(const std::string& call, absl::Duration timeout, AgentCallback<Response> done) {
    if (Refused(call, timeout, done)) return;
    if (Holds(call)) {
      held.push_back([done] { done(Response(), {}); });
      return;
    }
    done(Response(), {});
  }
};

}  // namespace clustercert::controller::testing
