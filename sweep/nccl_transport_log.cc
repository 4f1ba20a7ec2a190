#include "sweep/nccl_transport_log.h"

#include <cctype>

namespace clustercert::sweep {
namespace {

constexpr char kInfoMarker[] = "NCCL INFO ";

// The message part of an INFO line: NCCL prefixes "host:pid:tid [dev] NCCL
// INFO " and launchers may add their own ("[1,0]<stdout>:", "[0] "), so
// everything up to the marker is dropped. A bare message is accepted as is.
std::string InfoMessage(const std::string& line) {
  std::string message = line;
  const size_t marker = message.find(kInfoMarker);
  if (marker != std::string::npos) message = message.substr(marker + sizeof(kInfoMarker) - 1);
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
    message.pop_back();
  }
  return message;
}

// A small cursor over the message, so the grammar below reads in order.
class Cursor {
 public:
  explicit Cursor(const std::string& text) : text_(text) {}
  bool Literal(const std::string& expected) {
    if (text_.compare(position_, expected.size(), expected) != 0) return false;
    position_ += expected.size();
    return true;
  }
  void Spaces() {
    while (position_ < text_.size() && text_[position_] == ' ') ++position_;
  }
  bool Number(int& out) {
    size_t end = position_;
    long long value = 0;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) {
      value = value * 10 + (text_[end] - '0');
      if (value > 1'000'000'000) return false;
      ++end;
    }
    if (end == position_) return false;
    out = static_cast<int>(value);
    position_ = end;
    return true;
  }
  // "0[0]" (rank[nvml device]) or NCCL < 2.12's "0[1c000]" (rank[bus id]):
  // only the rank matters here.
  bool RankToken(int& rank) {
    if (!Number(rank)) return false;
    if (Literal("[")) {
      const size_t close = text_.find(']', position_);
      if (close == std::string::npos) return false;
      position_ = close + 1;
    }
    return true;
  }
  std::string Rest() const { return text_.substr(position_); }

 private:
  const std::string& text_;
  size_t position_ = 0;
};

}  // namespace

std::optional<ChannelTransport> ParseChannelLine(const std::string& line) {
  const std::string message = InfoMessage(line);
  Cursor cursor(message);
  // "Ring NN" is NCCL 2.3/2.4's name for what later releases call a channel.
  if (!cursor.Literal("Channel ") && !cursor.Literal("Ring ")) return std::nullopt;
  ChannelTransport channel;
  if (!cursor.Number(channel.channel)) return std::nullopt;
  if (cursor.Literal("/")) {
    int connection_index = 0;  // "Channel 00/1": the connection, not a new channel
    if (!cursor.Number(connection_index)) return std::nullopt;
  }
  cursor.Spaces();
  if (!cursor.Literal(":")) return std::nullopt;
  cursor.Spaces();
  if (!cursor.RankToken(channel.from_rank)) return std::nullopt;
  cursor.Spaces();
  if (!cursor.Literal("->")) return std::nullopt;
  cursor.Spaces();
  if (!cursor.RankToken(channel.to_rank)) return std::nullopt;
  cursor.Spaces();
  if (cursor.Literal("[send]")) {
    channel.direction = "send";
  } else if (cursor.Literal("[receive]")) {
    channel.direction = "receive";
  }
  cursor.Spaces();
  if (!cursor.Literal("via ")) return std::nullopt;
  channel.detail = cursor.Rest();
  if (channel.detail.empty()) return std::nullopt;

  const size_t first_slash = channel.detail.find('/');
  const std::string kind = channel.detail.substr(0, first_slash);
  if (kind == "NET" && first_slash != std::string::npos) {
    // The second part is the network's name (IB, Socket, IBext_v8, a
    // plugin's own name); the rest is the device index and flags.
    const size_t second_slash = channel.detail.find('/', first_slash + 1);
    channel.transport = channel.detail.substr(0, second_slash);
  } else {
    channel.transport = kind;
  }
  channel.gdrdma = channel.detail.find("/GDRDMA") != std::string::npos;
  return channel;
}

TransportSummary SummariseTransportLog(const std::vector<std::string>& lines) {
  TransportSummary summary;
  static const std::string kUsingNetwork = "Using network ";
  for (const std::string& line : lines) {
    const std::string message = InfoMessage(line);
    if (message.rfind(kUsingNetwork, 0) == 0) {
      // Every rank prints it; the first is as good as any (one job, one net).
      if (summary.network.empty()) summary.network = message.substr(kUsingNetwork.size());
      continue;
    }
    std::optional<ChannelTransport> channel = ParseChannelLine(line);
    if (!channel) continue;
    // IBext / IBext_v8 (the SHARP plugin's names) are InfiniBand too.
    if (channel->transport.rfind("NET/IB", 0) == 0) {
      ++summary.net_ib;
      if (channel->gdrdma) ++summary.net_ib_gdr;
    } else if (channel->transport == "NET/Socket") {
      ++summary.net_socket;
    } else if (channel->transport == "P2P" || channel->transport == "SHM") {
      ++summary.intra_node;
    }
    summary.channels.push_back(std::move(*channel));
  }
  return summary;
}

}  // namespace clustercert::sweep
