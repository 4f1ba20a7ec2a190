#pragma once

// Which transport NCCL chose, read from its INFO log (NCCL_DEBUG=INFO):
// lines such as
//   node1:2811:2840 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] [send] via NET/IB/0/GDRDMA
//   node1:2811:2840 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] via P2P/CUMEM/read
//   node1:2811:2840 [0] NCCL INFO Channel 00/0 : 3[3] -> 0[0] [receive] via NET/Socket/0
//   node1:2811:2811 [0] NCCL INFO Using network IB
// so the certificate can say NET/IB (+GDRDMA) versus NET/Socket per channel.

#include <optional>
#include <string>
#include <vector>

namespace clustercert::sweep {

struct ChannelTransport {
  int channel = 0;
  int from_rank = 0;
  int to_rank = 0;
  std::string direction;  // send | receive | "" (intra-node lines have none)
  std::string transport;  // "NET/IB", "NET/Socket", "P2P", "SHM", "COLLNET", as NCCL names it
                          // (first two parts for NET)
  bool gdrdma = false;    // NET/IB/.../GDRDMA
  std::string detail;     // the text after "via ", verbatim
};

std::optional<ChannelTransport> ParseChannelLine(const std::string& line);

struct TransportSummary {
  std::string network;  // from "Using network X" ("IB", "Socket"); "" when absent
  std::vector<ChannelTransport> channels;
  int net_ib = 0;      // channels over NET/IB
  int net_ib_gdr = 0;  // of which with GDRDMA
  int net_socket = 0;
  int intra_node = 0;  // P2P / SHM
};

TransportSummary SummariseTransportLog(const std::vector<std::string>& lines);

}  // namespace clustercert::sweep
