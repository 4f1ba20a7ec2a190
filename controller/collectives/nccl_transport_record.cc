#include "controller/collectives/nccl_transport_record.h"

#include "absl/strings/str_cat.h"
#include "sweep/nccl_transport_log.h"

namespace clustercert::controller {

void AddTransportLog(const std::vector<std::string>& lines, const std::string& label,
                     v1::CollectiveTransport& record) {
  sweep::TransportSummary summary = sweep::SummariseTransportLog(lines);
  if (record.network().empty()) record.set_network(summary.network);
  record.set_net_ib_channels(record.net_ib_channels() + summary.net_ib);
  record.set_net_ib_gdr_channels(record.net_ib_gdr_channels() + summary.net_ib_gdr);
  record.set_net_socket_channels(record.net_socket_channels() + summary.net_socket);
  record.set_intra_node_channels(record.intra_node_channels() + summary.intra_node);
  for (const sweep::ChannelTransport& channel : summary.channels) {
    record.add_channels(absl::StrCat(label, label.empty() ? "" : ": ", "channel ", channel.channel,
                                     " ", channel.from_rank, "->", channel.to_rank,
                                     channel.direction.empty() ? "" : " " + channel.direction,
                                     " via ", channel.detail));
  }
}

std::string NcclTransportName(const v1::CollectiveTransport& record) {
  if (record.net_socket_channels() > 0) return "NET/Socket";
  if (record.net_ib_channels() > 0) {
    return record.net_ib_gdr_channels() == record.net_ib_channels() ? "NET/IB+GDRDMA" : "NET/IB";
  }
  if (record.intra_node_channels() > 0) return "intra-node";
  return "";
}

}  // namespace clustercert::controller
