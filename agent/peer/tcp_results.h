#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/peer/tcp_engine.h"
#include "agent/peer/tcp_socket.h"
#include "agent/peer/tcp_streams.h"
#include "clustercert/v1/peer.pb.h"

// What the tcp server and client endpoints share: turning stream tallies into
// PeerTestResult figures (perftest's arithmetic) and stream failures into
// sentences that name the peer, the stream and how far the run got.
namespace clustercert::agent::peer {

// Receivers read in chunks this large whatever the message size: fewer
// system calls, and TCP keeps no message boundaries anyway.
inline constexpr size_t kReceiveChunkBytes = 512 * 1024;

// One connection of a test, with the peer's "ip:port" for messages.
struct Stream {
  TcpSocket socket;
  std::string peer;
};

// "1.2 s".
std::string FormatSeconds(SteadyClock::duration elapsed);
// "stream 3 of 8, sending".
std::string StreamName(size_t index, size_t count, absl::string_view doing);
// "tcp, 8 streams" or "tcp, 8 streams each way, bidirectional".
std::string StreamCount(const TcpTestOptions& options);

// Puts a stream's clause-level failure into a sentence; keeps the code.
absl::Status StreamFailure(const absl::Status& status, absl::string_view peer,
                           SteadyClock::time_point run_start, absl::string_view stream);

// The bytes of one direction and its span, earliest `first` to latest `last`.
StreamTally Sum(const std::vector<StreamTally>& tallies);

// Receivers check what they got: whole messages and, in iterations mode, the
// exact count, so a sender that stopped early is not taken for a short test.
absl::Status CheckReceived(const TcpTestOptions& options, const std::vector<StreamTally>& tallies,
                           absl::string_view direction);

// DeadlineExceeded at once when duration_s cannot end between `now` and
// `deadline`, rather than running into it.
absl::Status CheckDurationFits(const TcpTestOptions& options, absl::Time deadline, absl::Time now);

// The checks both endpoints make as Run starts (at `now`, on the endpoint's
// clock): an endpoint runs once (`ran` is set), and the test must fit before
// `deadline`.
absl::Status BeginRun(const TcpTestOptions& options, absl::Time deadline, absl::Time now,
                      bool* ran);

// What one side's bandwidth streams counted: forward (client->server) and,
// when bidirectional, reverse, with the moment the send plan started.
struct BandwidthTallies {
  std::vector<StreamTally> forward;
  std::vector<StreamTally> reverse;
  SteadyClock::time_point plan_start;
};

// One side of a bandwidth test, the core both endpoints share: the forward
// streams from one thread (one poll loop drives them all: SendStreams on the
// client, ReceiveStreams on the server) and each reverse stream of a
// bidirectional test on a thread of its own, the other way. The first failure
// stops the rest and comes back as a sentence naming the peer and stream;
// `moved` counts the forward bytes as they go.
absl::StatusOr<BandwidthTallies> RunBandwidthStreams(const TcpTestOptions& options, bool client,
                                                     const std::vector<Stream*>& forward,
                                                     const std::vector<Stream*>& reverse,
                                                     absl::Time deadline,
                                                     SteadyClock::time_point run_start,
                                                     std::atomic<uint64_t>* moved);

v1::BandwidthStats BandwidthOf(const TcpTestOptions& options, uint64_t bytes,
                               SteadyClock::duration elapsed);
// From round trips: one-way = RTT/2 for write/send, the RTT for read (perftest).
v1::LatencyStats LatencyOf(const TcpTestOptions& options, std::vector<double> rtt_us);

}  // namespace clustercert::agent::peer
