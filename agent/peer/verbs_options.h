#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/memory_provider.h"
#include "agent/peer/run_shape.h"
#include "clustercert/v1/peer.pb.h"

namespace clustercert::agent::peer {

// A PeerTestSpec checked and completed for the verbs engine. Zero (proto3's
// "unset") takes perftest's default: port 1; message_bytes 65,536 for
// bandwidth and 2 for latency; queue_depth (tx depth) 128; 1 QP; 5,000
// iterations for write_bw and 1,000 for the others when duration_s is 0 too.
// The run's shape (streams = RC QPs, duration or iterations per QP, the
// no-progress limit watched by RunWatch, bidirectional) is the RunShape base.
struct VerbsTestOptions : RunShape {
  static constexpr uint32_t kMaxPort = 2;
  static constexpr uint32_t kMaxGidIndex = 255;
  static constexpr uint64_t kMaxBandwidthMessageBytes = uint64_t{64} << 20;
  static constexpr uint64_t kMaxLatencyMessageBytes = uint64_t{64} << 10;
  static constexpr uint32_t kMaxQueueDepth = 4096;
  static constexpr uint32_t kMaxTrafficClass = 255;  // the GRH's 8-bit field
  static constexpr uint32_t kMaxServiceLevel = 15;   // the LRH's 4-bit SL

  enum class Kind { kBandwidth, kLatency };
  // The verb that moves the data.
  enum class Operation { kWrite, kSend, kRead };

  std::string test;  // as in the spec: write_bw, send_lat, ...
  Kind kind = Kind::kBandwidth;
  Operation operation = Operation::kWrite;
  bool server = false;
  std::string device;
  uint32_t port = 1;
  uint32_t gid_index = 0;
  uint32_t traffic_class = 0;  // RoCE GRH traffic class
  uint32_t service_level = 0;  // InfiniBand SL
  MemorySpec memory;
  uint64_t message_bytes = 0;
  uint32_t queue_depth = 128;  // work requests in flight per QP (bandwidth)

  // InvalidArgument naming the field, the value and the allowed range.
  static absl::StatusOr<VerbsTestOptions> FromSpec(const v1::PeerTestSpec& spec);

  bool latency() const { return kind == Kind::kLatency; }
  bool duration_mode() const { return duration > absl::ZeroDuration(); }
  // Whether this side posts the measured operations: the client, and both
  // sides of a bidirectional bandwidth test.
  bool sends() const { return !server || bidirectional; }
  // Work requests in flight per QP: queue_depth for bandwidth; a latency
  // ping-pong has one (perftest's tx depth 1).
  uint32_t tx_depth() const { return latency() ? 1 : queue_depth; }
};

// The pair's path MTU: the smaller of the two ports' active MTUs, in bytes.
absl::StatusOr<ibv_mtu> PathMtu(uint32_t local_bytes, uint32_t peer_bytes);

// ibv_port_attr::link_layer as ibv_devinfo names it: "InfiniBand" (also for
// the UNSPECIFIED of older drivers), "Ethernet", else "Unknown (N)".
std::string LinkLayerName(uint8_t link_layer);

}  // namespace clustercert::agent::peer
