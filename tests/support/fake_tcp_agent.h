#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "controller/client/agent_client.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller::testing {

// A node-agent of this API version whose tcp peer tests move `gbps` (the
// receiving end's figure, as the tcp engine reports it) and which has no
// collectives: enough for a whole certification run over fakes.
class FakeTcpAgent final : public FakeAgentClient {
 public:
  FakeTcpAgent(std::string node, double gbps) : node_(std::move(node)), gbps_(gbps) {}

  void GetVersion(absl::Duration, AgentCallback<v1::GetVersionResponse> done) override {
    v1::GetVersionResponse version;
    version.set_api_version(kApiVersion);
    version.set_agent_version("0.0-test");
    version.set_node_name(node_);
    version.set_unix_time_us(absl::ToUnixMicros(absl::Now()));
    done(version, {});
  }
  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(absl::StrCat(request.spec().role(), "#", ++endpoints_));
    groups.push_back(request.share_group());
    done(response, {});
  }
  void RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    v1::RunEndpointResponse response;
    if (request.endpoint_id().rfind("server", 0) == 0) {
      response.mutable_result()->mutable_bandwidth()->set_avg_gbps(gbps_);
      response.mutable_result()->mutable_bandwidth()->set_seconds(1);
    }
    // A tcp endpoint records its route's MTU to the peer (mtu.path): a
    // jumbo path, as a healthy fabric has.
    response.mutable_result()->mutable_path_mtu()->set_local_route_mtu(9000);
    response.mutable_result()->mutable_path_mtu()->set_route_mtu(9000);
    done(response, {});
  }

  std::vector<std::string> groups;  // each prepare's share group

 protected:
  absl::Status OnCall(const std::string& call, absl::Duration) override {
    if (call.find("Collective") != std::string::npos) return absl::UnimplementedError("none");
    return absl::OkStatus();
  }

 private:
  std::string node_;
  double gbps_;
  int endpoints_ = 0;
};

}  // namespace clustercert::controller::testing
