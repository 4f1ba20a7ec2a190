#include "controller/phases/peer_broker.h"

#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/phases/sync_call.h"

namespace clustercert::controller {
namespace {

constexpr uint32_t kLeaseSeconds = 60;
constexpr absl::Duration kCallSlack = absl::Seconds(10);

std::string Named(const BrokeredSide& side, const char* step, const absl::Status& status) {
  return absl::StrCat(side.name, " ", step, ": ", status.message());
}

absl::StatusOr<v1::PrepareEndpointResponse> Prepare(const BrokeredSide& side,
                                                    const std::string& test_id) {
  v1::PrepareEndpointRequest request;
  *request.mutable_spec() = side.spec;
  request.set_test_id(test_id);
  request.set_lease_s(kLeaseSeconds);
  return CallAndWait<v1::PrepareEndpointResponse>(
      [&](auto done) { side.client->PrepareEndpoint(request, kCallSlack, std::move(done)); });
}

void Close(const BrokeredSide& side, const std::string& id) {
  v1::CloseEndpointRequest request;
  request.set_endpoint_id(id);
  (void)CallAndWait<v1::CloseEndpointResponse>(
      [&](auto done) { side.client->CloseEndpoint(request, kCallSlack, std::move(done)); });
}

absl::StatusOr<v1::ConnectEndpointResponse> Connect(const BrokeredSide& side, const std::string& id,
                                                    const v1::EndpointInfo& peer) {
  v1::ConnectEndpointRequest request;
  request.set_endpoint_id(id);
  *request.mutable_peer() = peer;
  request.set_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(kCallSlack)));
  return CallAndWait<v1::ConnectEndpointResponse>([&](auto done) {
    side.client->ConnectEndpoint(request, kCallSlack + absl::Seconds(2), std::move(done));
  });
}

// Runs both ends at once; each answer arrives on a client thread. When one
// end fails first, the other end is closed at once, which makes its agent
// cancel the run: an RC QP that went to error on one side leaves the other
// polling for a message that never comes until its own deadline (a lab cell
// under CPU load waited 70 s for "ping 584"). Returns the end it closed
// early, or nullptr.
const BrokeredSide* RunBothEnds(const BrokeredSide& server, const std::string& server_id,
                                const BrokeredSide& client, const std::string& client_id,
                                absl::Duration run_timeout, const WhileRunning& while_running,
                                BrokeredRun& run) {
  absl::StatusOr<v1::RunEndpointResponse> client_run = absl::UnknownError("no answer");
  absl::StatusOr<v1::RunEndpointResponse> server_run = absl::UnknownError("no answer");
  Completion client_done, server_done, first_answer;
  std::mutex mutex;
  const BrokeredSide* first_failed = nullptr;  // guarded by mutex
  auto start = [&](const BrokeredSide& side, const std::string& id,
                   absl::StatusOr<v1::RunEndpointResponse>* out, Completion* done) {
    v1::RunEndpointRequest request;
    request.set_endpoint_id(id);
    request.set_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(run_timeout)));
    side.client->RunEndpoint(request, run_timeout + kCallSlack,
                             [&, out, done, side_ptr = &side](
                                 absl::StatusOr<v1::RunEndpointResponse> answer, CallTiming) {
                               {
                                 std::lock_guard<std::mutex> lock(mutex);
                                 if (!answer.ok() && first_failed == nullptr) {
                                   first_failed = side_ptr;
                                 }
                               }
                               *out = std::move(answer);
                               // done last: once both are notified, the
                               // waiter's locals go away.
                               first_answer.Notify();
                               done->Notify();
                             });
  };
  start(server, server_id, &server_run, &server_done);
  start(client, client_id, &client_run, &client_done);
  if (while_running) while_running(client_id, server_id, first_answer);
  first_answer.Wait();
  const BrokeredSide* failed = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    failed = first_failed;
  }
  const BrokeredSide* closed = nullptr;
  if (failed == &client) closed = &server;
  if (failed == &server) closed = &client;
  if (closed != nullptr) Close(*closed, closed == &server ? server_id : client_id);
  client_done.Wait();
  server_done.Wait();
  if (client_run.ok()) {
    run.client_result = client_run->result();
    run.has_client_result = true;
  }
  if (server_run.ok()) {
    run.server_result = server_run->result();
    run.has_server_result = true;
  }
  // Both ends' failures: the one that saw the peer vanish and the vanished
  // one itself ("node4 run: ... Socket closed").
  std::vector<std::string> failures;
  if (!client_run.ok()) failures.push_back(Named(client, "run", client_run.status()));
  if (!server_run.ok()) failures.push_back(Named(server, "run", server_run.status()));
  run.error = absl::StrJoin(failures, "; ");
  return closed;
}

}  // namespace

BrokeredRun RunBrokeredTest(const BrokeredSide& server, const BrokeredSide& client,
                            const std::string& test_id, absl::Duration run_timeout,
                            const WhileRunning& while_running) {
  BrokeredRun run;
  auto server_endpoint = Prepare(server, test_id);
  if (!server_endpoint.ok()) {
    run.error = Named(server, "prepare", server_endpoint.status());
    return run;
  }
  auto client_endpoint = Prepare(client, test_id);
  if (!client_endpoint.ok()) {
    Close(server, server_endpoint->endpoint_id());
    run.error = Named(client, "prepare", client_endpoint.status());
    return run;
  }

  auto server_connect = Connect(server, server_endpoint->endpoint_id(), client_endpoint->info());
  if (!server_connect.ok()) run.error = Named(server, "connect", server_connect.status());
  if (run.error.empty()) {
    auto client_connect = Connect(client, client_endpoint->endpoint_id(), server_endpoint->info());
    if (!client_connect.ok()) run.error = Named(client, "connect", client_connect.status());
  }

  const BrokeredSide* closed = nullptr;
  if (run.error.empty()) {
    closed = RunBothEnds(server, server_endpoint->endpoint_id(), client,
                         client_endpoint->endpoint_id(), run_timeout, while_running, run);
  }
  if (closed != &client) Close(client, client_endpoint->endpoint_id());
  if (closed != &server) Close(server, server_endpoint->endpoint_id());
  return run;
}

}  // namespace clustercert::controller
