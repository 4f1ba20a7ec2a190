#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/tcp_socket.h"

// The tcp engine's wire protocol and the per-stream loops that speak it.
//
// Every connection is opened by the client and starts with a 16-byte
// StreamHeader (magic "CCTP", version, kind, stream index and count, flags,
// message size; big-endian) so the server can tell this test's streams from strays and
// check that both sides were prepared with the same spec. After the header:
//   kForward  client sends whole messages, then shuts down its write side;
//             the server reads to end of stream and answers with the byte
//             count it received (8 bytes, big-endian); the client checks it.
//   kReverse  the same with the roles swapped (the bidirectional half).
//   kPingPong client sends one message, the server echoes it; repeated; the
//             client ends with a write shutdown at a message boundary.
namespace clustercert::agent::peer {

using SteadyClock = std::chrono::steady_clock;

enum class StreamKind : uint8_t { kForward = 0, kReverse = 1, kPingPong = 2 };
// "forward", "reverse", "ping-pong".
const char* StreamKindName(StreamKind kind);

struct StreamHeader {
  static constexpr uint32_t kMagic = 0x43435450;  // "CCTP"
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kSize = 16;

  StreamKind kind = StreamKind::kForward;
  uint16_t index = 0;  // 0-based within its kind
  uint16_t count = 0;  // streams of this kind in the test
  uint32_t message_bytes = 0;
  bool bidirectional = false;  // flags bit 0

  std::array<uint8_t, kSize> Encode() const;
  // InvalidArgument for a wrong magic, version or kind (not one of ours).
  static absl::StatusOr<StreamHeader> Decode(const std::array<uint8_t, kSize>& bytes);
};

// A page-aligned buffer, touched once at allocation so page faults are not
// measured; reused for every message.
class AlignedBuffer {
 public:
  static absl::StatusOr<AlignedBuffer> Allocate(size_t size);

  char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// When a sending loop stops: once `duration` has passed since `start`, or,
// when `duration` is zero, after `iterations` messages.
struct SendPlan {
  uint64_t message_bytes = 0;
  uint64_t iterations = 0;
  absl::Duration duration = absl::ZeroDuration();
  SteadyClock::time_point start;
};

// What one stream moved and when. Senders: `first` is the plan start and
// `last` the arrival of the receiver's count. Receivers: `first` is the first
// byte and `last` the end of stream.
struct StreamTally {
  uint64_t bytes = 0;
  uint64_t messages = 0;
  SteadyClock::time_point first;
  SteadyClock::time_point last;
};

// The sender of a kForward/kReverse stream. DataLoss if the receiver counted
// a different number of bytes.
// `moved`, when given, is advanced as bytes go out so a progress query can
// read the running total while the test runs.
absl::StatusOr<StreamTally> SendStream(TcpSocket& socket, const AlignedBuffer& message,
                                       const SendPlan& plan, absl::Time deadline,
                                       const std::atomic<bool>& stop,
                                       std::atomic<uint64_t>* moved = nullptr);

// The receiver of a kForward/kReverse stream; `scratch` is its read buffer.
absl::StatusOr<StreamTally> ReceiveStream(TcpSocket& socket, const AlignedBuffer& scratch,
                                          absl::Time deadline, const std::atomic<bool>& stop,
                                          std::atomic<uint64_t>* moved = nullptr);

// The same for several streams from one thread, with poll(): on a host with
// few cores a thread per stream spends its time switching (iperf3 also drives
// all its streams from one thread). `tallies` gets one entry per socket; on
// failure `failed` names the stream, and the status says what happened.
// Deadline and no-progress decisions read the sockets' clock.
absl::Status SendStreams(const std::vector<TcpSocket*>& sockets, const AlignedBuffer& message,
                         const SendPlan& plan, absl::Time deadline, const std::atomic<bool>& stop,
                         std::atomic<uint64_t>* moved, std::vector<StreamTally>* tallies,
                         size_t* failed);
absl::Status ReceiveStreams(const std::vector<TcpSocket*>& sockets, const AlignedBuffer& scratch,
                            absl::Time deadline, const std::atomic<bool>& stop,
                            std::atomic<uint64_t>* moved, std::vector<StreamTally>* tallies,
                            size_t* failed);

// The server side of kPingPong: echoes `message_bytes`-byte messages until
// the client shuts down; returns the messages echoed.
absl::StatusOr<uint64_t> EchoStream(TcpSocket& socket, const AlignedBuffer& scratch,
                                    uint64_t message_bytes, absl::Time deadline,
                                    const std::atomic<bool>& stop);

// The client side of kPingPong: round-trip times in microseconds, at most
// `max_samples` of them.
absl::StatusOr<std::vector<double>> PingPongStream(TcpSocket& socket, const AlignedBuffer& message,
                                                   const AlignedBuffer& scratch,
                                                   const SendPlan& plan, size_t max_samples,
                                                   absl::Time deadline,
                                                   const std::atomic<bool>& stop);

// Runs every task on its own thread and joins them all. The first failure
// sets `stop` (so the others give up within TcpSocket::kStopCheckInterval)
// and is returned.
absl::Status RunInParallel(std::vector<std::function<absl::Status()>> tasks,
                           std::atomic<bool>& stop);

}  // namespace clustercert::agent::peer
