#include "agent/peer/verbs_options.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "common/ib_mtu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::peer {
namespace {

using ::testing::HasSubstr;

v1::PeerTestSpec Spec(const std::string& test, const std::string& role = "client") {
  v1::PeerTestSpec spec;
  spec.set_engine("verbs");
  spec.set_test(test);
  spec.set_role(role);
  spec.set_device("mlx5_0");
  return spec;
}

// The error for `spec`, which must be InvalidArgument.
std::string Rejection(const v1::PeerTestSpec& spec) {
  absl::StatusOr<VerbsTestOptions> options = VerbsTestOptions::FromSpec(spec);
  EXPECT_FALSE(options.ok());
  if (options.ok()) return "";
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument) << options.status();
  return std::string(options.status().message());
}

VerbsTestOptions Accepted(const v1::PeerTestSpec& spec) {
  absl::StatusOr<VerbsTestOptions> options = VerbsTestOptions::FromSpec(spec);
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? *options : VerbsTestOptions();
}

TEST(VerbsTestOptionsTest, BandwidthDefaultsArePerftests) {
  const VerbsTestOptions options = Accepted(Spec("write_bw"));
  EXPECT_EQ(options.kind, VerbsTestOptions::Kind::kBandwidth);
  EXPECT_EQ(options.operation, VerbsTestOptions::Operation::kWrite);
  EXPECT_FALSE(options.server);
  EXPECT_EQ(options.device, "mlx5_0");
  EXPECT_EQ(options.port, 1u);
  EXPECT_EQ(options.gid_index, 0u);
  EXPECT_EQ(options.memory.kind, MemorySpec::Kind::kHost);
  EXPECT_EQ(options.message_bytes, 65536u);
  EXPECT_EQ(options.queue_depth, 128u);
  EXPECT_EQ(options.tx_depth(), 128u);
  EXPECT_EQ(options.streams, 1u);
  EXPECT_EQ(options.duration, absl::ZeroDuration());
  EXPECT_EQ(options.iterations, 5000u);  // ib_write_bw's default
  EXPECT_FALSE(options.bidirectional);
  EXPECT_TRUE(options.sends());
}

TEST(VerbsTestOptionsTest, OtherTestsDefaultToAThousandIterations) {
  for (const char* test : {"send_bw", "read_bw", "write_lat", "send_lat", "read_lat"}) {
    EXPECT_EQ(Accepted(Spec(test)).iterations, 1000u) << test;
  }
}

TEST(VerbsTestOptionsTest, LatencyDefaultsToTwoBytesAndOneWorkRequest) {
  const VerbsTestOptions options = Accepted(Spec("send_lat"));
  EXPECT_EQ(options.kind, VerbsTestOptions::Kind::kLatency);
  EXPECT_EQ(options.operation, VerbsTestOptions::Operation::kSend);
  EXPECT_EQ(options.message_bytes, 2u);
  EXPECT_EQ(options.tx_depth(), 1u);
}

TEST(VerbsTestOptionsTest, MapsEveryTest) {
  EXPECT_EQ(Accepted(Spec("send_bw")).operation, VerbsTestOptions::Operation::kSend);
  EXPECT_EQ(Accepted(Spec("read_bw")).operation, VerbsTestOptions::Operation::kRead);
  EXPECT_EQ(Accepted(Spec("write_lat")).operation, VerbsTestOptions::Operation::kWrite);
  EXPECT_EQ(Accepted(Spec("read_lat")).operation, VerbsTestOptions::Operation::kRead);
  EXPECT_EQ(Accepted(Spec("read_lat")).kind, VerbsTestOptions::Kind::kLatency);
}

TEST(VerbsTestOptionsTest, RejectsUnknownTestRoleAndEngine) {
  EXPECT_THAT(Rejection(Spec("atomic_bw")),
              HasSubstr("test \"atomic_bw\" is not one of write_bw, send_bw, read_bw"));
  EXPECT_THAT(Rejection(Spec("write_bw", "observer")),
              HasSubstr("role \"observer\" is neither server nor client"));
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_engine("tcp");
  EXPECT_THAT(Rejection(spec), HasSubstr("engine \"tcp\" was given to the verbs engine"));
  spec.set_engine("");
  EXPECT_TRUE(VerbsTestOptions::FromSpec(spec).ok());
}

TEST(VerbsTestOptionsTest, ServerSendsOnlyWhenBidirectional) {
  v1::PeerTestSpec spec = Spec("write_bw", "server");
  EXPECT_FALSE(Accepted(spec).sends());
  spec.set_bidirectional(true);
  EXPECT_TRUE(Accepted(spec).sends());
}

TEST(VerbsTestOptionsTest, DeviceMustBeNamed) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_device("");
  EXPECT_THAT(Rejection(spec), HasSubstr("device is empty"));
}

TEST(VerbsTestOptionsTest, PortBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_port(2);
  EXPECT_EQ(Accepted(spec).port, 2u);
  spec.set_port(3);
  EXPECT_THAT(Rejection(spec), HasSubstr("port 3 of mlx5_0 is outside 1..2"));
}

TEST(VerbsTestOptionsTest, GidIndexBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_gid_index(255);
  EXPECT_EQ(Accepted(spec).gid_index, 255u);
  spec.set_gid_index(256);
  EXPECT_THAT(Rejection(spec), HasSubstr("gid_index 256 is outside 0..255"));
}

TEST(VerbsTestOptionsTest, TrafficClassAndServiceLevelBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  EXPECT_EQ(Accepted(spec).traffic_class, 0u);
  spec.set_traffic_class(106);
  spec.set_service_level(15);
  EXPECT_EQ(Accepted(spec).traffic_class, 106u);
  EXPECT_EQ(Accepted(spec).service_level, 15u);
  spec.set_traffic_class(256);
  EXPECT_THAT(Rejection(spec), HasSubstr("traffic_class 256 is outside 0..255"));
  spec.set_traffic_class(106);
  spec.set_service_level(16);
  EXPECT_THAT(Rejection(spec), HasSubstr("service_level 16 is outside 0..15"));
}

TEST(VerbsTestOptionsTest, BandwidthMessageBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_message_bytes(1);
  EXPECT_EQ(Accepted(spec).message_bytes, 1u);
  spec.set_message_bytes(uint64_t{64} << 20);
  EXPECT_EQ(Accepted(spec).message_bytes, uint64_t{64} << 20);
  spec.set_message_bytes((uint64_t{64} << 20) + 1);
  EXPECT_THAT(Rejection(spec),
              HasSubstr("message_bytes 67108865 is outside 1..67108864 (64 MiB) for bandwidth"));
}

TEST(VerbsTestOptionsTest, RejectsATerabyteBuffer) {
  v1::PeerTestSpec spec = Spec("read_bw");
  spec.set_message_bytes(uint64_t{1} << 40);
  EXPECT_THAT(Rejection(spec), HasSubstr("message_bytes 1099511627776 is outside 1..67108864"));
}

TEST(VerbsTestOptionsTest, LatencyMessageBounds) {
  v1::PeerTestSpec spec = Spec("write_lat");
  spec.set_message_bytes(65536);
  EXPECT_EQ(Accepted(spec).message_bytes, 65536u);
  spec.set_message_bytes(65537);
  EXPECT_THAT(Rejection(spec),
              HasSubstr("message_bytes 65537 is outside 1..65536 (64 KiB) for latency tests"));
}

TEST(VerbsTestOptionsTest, QueueDepthBounds) {
  v1::PeerTestSpec spec = Spec("send_bw");
  spec.set_queue_depth(1);
  EXPECT_EQ(Accepted(spec).queue_depth, 1u);
  spec.set_queue_depth(4096);
  EXPECT_EQ(Accepted(spec).tx_depth(), 4096u);
  spec.set_queue_depth(4097);
  EXPECT_THAT(Rejection(spec), HasSubstr("queue_depth 4097 is outside 1..4096"));
}

TEST(VerbsTestOptionsTest, StreamBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_streams(64);
  EXPECT_EQ(Accepted(spec).streams, 64u);
  spec.set_streams(65);
  EXPECT_THAT(Rejection(spec), HasSubstr("streams 65 is outside 1..64 QPs"));
  spec = Spec("read_lat");
  spec.set_streams(2);
  EXPECT_THAT(Rejection(spec), HasSubstr("streams 2 is outside 1..1 for read_lat"));
}

TEST(VerbsTestOptionsTest, DurationBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_duration_s(3600);
  EXPECT_EQ(Accepted(spec).duration, absl::Hours(1));
  EXPECT_TRUE(Accepted(spec).duration_mode());
  EXPECT_EQ(Accepted(spec).iterations, 0u);
  spec.set_duration_s(0.2);
  EXPECT_EQ(Accepted(spec).duration, absl::Milliseconds(200));
  for (double bad : {3600.5, -1.0, std::nan("")}) {
    spec.set_duration_s(bad);
    EXPECT_THAT(Rejection(spec), HasSubstr("is outside 0 < duration_s <= 3600")) << bad;
  }
}

// 0 is what a controller that predates the field sends: the default applies.
TEST(VerbsTestOptionsTest, NoProgressDefaultsToTenSecondsAndIsBounded) {
  v1::PeerTestSpec spec = Spec("write_bw");
  EXPECT_EQ(Accepted(spec).no_progress, absl::Seconds(10));
  spec.set_no_progress_s(2.5);
  EXPECT_EQ(Accepted(spec).no_progress, absl::Milliseconds(2500));
  for (double bad : {3600.5, -1.0, std::nan("")}) {
    spec.set_no_progress_s(bad);
    EXPECT_THAT(Rejection(spec), HasSubstr("is outside 0 < no_progress_s <= 3600")) << bad;
  }
}

TEST(VerbsTestOptionsTest, IterationBounds) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_iterations(1);
  EXPECT_EQ(Accepted(spec).iterations, 1u);
  spec.set_iterations(100'000'000);
  EXPECT_EQ(Accepted(spec).iterations, 100'000'000u);
  spec.set_iterations(100'000'001);
  EXPECT_THAT(Rejection(spec), HasSubstr("iterations 100000001 is outside 1..100000000"));
}

TEST(VerbsTestOptionsTest, LatencyKeepsAtMostTenMillionSamples) {
  v1::PeerTestSpec spec = Spec("send_lat");
  spec.set_iterations(10'000'000);
  EXPECT_EQ(Accepted(spec).iterations, 10'000'000u);
  spec.set_iterations(10'000'001);
  EXPECT_THAT(Rejection(spec), HasSubstr("every latency sample is kept"));
}

TEST(VerbsTestOptionsTest, BidirectionalOnlyForBandwidth) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_bidirectional(true);
  EXPECT_TRUE(Accepted(spec).bidirectional);
  for (const char* test : {"write_lat", "send_lat", "read_lat"}) {
    spec.set_test(test);
    EXPECT_THAT(Rejection(spec), HasSubstr("bidirectional is not supported for")) << test;
  }
}

TEST(VerbsTestOptionsTest, Memory) {
  v1::PeerTestSpec spec = Spec("write_bw");
  spec.set_memory("cuda:1");
  const VerbsTestOptions options = Accepted(spec);
  EXPECT_EQ(options.memory.kind, MemorySpec::Kind::kCuda);
  EXPECT_EQ(options.memory.cuda_device, 1);
  spec.set_memory("gpu0");
  EXPECT_THAT(Rejection(spec), HasSubstr("memory \"gpu0\" is not a memory kind"));
  spec.set_memory("cuda:x");
  EXPECT_THAT(Rejection(spec), HasSubstr("memory \"cuda:x\""));
}

TEST(VerbsTestOptionsTest, WriteLatencyNeedsHostMemory) {
  v1::PeerTestSpec spec = Spec("write_lat");
  spec.set_memory("cuda:0");
  EXPECT_THAT(Rejection(spec), HasSubstr("polls the buffer's last byte from the CPU"));
  spec.set_test("send_lat");
  EXPECT_TRUE(VerbsTestOptions::FromSpec(spec).ok());
}

TEST(MtuTest, EnumAndBytesRoundTrip) {
  const std::pair<ibv_mtu, uint32_t> pairs[] = {{IBV_MTU_256, 256},
                                                {IBV_MTU_512, 512},
                                                {IBV_MTU_1024, 1024},
                                                {IBV_MTU_2048, 2048},
                                                {IBV_MTU_4096, 4096}};
  for (const auto& [mtu, bytes] : pairs) {
    EXPECT_EQ(*clustercert::IbMtuToBytes(mtu), bytes);
    EXPECT_EQ(*clustercert::IbMtuFromBytes(bytes), mtu);
  }
  EXPECT_EQ(static_cast<int>(IBV_MTU_256), 1);
  EXPECT_EQ(static_cast<int>(IBV_MTU_4096), 5);
}

TEST(MtuTest, RejectsWhatIsNotAnIbMtu) {
  EXPECT_FALSE(clustercert::IbMtuToBytes(0).ok());
  EXPECT_FALSE(clustercert::IbMtuToBytes(6).ok());
  EXPECT_THAT(std::string(clustercert::IbMtuFromBytes(1500).status().message()),
              HasSubstr("active_mtu 1500 is not an IB MTU"));
  EXPECT_FALSE(clustercert::IbMtuFromBytes(9000).ok());
  EXPECT_FALSE(clustercert::IbMtuFromBytes(0).ok());
}

TEST(MtuTest, PathMtuIsTheSmaller) {
  EXPECT_EQ(*PathMtu(4096, 1024), IBV_MTU_1024);
  EXPECT_EQ(*PathMtu(1024, 4096), IBV_MTU_1024);
  EXPECT_EQ(*PathMtu(4096, 4096), IBV_MTU_4096);
  EXPECT_THAT(std::string(PathMtu(4096, 1500).status().message()),
              HasSubstr("the peer's active_mtu 1500"));
  EXPECT_THAT(std::string(PathMtu(100, 4096).status().message()), HasSubstr("local active_mtu"));
}

TEST(LinkLayerTest, NamesAsIbvDevinfo) {
  EXPECT_EQ(LinkLayerName(IBV_LINK_LAYER_INFINIBAND), "InfiniBand");
  EXPECT_EQ(LinkLayerName(IBV_LINK_LAYER_UNSPECIFIED), "InfiniBand");
  EXPECT_EQ(LinkLayerName(IBV_LINK_LAYER_ETHERNET), "Ethernet");
  EXPECT_EQ(LinkLayerName(9), "Unknown (9)");
}

}  // namespace
}  // namespace clustercert::agent::peer
