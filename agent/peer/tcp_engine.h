#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/peer_endpoint.h"
#include "agent/peer/run_shape.h"
#include "clustercert/v1/peer.pb.h"
#include "common/clock.h"

namespace clustercert::agent::peer {

// A PeerTestSpec checked and completed for the tcp engine. Zero (proto3's
// "unset") takes perftest's default: message_bytes 65,536 for bandwidth and
// 2 for latency, 1 stream, 1,000 iterations when duration_s is 0 too.
// The run's shape (streams, duration or iterations, no-progress limit,
// bidirectional) is the RunShape base: see run_shape.h.
struct TcpTestOptions : RunShape {
  static constexpr uint64_t kMaxMessageBytes = uint64_t{64} << 20;

  enum class Kind { kBandwidth, kLatency };

  std::string test;  // as in the spec: write_bw, send_lat, ...
  Kind kind = Kind::kBandwidth;
  bool server = false;
  std::string data_ip;
  uint64_t message_bytes = 0;

  // InvalidArgument naming the field, the value and the allowed range.
  static absl::StatusOr<TcpTestOptions> FromSpec(const v1::PeerTestSpec& spec);
};

// Peer tests over plain TCP between two data-plane addresses: the fallback
// where RDMA is absent, and a baseline for it. write_bw, send_bw and read_bw
// all measure stream bandwidth from client to server (TCP has no one-sided
// read); the *_lat tests measure ping-pong latency on one stream with
// TCP_NODELAY and report one-way = RTT/2 (read_lat: the RTT, as perftest).
//
// Server (role "server"): Prepare binds a listening socket on data_ip, port 0,
// and publishes {address, tcp_port}; Connect only records the client's
// address; Run accepts the client's streams and receives (or echoes).
// Client (role "client"): Prepare touches no network; Connect opens the
// streams from data_ip; Run sends, one thread per stream.
//
// Results: for bandwidth the receiver's figure is authoritative (bytes from
// its first received byte to the last end of stream, like iperf3's receiver
// line). Unidirectional: the server's result is the receiver figure and the
// client's is the sender figure (start to the receiver's confirmation).
// Bidirectional: each side reports the direction it receives; the pair's
// figure is the sum of both results. Latency: the client's result.
//
// Every wait is bounded by the Connect/Run deadline; a vanished peer is
// Unavailable, an overrun DeadlineExceeded. Deadlines and no-progress limits
// are judged on the engine's clock (the agent passes RealClock()). An
// endpoint owns its sockets and buffers; destroy it only after Run has
// returned.
class TcpEngine : public PeerEngine {
 public:
  // On the wall clock, for tools and tests that keep no other.
  TcpEngine() : TcpEngine(RealClock()) {}
  // `clock` must outlive the engine and its endpoints.
  explicit TcpEngine(Clock& clock) : clock_(clock) {}

  absl::StatusOr<std::unique_ptr<PeerEndpoint>> Prepare(const v1::PeerTestSpec& spec) override;

 private:
  Clock& clock_;
};

}  // namespace clustercert::agent::peer
