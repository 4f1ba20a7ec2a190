#include "agent/peer/tcp_server_endpoint.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/peer/tcp_path_mtu.h"

namespace clustercert::agent::peer {
namespace {

// A real client sends its header right after connecting, so a connection
// that stays silent this long is a stray, not one of the test's streams.
constexpr absl::Duration kHeaderWait = absl::Seconds(2);

}  // namespace

absl::StatusOr<std::unique_ptr<TcpServerEndpoint>> TcpServerEndpoint::Create(TcpTestOptions options,
                                                                             Clock& clock) {
  absl::StatusOr<SocketAddress> local = SocketAddress::FromLiteral(options.data_ip, 0);
  if (!local.ok()) return local.status();
  absl::StatusOr<TcpSocket> listener = TcpSocket::Listen(*local, clock);
  if (!listener.ok()) {
    return absl::Status(
        listener.status().code(),
        absl::StrCat("the tcp server cannot listen on data_ip ", options.data_ip, ": ",
                     listener.status().message(), "; is the address configured on this node?"));
  }
  absl::StatusOr<SocketAddress> bound = listener->LocalAddress();
  if (!bound.ok()) return bound.status();
  return std::unique_ptr<TcpServerEndpoint>(
      new TcpServerEndpoint(std::move(options), *bound, *std::move(listener), clock));
}

TcpServerEndpoint::TcpServerEndpoint(TcpTestOptions options, SocketAddress local,
                                     TcpSocket listener, Clock& clock)
    : options_(std::move(options)), clock_(clock), local_(local), listener_(std::move(listener)) {
  info_.set_address(options_.data_ip);
  info_.set_tcp_port(local_.port());
}

absl::Status TcpServerEndpoint::Connect(const v1::EndpointInfo& peer, absl::Time deadline) {
  absl::StatusOr<SocketAddress> address = SocketAddress::FromLiteral(peer.address(), 0);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the client's EndpointInfo address is invalid: ", address.status().message()));
  }
  client_ = *address;
  // The route back to the client, for mtu.path; the datagram goes to the
  // discard port, where nothing listens.
  absl::StatusOr<SocketAddress> from = SocketAddress::FromLiteral(local_.ip(), 0);
  absl::StatusOr<SocketAddress> to = SocketAddress::FromLiteral(peer.address(), kDiscardPort);
  if (from.ok() && to.ok()) path_mtu_ = ProbePathMtu(*from, *to);
  return absl::OkStatus();
}

absl::Status TcpServerEndpoint::AcceptStreams(absl::Time deadline,
                                              SteadyClock::time_point run_start) {
  const bool latency = options_.kind == TcpTestOptions::Kind::kLatency;
  forward_.resize(latency ? 0 : options_.streams);
  reverse_.resize(latency || !options_.bidirectional ? 0 : options_.streams);
  const size_t expected = latency ? 1 : forward_.size() + reverse_.size();
  size_t accepted = 0;
  std::string strays;
  while (accepted < expected) {
    absl::StatusOr<TcpSocket> socket = listener_.Accept(deadline, nullptr);
    if (absl::IsDeadlineExceeded(socket.status())) {
      return absl::DeadlineExceededError(absl::StrCat(
          "tcp server ", local_.ToString(), " waited ",
          FormatSeconds(SteadyClock::now() - run_start), " for client ", client_->ip(), ": ",
          accepted, " of ", expected, " streams connected before the deadline", strays,
          "; check that the client ran Connect and that nothing filters port ", local_.port()));
    }
    if (!socket.ok()) {
      return absl::Status(socket.status().code(),
                          absl::StrCat("tcp server ", local_.ToString(),
                                       " cannot accept: ", socket.status().message()));
    }
    absl::StatusOr<SocketAddress> from = socket->PeerAddress();
    if (!from.ok()) continue;  // already gone
    if (!from->SameIp(*client_)) {
      absl::StrAppend(&strays, "; dropped a connection from ", from->ToString(), " (the client is ",
                      client_->ip(), ")");
      continue;
    }
    std::array<uint8_t, StreamHeader::kSize> bytes{};
    absl::StatusOr<size_t> got = socket->ReceiveExact(
        bytes.data(), bytes.size(), std::min(deadline, clock_.Now() + kHeaderWait), nullptr);
    absl::StatusOr<StreamHeader> header = got.ok() && *got == bytes.size()
                                              ? StreamHeader::Decode(bytes)
                                              : absl::InvalidArgumentError("no header arrived");
    if (!header.ok()) {
      absl::StrAppend(&strays, "; dropped a connection from ", from->ToString(), " (",
                      header.status().message(), ")");
      continue;
    }
    std::vector<std::optional<Stream>>* slots = nullptr;
    if (header->kind == StreamKind::kForward && !latency) slots = &forward_;
    if (header->kind == StreamKind::kReverse && !latency) slots = &reverse_;
    const bool kind_ok =
        latency ? header->kind == StreamKind::kPingPong : slots != nullptr && !slots->empty();
    const size_t count = latency ? 1 : options_.streams;
    if (!kind_ok || header->count != count || header->message_bytes != options_.message_bytes ||
        header->index >= count || header->bidirectional != options_.bidirectional) {
      return absl::FailedPreconditionError(absl::StrCat(
          "client ", from->ToString(), " opened a ", StreamKindName(header->kind), " stream (",
          header->index + 1, " of ", header->count, ", ", header->message_bytes, "-byte messages",
          header->bidirectional ? ", bidirectional" : "",
          ") that does not belong to this server's ", options_.test, " with ", count,
          count == 1 ? " stream" : " streams", " of ", options_.message_bytes, "-byte messages",
          options_.bidirectional ? ", bidirectional" : "",
          ": the controller must give both sides the same spec"));
    }
    socket->set_no_progress_limit(options_.no_progress);
    Stream stream{*std::move(socket), from->ToString()};
    if (latency) {
      if (absl::Status nodelay = stream.socket.SetNoDelay(); !nodelay.ok()) return nodelay;
      ping_pong_ = std::move(stream);
    } else {
      std::optional<Stream>& slot = (*slots)[header->index];
      if (slot.has_value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "client ", from->ToString(), " opened stream ", header->index + 1, " twice"));
      }
      slot = std::move(stream);
    }
    ++accepted;
  }
  listener_ = TcpSocket();  // nobody else may join
  return absl::OkStatus();
}

absl::StatusOr<v1::PeerTestResult> TcpServerEndpoint::Run(absl::Time deadline) {
  if (!client_.has_value()) {
    return absl::FailedPreconditionError(
        "the tcp server ran before Connect: give it the client's EndpointInfo first");
  }
  if (absl::Status begun = BeginRun(options_, deadline, clock_.Now(), &ran_); !begun.ok()) {
    return begun;
  }
  const SteadyClock::time_point run_start = SteadyClock::now();
  RunProgress::Running running(progress_);
  if (absl::Status accepted = AcceptStreams(deadline, run_start); !accepted.ok()) return accepted;
  absl::StatusOr<v1::PeerTestResult> result = options_.kind == TcpTestOptions::Kind::kLatency
                                                  ? RunEcho(deadline, run_start)
                                                  : RunBandwidth(deadline, run_start);
  if (result.ok()) *result->mutable_path_mtu() = path_mtu_;
  // Close now, not at destruction, so the client sees the end at once.
  forward_.clear();
  reverse_.clear();
  ping_pong_.reset();
  return result;
}

absl::StatusOr<v1::PeerTestResult> TcpServerEndpoint::RunBandwidth(
    absl::Time deadline, SteadyClock::time_point run_start) {
  std::vector<Stream*> forward, reverse;
  for (std::optional<Stream>& stream : forward_) forward.push_back(&*stream);
  for (std::optional<Stream>& stream : reverse_) reverse.push_back(&*stream);
  absl::StatusOr<BandwidthTallies> tallies = RunBandwidthStreams(
      options_, /*client=*/false, forward, reverse, deadline, run_start, progress_.counter());
  if (!tallies.ok()) return tallies.status();
  const std::vector<StreamTally>& received = tallies->forward;
  if (absl::Status whole = CheckReceived(options_, received, "client->server"); !whole.ok()) {
    return whole;
  }
  const StreamTally total = Sum(received);
  v1::PeerTestResult result;
  result.set_role("server");
  result.set_memory_path("host");
  *result.mutable_bandwidth() = BandwidthOf(options_, total.bytes, total.last - total.first);
  // Each stream's own rate, so one flow's share shows against the aggregate.
  for (const StreamTally& stream : received) {
    const double seconds = std::chrono::duration<double>(stream.last - stream.first).count();
    result.add_stream_gbps(seconds > 0 ? static_cast<double>(stream.bytes) * 8 / seconds / 1e9 : 0);
  }
  result.set_detail(
      absl::StrCat(StreamCount(options_), ", receiver side (client->server)",
                   options_.bidirectional ? "; the client's result has server->client" : ""));
  return result;
}

absl::StatusOr<v1::PeerTestResult> TcpServerEndpoint::RunEcho(absl::Time deadline,
                                                              SteadyClock::time_point run_start) {
  absl::StatusOr<AlignedBuffer> scratch = AlignedBuffer::Allocate(options_.message_bytes);
  if (!scratch.ok()) return scratch.status();
  std::atomic<bool> stop{false};
  absl::StatusOr<uint64_t> echoed =
      EchoStream(ping_pong_->socket, *scratch, options_.message_bytes, deadline, stop);
  if (!echoed.ok()) {
    return StreamFailure(echoed.status(), ping_pong_->peer, run_start, "the ping-pong stream");
  }
  if (options_.duration == absl::ZeroDuration() && *echoed != options_.iterations) {
    return absl::DataLossError(absl::StrCat(
        "client ", ping_pong_->peer, " stopped after ", *echoed, " of ", options_.iterations,
        " ping-pong messages: it was prepared with a different spec or stopped early"));
  }
  v1::PeerTestResult result;
  result.set_role("server");
  result.set_memory_path("host");
  result.set_detail(absl::StrCat("tcp, 1 stream, echo side: ", *echoed, " ", options_.message_bytes,
                                 "-byte messages echoed"));
  return result;
}

}  // namespace clustercert::agent::peer
