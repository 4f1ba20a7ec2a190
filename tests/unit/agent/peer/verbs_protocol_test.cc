#include "agent/peer/verbs_protocol.h"

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::peer {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = PeakTracker::Clock;

VerbsTestOptions Options(const std::string& test, bool server = false) {
  v1::PeerTestSpec spec;
  spec.set_test(test);
  spec.set_role(server ? "server" : "client");
  spec.set_device("rxe0");
  absl::StatusOr<VerbsTestOptions> options = VerbsTestOptions::FromSpec(spec);
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? *options : VerbsTestOptions();
}

TEST(BufferLayoutTest, ReceiveRegionStartsOnTheNextFourKiB) {
  EXPECT_EQ(ReceiveOffset(1), 4096u);
  EXPECT_EQ(ReceiveOffset(2), 4096u);
  EXPECT_EQ(ReceiveOffset(4096), 4096u);
  EXPECT_EQ(ReceiveOffset(4097), 8192u);
  EXPECT_EQ(ReceiveOffset(65536), 65536u);
  EXPECT_EQ(ReceiveOffset(uint64_t{64} << 20), uint64_t{64} << 20);
  EXPECT_EQ(BufferBytes(2), 8192u);
  EXPECT_EQ(BufferBytes(uint64_t{64} << 20), uint64_t{128} << 20);
}

TEST(SignalingTest, EveryHalfQueue) {
  EXPECT_EQ(SignalEvery(1), 1u);
  EXPECT_EQ(SignalEvery(2), 1u);
  EXPECT_EQ(SignalEvery(3), 1u);
  EXPECT_EQ(SignalEvery(128), 64u);
  EXPECT_EQ(SignalEvery(4096), 2048u);
}

TEST(SignalingTest, SignalsTheLastOfEachBatchAndOfTheRun) {
  // every 4, 10 in all: indexes 3 and 7, and 9 as the last.
  std::string pattern;
  for (uint64_t i = 0; i < 10; ++i) pattern += IsSignaled(i, 4, 10) ? 'S' : '.';
  EXPECT_EQ(pattern, "...S...S.S");
  // Duration mode has no last one.
  pattern.clear();
  for (uint64_t i = 0; i < 10; ++i) pattern += IsSignaled(i, 4, 0) ? 'S' : '.';
  EXPECT_EQ(pattern, "...S...S..");
  EXPECT_TRUE(IsSignaled(0, 1, 0));
  EXPECT_TRUE(IsSignaled(0, 64, 1));
}

// A send queue that completes in order, one work request per step, and
// reports only signaled ones, driven the way BandwidthRun drives it: the run
// never stalls, never exceeds the depth, and learns of every completion.
struct SimulatedQueue {
  uint64_t posted = 0;
  uint64_t executed = 0;
  uint64_t completed = 0;  // what the poster knows
  std::vector<bool> signaled;

  void Step() {
    if (executed == posted) return;
    if (signaled[executed]) completed = executed + 1;
    ++executed;
  }
};

void Simulate(uint32_t depth, uint64_t total) {
  const uint32_t every = SignalEvery(depth);
  SimulatedQueue queue;
  uint64_t steps = 0;
  while (queue.completed < total) {
    while (queue.posted < total && queue.posted - queue.completed < depth) {
      queue.signaled.push_back(IsSignaled(queue.posted, every, total));
      ++queue.posted;
    }
    ASSERT_LE(queue.posted - queue.completed, depth);
    const uint64_t before = queue.executed;
    queue.Step();
    ASSERT_TRUE(queue.executed > before || queue.completed == total)
        << "stalled at depth " << depth << ", total " << total << ", posted " << queue.posted;
    ASSERT_LT(++steps, 10 * total + 10);
  }
  EXPECT_EQ(queue.completed, total);
}

TEST(SignalingTest, NoDepthStallsAndTheLastCompletionIsSeen) {
  for (uint32_t depth : {1u, 2u, 3u, 4u, 7u, 128u, 4096u}) {
    for (uint64_t total : {uint64_t{1}, uint64_t{5}, uint64_t{63}, uint64_t{1000}}) {
      Simulate(depth, total);
    }
  }
}

TEST(ReceiveDepthTest, PerSideAndTest) {
  EXPECT_EQ(ReceiveDepth(Options("send_bw", /*server=*/true)), 512u);
  EXPECT_EQ(ReceiveDepth(Options("send_bw")), 0u);
  EXPECT_EQ(ReceiveDepth(Options("send_lat")), 2u);
  EXPECT_EQ(ReceiveDepth(Options("send_lat", true)), 2u);
  EXPECT_EQ(ReceiveDepth(Options("write_bw", true)), 1u);  // the end signal
  EXPECT_EQ(ReceiveDepth(Options("write_bw")), 0u);
  EXPECT_EQ(ReceiveDepth(Options("read_lat", true)), 1u);
  EXPECT_EQ(ReceiveDepth(Options("write_lat")), 0u);
  VerbsTestOptions both = Options("write_bw");
  both.bidirectional = true;
  EXPECT_EQ(ReceiveDepth(both), 1u);
  both = Options("send_bw");
  both.bidirectional = true;
  EXPECT_EQ(ReceiveDepth(both), 512u);
}

TEST(ReadsInFlightTest, SixteenAtMostWithinTheDevice) {
  ibv_device_attr device{};
  device.max_qp_rd_atom = 128;
  device.max_qp_init_rd_atom = 128;
  EXPECT_EQ(ReadsInFlight(Options("read_bw"), device), 16);
  EXPECT_EQ(ReadsInFlight(Options("write_bw"), device), 1);
  device.max_qp_init_rd_atom = 4;
  EXPECT_EQ(ReadsInFlight(Options("read_lat"), device), 4);
  device.max_qp_rd_atom = 0;
  EXPECT_EQ(ReadsInFlight(Options("read_bw"), device), 1);
}

TEST(WorkIdTest, RoundTrips) {
  for (const WorkId& id : {WorkId{WorkId::Kind::kData, 0, 1}, WorkId{WorkId::Kind::kEnd, 63, 0},
                           WorkId{WorkId::Kind::kReceive, 255, WorkId::kMaxCount},
                           WorkId{WorkId::Kind::kData, 17, 100'000'000}}) {
    const std::optional<WorkId> back = WorkId::Decode(id.Encode());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->kind, id.kind);
    EXPECT_EQ(back->qp, id.qp);
    EXPECT_EQ(back->count, id.count);
  }
}

TEST(WorkIdTest, RejectsForeignIds) {
  EXPECT_FALSE(WorkId::Decode(0).has_value());
  EXPECT_FALSE(WorkId::Decode(uint64_t{4} << 56).has_value());
  EXPECT_FALSE(WorkId::Decode(~uint64_t{0}).has_value());
}

TEST(EndOfTestTest, EncodesMagicVersionAndReason) {
  EXPECT_EQ(EncodeEndOfTest(EndReason::kComplete), 0xCCE00100u);
  EXPECT_EQ(EncodeEndOfTest(EndReason::kAborted), 0xCCE00101u);
  EXPECT_EQ(*DecodeEndOfTest(0xCCE00100u), EndReason::kComplete);
  EXPECT_EQ(*DecodeEndOfTest(0xCCE00101u), EndReason::kAborted);
}

TEST(EndOfTestTest, RejectsOtherImmediates) {
  for (uint32_t bad : {0u, 0x0001E0CCu /* byte-swapped */, 0xCCE00200u /* version 2 */,
                       0xCCE00102u /* reason 2 */, 0xCCE10100u}) {
    absl::StatusOr<EndReason> reason = DecodeEndOfTest(bad);
    ASSERT_FALSE(reason.ok()) << std::hex << bad;
    EXPECT_EQ(reason.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(reason.status().message()),
                HasSubstr("is not a clustercert end-of-test signal"));
  }
}

TEST(PeakTrackerTest, NothingBeforeAMessage) {
  PeakTracker peak(4);
  EXPECT_FALSE(peak.SmallestGap().has_value());
  peak.Record(0, Clock::time_point());
  EXPECT_FALSE(peak.SmallestGap().has_value());
}

TEST(PeakTrackerTest, AveragesWhenFewerThanAWindow) {
  PeakTracker peak(100);
  const Clock::time_point t0;
  peak.Record(0, t0);
  peak.Record(10, t0 + std::chrono::microseconds(50));
  EXPECT_EQ(*peak.SmallestGap(), absl::Microseconds(5));
}

TEST(PeakTrackerTest, FindsTheFastestWindow) {
  PeakTracker peak(4);
  const Clock::time_point t0;
  using std::chrono::microseconds;
  // 4 messages per 40 us, then 4 in 8 us, then 4 in 40 us again.
  peak.Record(0, t0);
  peak.Record(4, t0 + microseconds(40));
  peak.Record(8, t0 + microseconds(48));
  peak.Record(12, t0 + microseconds(88));
  EXPECT_EQ(*peak.SmallestGap(), absl::Microseconds(2));
}

TEST(PeakTrackerTest, ABurstPolledTogetherCannotFakeAPeak) {
  PeakTracker peak(8);
  const Clock::time_point t0;
  using std::chrono::microseconds;
  peak.Record(0, t0);
  peak.Record(4, t0 + microseconds(40));
  peak.Record(8, t0 + microseconds(40));  // same poll: a zero gap over 4 messages
  peak.Record(12, t0 + microseconds(80));
  peak.Record(16, t0 + microseconds(120));
  // Windows of at least 8 messages: 0..8 in 40 us is the best, 5 us each.
  EXPECT_EQ(*peak.SmallestGap(), absl::Microseconds(5));
}

TEST(CompletionFailureTest, NamesTheQpStatusTimeAndFix) {
  const absl::Status status = CompletionFailure("mlx5_0", 0x11, IBV_WC_RETRY_EXC_ERR, 0x81,
                                                absl::Milliseconds(1200), "write_bw");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith("mlx5_0 QP 0x11: IBV_WC_RETRY_EXC_ERR ("),
                    HasSubstr("vendor error 0x81) after 1.2 s of write_bw"),
                    HasSubstr("the peer stopped answering — check the path MTU end to end and "
                              "the peer's port")));
}

TEST(CompletionFailureTest, NamesEveryStatus) {
  EXPECT_EQ(WcStatusName(IBV_WC_SUCCESS), "IBV_WC_SUCCESS");
  EXPECT_EQ(WcStatusName(IBV_WC_LOC_LEN_ERR), "IBV_WC_LOC_LEN_ERR");
  EXPECT_EQ(WcStatusName(IBV_WC_REM_ACCESS_ERR), "IBV_WC_REM_ACCESS_ERR");
  EXPECT_EQ(WcStatusName(IBV_WC_RETRY_EXC_ERR), "IBV_WC_RETRY_EXC_ERR");
  EXPECT_EQ(WcStatusName(IBV_WC_RNR_RETRY_EXC_ERR), "IBV_WC_RNR_RETRY_EXC_ERR");
  EXPECT_EQ(WcStatusName(IBV_WC_GENERAL_ERR), "IBV_WC_GENERAL_ERR");
  EXPECT_EQ(WcStatusName(IBV_WC_TM_RNDV_INCOMPLETE), "IBV_WC_TM_RNDV_INCOMPLETE");
  EXPECT_EQ(WcStatusName(99), "IBV_WC status 99");
  EXPECT_EQ(WcStatusName(-1), "IBV_WC status -1");
  EXPECT_THAT(std::string(CompletionFailure("rxe0", 0x12, IBV_WC_REM_ACCESS_ERR, 0,
                                            absl::ZeroDuration(), "read_bw")
                              .message()),
              HasSubstr("rkey or address does not match"));
}

v1::EndpointInfo Info(const std::string& link_layer) {
  v1::EndpointInfo info;
  info.set_lid(link_layer == "InfiniBand" ? 7 : 0);
  info.add_qpn(0x11);
  info.add_psn(0x123456);
  std::string gid(16, '\0');
  gid[10] = gid[11] = '\xff';
  gid[12] = 10;
  gid[15] = 1;
  info.set_gid(gid);
  info.set_rkey(0x1234);
  info.set_vaddr(0x7f0000001000);
  info.set_active_mtu(4096);
  info.set_link_layer(link_layer);
  return info;
}

std::string PeerProblem(const VerbsTestOptions& options, const v1::EndpointInfo& local,
                        const v1::EndpointInfo& peer) {
  const absl::Status status = CheckPeerInfo(options, local, peer);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST(CheckPeerInfoTest, AcceptsAMatchingPeer) {
  EXPECT_TRUE(CheckPeerInfo(Options("write_bw"), Info("Ethernet"), Info("Ethernet")).ok());
  EXPECT_TRUE(CheckPeerInfo(Options("write_bw"), Info("InfiniBand"), Info("InfiniBand")).ok());
  v1::EndpointInfo slower = Info("Ethernet");
  slower.set_active_mtu(1024);
  EXPECT_TRUE(CheckPeerInfo(Options("write_bw"), Info("Ethernet"), slower).ok());
}

TEST(CheckPeerInfoTest, RejectsWhatCannotConnect) {
  const VerbsTestOptions options = Options("write_bw");
  const v1::EndpointInfo local = Info("Ethernet");
  v1::EndpointInfo peer = Info("Ethernet");
  peer.add_qpn(0x12);
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("the peer offers 2 QPs and 1 PSNs"));
  peer = Info("Ethernet");
  peer.set_qpn(0, 0);
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("qpn 0x0"));
  peer = Info("Ethernet");
  peer.set_psn(0, 0x1000000);
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("psn 0x1000000"));
  EXPECT_THAT(PeerProblem(options, local, Info("InfiniBand")),
              HasSubstr("cannot join InfiniBand and Ethernet ports"));
  peer = Info("Ethernet");
  peer.set_gid("short");
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("gid has 5 bytes, expected 16"));
  peer.set_gid(std::string(16, '\0'));
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("gid is all zeros"));
  peer = Info("InfiniBand");
  peer.set_lid(0);
  EXPECT_THAT(PeerProblem(options, Info("InfiniBand"), peer), HasSubstr("the peer's lid is 0"));
  peer = Info("Ethernet");
  peer.set_active_mtu(1500);
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("the peer's active_mtu 1500"));
  peer = Info("Ethernet");
  peer.set_vaddr(0);
  EXPECT_THAT(PeerProblem(options, local, peer), HasSubstr("the peer's vaddr is 0"));
  // send tests do not address the peer's memory.
  EXPECT_TRUE(CheckPeerInfo(Options("send_bw"), local, peer).ok());
}

TEST(DetailTest, SaysWhatTheFigureIs) {
  EXPECT_EQ(DetailOf(Options("write_bw"), 4096, false),
            "verbs RC, 1 QP, mtu 4096, tx depth 128; client: sender's figure from completions");
  EXPECT_EQ(DetailOf(Options("write_bw", true), 1024, false),
            "verbs RC, 1 QP, mtu 1024, tx depth 128; server: passive (one-sided RDMA), the client "
            "measures");
  EXPECT_THAT(DetailOf(Options("send_bw", true), 1024, false), HasSubstr("receiver's figure"));
  VerbsTestOptions both = Options("write_bw");
  both.bidirectional = true;
  both.streams = 8;
  EXPECT_THAT(DetailOf(both, 4096, false),
              AllOf(StartsWith("verbs RC, 8 QPs,"), HasSubstr("this side's sending direction")));
  EXPECT_EQ(DetailOf(Options("write_lat"), 1024, true),
            "verbs RC, 1 QP, mtu 1024, tx depth 1, inline; client: ping-pong, one-way = RTT/2");
  EXPECT_THAT(DetailOf(Options("read_lat"), 1024, false), HasSubstr("latency = RTT"));
  EXPECT_THAT(DetailOf(Options("send_lat", true), 1024, false), HasSubstr("server: echoes"));
}

TEST(QpNameTest, Hex) { EXPECT_EQ(QpName("mlx5_0", 0x11), "mlx5_0 QP 0x11"); }

}  // namespace
}  // namespace clustercert::agent::peer
