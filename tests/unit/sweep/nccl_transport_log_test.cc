#include "sweep/nccl_transport_log.h"

#include <gtest/gtest.h>

#include <fstream>

namespace clustercert::sweep {
namespace {

std::vector<std::string> FixtureLines(const std::string& name) {
  std::ifstream file(std::string(CLUSTERCERT_FIXTURES) + "/nccl/" + name);
  EXPECT_TRUE(file.good()) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

TEST(ParseChannelLineTest, NetIbSendWithGdrdma) {
  auto channel = ParseChannelLine(
      "node1:2811:2840 [0] NCCL INFO Channel 03/0 : 0[0] -> 4[0] [send] via NET/IB/0/GDRDMA");
  ASSERT_TRUE(channel.has_value());
  EXPECT_EQ(channel->channel, 3);
  EXPECT_EQ(channel->from_rank, 0);
  EXPECT_EQ(channel->to_rank, 4);
  EXPECT_EQ(channel->direction, "send");
  EXPECT_EQ(channel->transport, "NET/IB");
  EXPECT_TRUE(channel->gdrdma);
  EXPECT_EQ(channel->detail, "NET/IB/0/GDRDMA");
}

TEST(ParseChannelLineTest, NetIbReceiveWithoutGdrdma) {
  auto channel = ParseChannelLine(
      "node2:911:930 [3] NCCL INFO Channel 01/1 : 12[3] -> 3[3] [receive] via NET/IB/1\r");
  ASSERT_TRUE(channel.has_value());
  EXPECT_EQ(channel->channel, 1);
  EXPECT_EQ(channel->from_rank, 12);
  EXPECT_EQ(channel->to_rank, 3);
  EXPECT_EQ(channel->direction, "receive");
  EXPECT_EQ(channel->transport, "NET/IB");
  EXPECT_FALSE(channel->gdrdma);
  EXPECT_EQ(channel->detail, "NET/IB/1");
}

TEST(ParseChannelLineTest, SocketAndOlderForms) {
  auto socket = ParseChannelLine(
      "node1:2811:2840 [0] NCCL INFO Channel 00/0 : 3[3] -> 0[0] [receive] via NET/Socket/0");
  ASSERT_TRUE(socket.has_value());
  EXPECT_EQ(socket->transport, "NET/Socket");
  EXPECT_FALSE(socket->gdrdma);

  // NCCL 2.7-2.11: no connection index, rank[busid].
  auto old = ParseChannelLine(
      "dgx1:20417:20460 [1] NCCL INFO Channel 00 : 1[1d000] -> 2[1c000] [send] via NET/Socket/0");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->channel, 0);
  EXPECT_EQ(old->from_rank, 1);
  EXPECT_EQ(old->to_rank, 2);

  // NCCL 2.4: "Ring" (nccl-tests#29).
  auto ring =
      ParseChannelLine("server4:45888:45989 [2] NCCL INFO Ring 00 : 26[2] -> 24[0] via P2P/IPC");
  ASSERT_TRUE(ring.has_value());
  EXPECT_EQ(ring->from_rank, 26);
  EXPECT_EQ(ring->to_rank, 24);
  EXPECT_EQ(ring->transport, "P2P");
  EXPECT_EQ(ring->direction, "");
}

TEST(ParseChannelLineTest, IntraNodeTransports) {
  struct Case {
    const char* line;
    const char* transport;
    const char* detail;
  };
  const Case cases[] = {
      {"h:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] via P2P/CUMEM/read", "P2P",
       "P2P/CUMEM/read"},
      {"h:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] via P2P/IPC", "P2P", "P2P/IPC"},
      {"h:1:2 [1] NCCL INFO Channel 05/1 : 1[1] -> 0[0] via P2P/direct pointer", "P2P",
       "P2P/direct pointer"},
      {"h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct", "SHM",
       "SHM/direct/direct"},
      {"h:1:2 [0] NCCL INFO Channel 02/0 : 0[0] -> 3[3] via P2P/indirect/1[1]", "P2P",
       "P2P/indirect/1[1]"},
  };
  for (const Case& c : cases) {
    auto channel = ParseChannelLine(c.line);
    ASSERT_TRUE(channel.has_value()) << c.line;
    EXPECT_EQ(channel->transport, c.transport) << c.line;
    EXPECT_EQ(channel->detail, c.detail) << c.line;
    EXPECT_EQ(channel->direction, "") << c.line;
    EXPECT_FALSE(channel->gdrdma) << c.line;
  }
}

TEST(ParseChannelLineTest, PluginNetworksAndLauncherPrefixes) {
  // The SHARP plugin's name, a proxy rank in parentheses, mpirun --tag-output.
  auto ext = ParseChannelLine(
      "[0] h100-1:497888:498098 [0] NCCL INFO Channel 07/0 : 0[0] -> 8[0] [send] via "
      "NET/IBext_v8/7/GDRDMA");
  ASSERT_TRUE(ext.has_value());
  EXPECT_EQ(ext->transport, "NET/IBext_v8");
  EXPECT_TRUE(ext->gdrdma);
  auto proxy = ParseChannelLine(
      "h:1:2 [2] NCCL INFO Channel 00/0 : 2[2] -> 10[2] [send] via NET/IB/2(1)/GDRDMA(PCI)");
  ASSERT_TRUE(proxy.has_value());
  EXPECT_EQ(proxy->transport, "NET/IB");
  EXPECT_TRUE(proxy->gdrdma);
}

TEST(ParseChannelLineTest, RejectsLinesThatAreNotConnections) {
  EXPECT_FALSE(
      ParseChannelLine("h:1:2 [0] NCCL INFO Channel 00/04 :    0   1   2   3").has_value());
  EXPECT_FALSE(ParseChannelLine("h:1:2 [0] NCCL INFO Using network IB").has_value());
  EXPECT_FALSE(ParseChannelLine("h:1:2 [0] NCCL INFO Connected all rings").has_value());
  EXPECT_FALSE(
      ParseChannelLine("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via ").has_value());
  EXPECT_FALSE(
      ParseChannelLine("h:1:2 [0] NCCL INFO Channel xx/0 : 0[0] -> 1[1] via P2P").has_value());
  EXPECT_FALSE(ParseChannelLine("").has_value());
}

TEST(SummariseTransportLogTest, TwoNodeIbFixture) {
  const TransportSummary summary = SummariseTransportLog(FixtureLines("info-log-2node-ib.txt"));
  EXPECT_EQ(summary.network, "IB");
  EXPECT_EQ(summary.channels.size(), 54u);
  EXPECT_EQ(summary.net_ib, 12);
  EXPECT_EQ(summary.net_ib_gdr, 12);
  EXPECT_EQ(summary.net_socket, 0);
  EXPECT_EQ(summary.intra_node, 42);
  // The first connection in the log: rank 0 receiving channel 0 from node 2.
  EXPECT_EQ(summary.channels[0].from_rank, 15);
  EXPECT_EQ(summary.channels[0].to_rank, 0);
  EXPECT_EQ(summary.channels[0].direction, "receive");
}

TEST(SummariseTransportLogTest, SocketFallbackFixture) {
  const TransportSummary summary = SummariseTransportLog(FixtureLines("info-log-socket.txt"));
  EXPECT_EQ(summary.network, "Socket");
  EXPECT_EQ(summary.net_ib, 0);
  EXPECT_EQ(summary.net_ib_gdr, 0);
  EXPECT_EQ(summary.net_socket, 8);
  EXPECT_EQ(summary.intra_node, 4);
  EXPECT_EQ(summary.channels.size(), 12u);
}

TEST(SummariseTransportLogTest, MixedGdrAndEmptyLog) {
  const TransportSummary mixed = SummariseTransportLog({
      "h:1:1 [0] NCCL INFO Using non-device net plugin version 0",
      "h:1:1 [0] NCCL INFO Using network IB",
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA",
      "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 2[0] [send] via NET/IB/0",
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via CollNet/x",
  });
  EXPECT_EQ(mixed.network, "IB");
  EXPECT_EQ(mixed.net_ib, 2);
  EXPECT_EQ(mixed.net_ib_gdr, 1);
  EXPECT_EQ(mixed.intra_node, 0);
  EXPECT_EQ(mixed.channels.size(), 3u);

  const TransportSummary empty = SummariseTransportLog({});
  EXPECT_EQ(empty.network, "");
  EXPECT_TRUE(empty.channels.empty());
}

// Captured on the first H200 (bench/gpu_check.sh, NCCL 2.28.3, one rank):
// NCCL 2.28 adds "NET/IB : Using [RO]; OOB eth0" when it finds no HCA, then
// "Failed to initialize NET plugin IB" and the Socket plugin; the 64
// "Channel NN/64 : 0" lines are a one-rank ring listing, not connections.
TEST(SummariseTransportLogTest, RealH200OneRankLogHasSocketNetworkAndNoConnection) {
  const TransportSummary summary = SummariseTransportLog(FixtureLines("info-log-h200-1rank.txt"));
  EXPECT_EQ(summary.network, "Socket");
  EXPECT_TRUE(summary.channels.empty());
  EXPECT_EQ(summary.net_ib, 0);
  EXPECT_EQ(summary.net_socket, 0);
  EXPECT_EQ(summary.intra_node, 0);
}

}  // namespace
}  // namespace clustercert::sweep
