#include "agent/service/agent_handlers.h"

#include "agent/service/agent_options.h"
#include "common/version.h"
#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

// Hands back a canned inventory and remembers what it was asked.
class CannedInventory final : public inventory::InventorySource {
 public:
  absl::StatusOr<v1::Inventory> Collect(const std::string& dialed_host) override {
    last_dialed_host = dialed_host;
    if (!error.ok()) return error;
    v1::Inventory inventory;
    inventory.set_hostname("gpu-host-7");
    inventory.add_netdevs()->set_name("eno1");
    return inventory;
  }
  std::string last_dialed_host;
  absl::Status error;
};

class AgentHandlersTest : public ::testing::Test {
 protected:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  CannedInventory inventory_;
  AgentHandlers handlers_{{"node1", "gpu-host-7"}, inventory_, [this] { return now_; }};
};

TEST_F(AgentHandlersTest, VersionNamesNodeApiAndClock) {
  now_ += absl::Seconds(3);
  auto version = handlers_.GetVersion({});
  EXPECT_EQ(version.agent_version(), kToolVersion);
  EXPECT_EQ(version.api_version(), kApiVersion);
  EXPECT_EQ(version.node_name(), "node1");
  EXPECT_EQ(version.uptime_ms(), 3000);
  EXPECT_EQ(version.unix_time_us(), absl::ToUnixMicros(now_));
}

TEST_F(AgentHandlersTest, InventoryIsStampedWithNodeAndVersion) {
  v1::GetInventoryRequest request;
  request.set_dialed_host("192.168.100.11");
  auto response = handlers_.GetInventory(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(inventory_.last_dialed_host, "192.168.100.11");
  EXPECT_EQ(response->inventory().node_name(), "node1");
  EXPECT_EQ(response->inventory().agent_version(), kToolVersion);
  EXPECT_EQ(response->inventory().collected_unix_ms(), absl::ToUnixMillis(now_));
  EXPECT_EQ(response->inventory().netdevs(0).name(), "eno1");
}

v1::GetInventoryRequest WithIsolationQuery() {
  v1::GetInventoryRequest request;
  auto* fabric = request.mutable_isolation()->add_fabrics();
  fabric->set_name("inference");
  fabric->add_subnets("10.30.0.0/16");
  fabric->add_probe("10.30.0.10:8000");
  request.mutable_isolation()->set_probe_timeout_ms(1000);
  return request;
}

// An agent on a captured tree has no isolation collector: it says why,
// never answers with this machine's routes.
TEST_F(AgentHandlersTest, IsolationOnACapturedTreeIsUnknownWithTheReason) {
  auto response = handlers_.GetInventory(WithIsolationQuery());
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::FabricIsolation& isolation = response->inventory().isolation();
  ASSERT_EQ(isolation.unknowns_size(), 1);
  EXPECT_EQ(isolation.unknowns(0).field(), "isolation");
  EXPECT_NE(isolation.unknowns(0).reason().find("captured tree"), std::string::npos);
  EXPECT_EQ(isolation.probes_size(), 0);
}

// A query past the agent's bounds is refused before anything is collected.
TEST_F(AgentHandlersTest, IsolationQueryOutsideTheBoundsIsRefused) {
  v1::GetInventoryRequest request = WithIsolationQuery();
  request.mutable_isolation()->mutable_fabrics(0)->set_probe(0, "metadata.internal:80");
  inventory_.last_dialed_host = "untouched";
  auto response = handlers_.GetInventory(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(inventory_.last_dialed_host, "untouched");
}

TEST_F(AgentHandlersTest, ExchangeTimeStampsArrivalAndAnswer) {
  v1::ExchangeTimeRequest request;
  request.set_controller_send_unix_us(123);
  const absl::Time received = now_;
  now_ += absl::Microseconds(40);
  auto response = handlers_.ExchangeTime(request, received);
  EXPECT_EQ(response.controller_send_unix_us(), 123);
  EXPECT_EQ(response.receive_unix_us(), absl::ToUnixMicros(received));
  EXPECT_EQ(response.transmit_unix_us(), absl::ToUnixMicros(now_));
  // Once set by a test-only agent flag, now gone: never set.
  EXPECT_EQ(response.injected_offset_us(), 0);
}

TEST_F(AgentHandlersTest, CollectorErrorIsReturnedNotSwallowed) {
  inventory_.error = absl::UnavailableError("sysfs root vanished");
  auto response = handlers_.GetInventory({});
  EXPECT_FALSE(response.ok());
  EXPECT_EQ(response.status().message(), "sysfs root vanished");
}

TEST(AgentOptionsTest, RequiresTlsOrExplicitInsecure) {
  AgentFlags flags;
  flags.listen = "127.0.0.1:7070";
  auto options = ValidateAgentFlags(flags, "host");
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--insecure"), absl::string_view::npos);
  flags.insecure = true;
  options = ValidateAgentFlags(flags, "host");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->node_name, "host");
  EXPECT_EQ(options->listen.port, 7070);
}

TEST(AgentOptionsTest, MaxLongCallsIsBounded) {
  AgentFlags flags;
  flags.listen = "127.0.0.1:7070";
  flags.insecure = true;
  auto options = ValidateAgentFlags(flags, "host");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->max_long_calls, 32);
  for (int bad : {0, -1, 257}) {
    flags.max_long_calls = bad;
    options = ValidateAgentFlags(flags, "host");
    ASSERT_FALSE(options.ok()) << bad;
    EXPECT_NE(options.status().message().find("--max-long-calls"), absl::string_view::npos);
  }
  flags.max_long_calls = 4;
  options = ValidateAgentFlags(flags, "host");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->max_long_calls, 4);
}

TEST(AgentOptionsTest, RejectsBothTlsAndInsecureAndPartialTls) {
  AgentFlags flags;
  flags.listen = "127.0.0.1:7070";
  flags.insecure = true;
  flags.tls_cert = "/etc/clustercert/agent.pem";
  EXPECT_FALSE(ValidateAgentFlags(flags, "host").ok());
  flags.insecure = false;
  auto options = ValidateAgentFlags(flags, "host");
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--tls-key"), absl::string_view::npos);
}

TEST(AgentOptionsTest, RejectsBadListenAndMissingRoot) {
  AgentFlags flags;
  flags.insecure = true;
  flags.listen = "7070";
  EXPECT_FALSE(ValidateAgentFlags(flags, "host").ok());
  flags.listen = "127.0.0.1:0";
  EXPECT_TRUE(ValidateAgentFlags(flags, "host").ok());
  flags.sysfs_root = "/nonexistent/fixture";
  auto options = ValidateAgentFlags(flags, "host");
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("/nonexistent/fixture"), absl::string_view::npos);
}

}  // namespace
}  // namespace clustercert::agent
