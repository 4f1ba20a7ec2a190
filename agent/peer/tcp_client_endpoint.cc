#include "agent/peer/tcp_client_endpoint.h"

#include <array>
#include <atomic>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/peer/run_shape.h"
#include "agent/peer/tcp_path_mtu.h"

namespace clustercert::agent::peer {

TcpClientEndpoint::TcpClientEndpoint(TcpTestOptions options, SocketAddress local, Clock& clock)
    : options_(std::move(options)), clock_(clock), local_(local) {
  info_.set_address(options_.data_ip);
}

absl::StatusOr<Stream> TcpClientEndpoint::Open(const SocketAddress& server, StreamKind kind,
                                               size_t index, size_t count, absl::Time deadline) {
  const std::string which = absl::StrCat(
      kind == StreamKind::kReverse ? "reverse stream " : "stream ", index + 1, " of ", count);
  absl::StatusOr<TcpSocket> socket = TcpSocket::Connect(local_, server, deadline, clock_);
  if (absl::IsDeadlineExceeded(socket.status())) {
    return absl::DeadlineExceededError(absl::StrCat(
        "tcp client ", local_.ip(), " could not connect to ", server.ToString(), " (", which,
        ") before the deadline: check the route between the two data-plane addresses and "
        "any firewall on port ",
        server.port()));
  }
  if (!socket.ok()) {
    return absl::Status(
        socket.status().code(),
        absl::StrCat("tcp client ", local_.ip(), " cannot connect to ", server.ToString(), " (",
                     which, "): ", socket.status().message(),
                     "; check that the server endpoint is prepared and "
                     "that nothing filters port ",
                     server.port()));
  }
  socket->set_no_progress_limit(options_.no_progress);
  if (kind == StreamKind::kPingPong) {
    if (absl::Status nodelay = socket->SetNoDelay(); !nodelay.ok()) return nodelay;
  }
  StreamHeader header;
  header.kind = kind;
  header.index = static_cast<uint16_t>(index);
  header.count = static_cast<uint16_t>(count);
  header.message_bytes = static_cast<uint32_t>(options_.message_bytes);
  header.bidirectional = options_.bidirectional;
  const std::array<uint8_t, StreamHeader::kSize> bytes = header.Encode();
  if (absl::Status sent = socket->SendAll(bytes.data(), bytes.size(), deadline, nullptr);
      !sent.ok()) {
    return absl::Status(
        sent.code(), absl::StrCat("tcp client ", local_.ip(), " cannot send the header of ", which,
                                  " to ", server.ToString(), ": ", sent.message()));
  }
  return Stream{*std::move(socket), server.ToString()};
}

absl::Status TcpClientEndpoint::Connect(const v1::EndpointInfo& peer, absl::Time deadline) {
  if (connected_) {
    return absl::FailedPreconditionError("this tcp client is already connected");
  }
  if (peer.tcp_port() == 0 || peer.tcp_port() > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the server's EndpointInfo has tcp_port ", peer.tcp_port(),
        ", outside 1..65535: pass the local_info() of an endpoint prepared with role server"));
  }
  absl::StatusOr<SocketAddress> server =
      SocketAddress::FromLiteral(peer.address(), static_cast<uint16_t>(peer.tcp_port()));
  if (!server.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the server's EndpointInfo address is invalid: ", server.status().message()));
  }
  if (server->family() != local_.family()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the server's address ", server->ip(), " and data_ip ", local_.ip(),
        " are of different IP versions: give both sides addresses of the same data plane"));
  }
  // Before the data: a failed or stalled run returns no result to carry it.
  // The DF datagram goes to the server's port number over UDP, where
  // nothing listens.
  if (absl::StatusOr<SocketAddress> from = SocketAddress::FromLiteral(local_.ip(), 0); from.ok()) {
    path_mtu_ = ProbePathMtu(*from, *server);
  }
  absl::Status opened = OpenAll(*server, deadline);
  if (!opened.ok()) {
    // Close what did open, so the server does not wait on half a test.
    forward_.clear();
    reverse_.clear();
    ping_pong_.reset();
    return opened;
  }
  connected_ = true;
  return absl::OkStatus();
}

absl::Status TcpClientEndpoint::OpenAll(const SocketAddress& server, absl::Time deadline) {
  if (options_.kind == TcpTestOptions::Kind::kLatency) {
    absl::StatusOr<Stream> stream = Open(server, StreamKind::kPingPong, 0, 1, deadline);
    if (!stream.ok()) return stream.status();
    ping_pong_ = *std::move(stream);
    return absl::OkStatus();
  }
  for (uint32_t i = 0; i < options_.streams; ++i) {
    absl::StatusOr<Stream> stream =
        Open(server, StreamKind::kForward, i, options_.streams, deadline);
    if (!stream.ok()) return stream.status();
    forward_.push_back(*std::move(stream));
  }
  for (uint32_t i = 0; options_.bidirectional && i < options_.streams; ++i) {
    absl::StatusOr<Stream> stream =
        Open(server, StreamKind::kReverse, i, options_.streams, deadline);
    if (!stream.ok()) return stream.status();
    reverse_.push_back(*std::move(stream));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::PeerTestResult> TcpClientEndpoint::Run(absl::Time deadline) {
  if (!connected_) {
    return absl::FailedPreconditionError(
        "the tcp client ran without connected streams: Connect it to the server's EndpointInfo "
        "first");
  }
  if (absl::Status begun = BeginRun(options_, deadline, clock_.Now(), &ran_); !begun.ok()) {
    return begun;
  }
  const SteadyClock::time_point run_start = SteadyClock::now();
  RunProgress::Running running(progress_);
  absl::StatusOr<v1::PeerTestResult> result = options_.kind == TcpTestOptions::Kind::kLatency
                                                  ? RunPingPong(deadline, run_start)
                                                  : RunBandwidth(deadline, run_start);
  forward_.clear();
  reverse_.clear();
  ping_pong_.reset();
  if (result.ok()) *result->mutable_path_mtu() = path_mtu_;
  return result;
}

absl::StatusOr<v1::PeerTestResult> TcpClientEndpoint::RunBandwidth(
    absl::Time deadline, SteadyClock::time_point run_start) {
  std::vector<Stream*> forward, reverse;
  for (Stream& stream : forward_) forward.push_back(&stream);
  for (Stream& stream : reverse_) reverse.push_back(&stream);
  absl::StatusOr<BandwidthTallies> tallies = RunBandwidthStreams(
      options_, /*client=*/true, forward, reverse, deadline, run_start, progress_.counter());
  if (!tallies.ok()) return tallies.status();
  const std::vector<StreamTally>& sent = tallies->forward;
  const std::vector<StreamTally>& received = tallies->reverse;
  v1::PeerTestResult result;
  result.set_role("client");
  result.set_memory_path("host");
  const StreamTally out = Sum(sent);
  if (options_.bidirectional) {
    if (absl::Status whole = CheckReceived(options_, received, "server->client"); !whole.ok()) {
      return whole;
    }
    const StreamTally in = Sum(received);
    *result.mutable_bandwidth() = BandwidthOf(options_, in.bytes, in.last - in.first);
    result.set_detail(absl::StrCat(StreamCount(options_),
                                   ", receiver side (server->client); the server's result has "
                                   "client->server, where the server confirmed ",
                                   out.bytes, " bytes"));
  } else {
    *result.mutable_bandwidth() = BandwidthOf(options_, out.bytes, out.last - tallies->plan_start);
    result.set_detail(absl::StrCat(StreamCount(options_),
                                   ", sender side; the server's receiver-side result is "
                                   "authoritative (it confirmed ",
                                   out.bytes, " bytes)"));
  }
  return result;
}

absl::StatusOr<v1::PeerTestResult> TcpClientEndpoint::RunPingPong(
    absl::Time deadline, SteadyClock::time_point run_start) {
  absl::StatusOr<AlignedBuffer> message = AlignedBuffer::Allocate(options_.message_bytes);
  if (!message.ok()) return message.status();
  absl::StatusOr<AlignedBuffer> scratch = AlignedBuffer::Allocate(options_.message_bytes);
  if (!scratch.ok()) return scratch.status();
  const SendPlan plan{options_.message_bytes, options_.iterations, options_.duration,
                      SteadyClock::now()};
  std::atomic<bool> stop{false};
  absl::StatusOr<std::vector<double>> rtt_us = PingPongStream(
      ping_pong_->socket, *message, *scratch, plan, kMaxLatencySamples, deadline, stop);
  if (!rtt_us.ok()) {
    return StreamFailure(rtt_us.status(), ping_pong_->peer, run_start, "the ping-pong stream");
  }
  const size_t samples = rtt_us->size();
  const bool one_way = options_.test != "read_lat";
  v1::PeerTestResult result;
  result.set_role("client");
  result.set_memory_path("host");
  *result.mutable_latency() = LatencyOf(options_, *std::move(rtt_us));
  result.set_detail(
      absl::StrCat("tcp, 1 stream, ", options_.message_bytes, "-byte ping-pong with TCP_NODELAY, ",
                   one_way ? "one-way = RTT/2" : "round trip", ", ", samples, " samples",
                   samples >= kMaxLatencySamples ? " (stopped at the sample limit)" : ""));
  return result;
}

}  // namespace clustercert::agent::peer
