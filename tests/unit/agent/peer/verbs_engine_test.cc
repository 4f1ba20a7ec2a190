#include "agent/peer/verbs_engine.h"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "agent/peer/verbs_resources.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::peer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kNoDevice[] = "no RDMA device on this host (run it in the soft-RoCE lab)";

v1::PeerTestSpec Spec(const std::string& test, const std::string& device) {
  v1::PeerTestSpec spec;
  spec.set_engine("verbs");
  spec.set_test(test);
  spec.set_role("client");
  spec.set_device(device);
  spec.set_memory("host");
  return spec;
}

TEST(VerbsEngineTest, AMissingDeviceIsNotFoundWithTheDevicesThereAre) {
  VerbsEngine engine;
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> endpoint =
      engine.Prepare(Spec("write_bw", "clustercert_missing0"));
  ASSERT_FALSE(endpoint.ok());
  EXPECT_EQ(endpoint.status().code(), absl::StatusCode::kNotFound) << endpoint.status();
  EXPECT_THAT(std::string(endpoint.status().message()),
              StartsWith("no RDMA device named clustercert_missing0; this host has"));
}

TEST(VerbsEngineTest, ContextOpenListsNoneOnAHostWithoutRdma) {
  absl::StatusOr<DeviceList> list = DeviceList::Get();
  ASSERT_TRUE(list.ok()) << list.status();
  if (list->size() != 0)
    SKIP_FOR_ENVIRONMENT("host-has-rdma-device") << "this host has RDMA devices";
  absl::StatusOr<Context> context = Context::Open("mlx5_3");
  ASSERT_FALSE(context.ok());
  EXPECT_THAT(std::string(context.status().message()),
              StartsWith("no RDMA device named mlx5_3; this host has none"));
}

TEST(VerbsEngineTest, RejectsABadSpecBeforeTouchingTheDevice) {
  VerbsEngine engine;
  v1::PeerTestSpec spec = Spec("write_lat", "clustercert_missing0");
  spec.set_bidirectional(true);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> endpoint = engine.Prepare(spec);
  ASSERT_FALSE(endpoint.ok());
  EXPECT_EQ(endpoint.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VerbsEngineTest, CudaMemoryWithoutADriverFailsCleanly) {
  VerbsEngine engine;
  v1::PeerTestSpec spec = Spec("write_bw", "clustercert_missing0");
  spec.set_memory("cuda:0");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> endpoint = engine.Prepare(spec);
  ASSERT_FALSE(endpoint.ok());  // no driver here, or no such RDMA device anywhere
}

// --- Data path: loopback on the first RDMA device, in the soft-RoCE lab. ---

struct LabDevice {
  std::string name;
  uint32_t gid_index = 0;
};

// The first RDMA device and, for RoCE, a populated GID index (RoCE v2
// preferred; CLUSTERCERT_VERBS_GID_INDEX overrides). Empty when none.
std::optional<LabDevice> FirstDevice() {
  absl::StatusOr<DeviceList> list = DeviceList::Get();
  if (!list.ok() || list->size() == 0) return std::nullopt;
  LabDevice device;
  device.name = list->names().front();
  if (const char* forced = std::getenv("CLUSTERCERT_VERBS_GID_INDEX"); forced != nullptr) {
    EXPECT_TRUE(absl::SimpleAtoi(forced, &device.gid_index)) << forced;
    return device;
  }
  absl::StatusOr<Context> context = Context::Open(device.name);
  if (!context.ok()) return device;
  absl::StatusOr<ibv_port_attr> port = context->QueryPort(1);
  if (!port.ok() || port->link_layer != IBV_LINK_LAYER_ETHERNET) return device;
  std::optional<uint32_t> any;
  for (int i = 0; i < port->gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context->get(), 1, static_cast<uint32_t>(i), &entry, 0) != 0) continue;
    bool zero = true;
    for (uint8_t b : entry.gid.raw) zero = zero && b == 0;
    if (zero) continue;
    if (entry.gid_type == IBV_GID_TYPE_ROCE_V2) {
      device.gid_index = static_cast<uint32_t>(i);
      return device;
    }
    if (!any.has_value()) any = static_cast<uint32_t>(i);
  }
  device.gid_index = any.value_or(0);
  return device;
}

struct Outcome {
  absl::StatusOr<v1::PeerTestResult> server = absl::UnknownError("not run");
  absl::StatusOr<v1::PeerTestResult> client = absl::UnknownError("not run");
};

// Prepares, connects and runs a server and a client on the same device port,
// as the controller would on two hosts.
Outcome Loopback(v1::PeerTestSpec spec, const LabDevice& device) {
  Outcome outcome;
  VerbsEngine engine;
  spec.set_device(device.name);
  spec.set_gid_index(device.gid_index);
  spec.set_role("server");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  spec.set_role("client");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  if (!server.ok()) return {server.status(), client.status()};
  if (!client.ok()) return {client.status(), client.status()};
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  absl::Status connected = (*server)->Connect((*client)->local_info(), deadline);
  if (!connected.ok()) return {connected, connected};
  connected = (*client)->Connect((*server)->local_info(), deadline);
  if (!connected.ok()) return {connected, connected};
  std::thread server_thread([&] { outcome.server = (*server)->Run(deadline); });
  outcome.client = (*client)->Run(deadline);
  server_thread.join();
  return outcome;
}

class VerbsLoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = FirstDevice();
    if (!device_.has_value()) SKIP_FOR_ENVIRONMENT("no-rdma-device") << kNoDevice;
  }
  std::optional<LabDevice> device_;
};

TEST_F(VerbsLoopbackTest, WriteBandwidthForAFifthOfASecond) {
  v1::PeerTestSpec spec = Spec("write_bw", "");
  spec.set_duration_s(0.2);
  Outcome outcome = Loopback(spec, *device_);
  ASSERT_TRUE(outcome.client.ok()) << outcome.client.status();
  ASSERT_TRUE(outcome.server.ok()) << outcome.server.status();
  const v1::BandwidthStats& bw = outcome.client->bandwidth();
  EXPECT_EQ(bw.message_bytes(), 65536u);
  EXPECT_GT(bw.iterations(), 0u);
  EXPECT_GT(bw.avg_gbps(), 0);
  EXPECT_GE(bw.seconds(), 0.2);
  EXPECT_EQ(bw.peak_gbps(), 0);  // duration mode, as perftest
  EXPECT_EQ(outcome.client->role(), "client");
  EXPECT_EQ(outcome.client->memory_path(), "host");
  EXPECT_THAT(outcome.client->detail(), StartsWith("verbs RC, 1 QP, mtu "));
  EXPECT_EQ(outcome.server->role(), "server");
  EXPECT_FALSE(outcome.server->has_bandwidth());
}

TEST_F(VerbsLoopbackTest, WriteLatencyHundredIterations) {
  v1::PeerTestSpec spec = Spec("write_lat", "");
  spec.set_iterations(100);
  Outcome outcome = Loopback(spec, *device_);
  ASSERT_TRUE(outcome.client.ok()) << outcome.client.status();
  ASSERT_TRUE(outcome.server.ok()) << outcome.server.status();
  const v1::LatencyStats& latency = outcome.client->latency();
  EXPECT_EQ(latency.samples(), 100u);
  EXPECT_GT(latency.min_us(), 0);
  EXPECT_GE(latency.max_us(), latency.typical_us());
  EXPECT_GE(latency.typical_us(), latency.min_us());
}

TEST_F(VerbsLoopbackTest, OtherTestsInIterationsMode) {
  struct Case {
    const char* test;
    uint64_t bytes;
    uint64_t iterations;
    uint32_t streams;
  };
  for (const Case& c :
       {Case{"send_bw", 4096, 200, 2}, Case{"read_bw", 4096, 200, 2},
        Case{"write_bw", 4096, 300, 3}, Case{"send_lat", 2, 50, 1}, Case{"read_lat", 2, 50, 1}}) {
    SCOPED_TRACE(c.test);
    v1::PeerTestSpec spec = Spec(c.test, "");
    spec.set_message_bytes(c.bytes);
    spec.set_iterations(c.iterations);
    spec.set_streams(c.streams);
    spec.set_queue_depth(16);
    Outcome outcome = Loopback(spec, *device_);
    ASSERT_TRUE(outcome.client.ok()) << outcome.client.status();
    ASSERT_TRUE(outcome.server.ok()) << outcome.server.status();
    if (std::string(c.test).ends_with("_lat")) {
      EXPECT_EQ(outcome.client->latency().samples(), c.iterations);
    } else {
      EXPECT_EQ(outcome.client->bandwidth().iterations(), c.iterations * c.streams);
      EXPECT_GT(outcome.client->bandwidth().peak_gbps(), 0);
    }
    if (std::string(c.test) == "send_bw") {
      EXPECT_EQ(outcome.server->bandwidth().iterations(), c.iterations * c.streams);
    }
  }
}

TEST_F(VerbsLoopbackTest, BidirectionalWriteEachSideReportsItsDirection) {
  v1::PeerTestSpec spec = Spec("write_bw", "");
  spec.set_bidirectional(true);
  spec.set_iterations(200);
  spec.set_message_bytes(4096);
  Outcome outcome = Loopback(spec, *device_);
  ASSERT_TRUE(outcome.client.ok()) << outcome.client.status();
  ASSERT_TRUE(outcome.server.ok()) << outcome.server.status();
  EXPECT_EQ(outcome.client->bandwidth().iterations(), 200u);
  EXPECT_EQ(outcome.server->bandwidth().iterations(), 200u);
}

TEST_F(VerbsLoopbackTest, ARunPastItsDeadlineIsDeadlineExceeded) {
  VerbsEngine engine;
  v1::PeerTestSpec spec = Spec("write_bw", device_->name);
  spec.set_gid_index(device_->gid_index);
  spec.set_role("server");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  spec.set_role("client");
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  ASSERT_TRUE(server.ok() && client.ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  ASSERT_TRUE((*server)->Connect((*client)->local_info(), deadline).ok());
  ASSERT_TRUE((*client)->Connect((*server)->local_info(), deadline).ok());
  // The client never runs: the server waits for an end signal that never comes.
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::PeerTestResult> result = (*server)->Run(start + absl::Milliseconds(300));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

}  // namespace
}  // namespace clustercert::agent::peer
