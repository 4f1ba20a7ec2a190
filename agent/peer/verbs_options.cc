#include "agent/peer/verbs_options.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/run_shape.h"
#include "common/ib_mtu.h"

namespace clustercert::agent::peer {
namespace {

constexpr uint64_t kDefaultBandwidthBytes = 65536;
constexpr uint64_t kDefaultLatencyBytes = 2;
constexpr uint32_t kDefaultQueueDepth = 128;
constexpr uint64_t kDefaultIterations = 1000;
constexpr uint64_t kDefaultWriteBwIterations = 5000;

struct TestKind {
  const char* name;
  VerbsTestOptions::Kind kind;
  VerbsTestOptions::Operation operation;
};

constexpr TestKind kTests[] = {
    {"write_bw", VerbsTestOptions::Kind::kBandwidth, VerbsTestOptions::Operation::kWrite},
    {"send_bw", VerbsTestOptions::Kind::kBandwidth, VerbsTestOptions::Operation::kSend},
    {"read_bw", VerbsTestOptions::Kind::kBandwidth, VerbsTestOptions::Operation::kRead},
    {"write_lat", VerbsTestOptions::Kind::kLatency, VerbsTestOptions::Operation::kWrite},
    {"send_lat", VerbsTestOptions::Kind::kLatency, VerbsTestOptions::Operation::kSend},
    {"read_lat", VerbsTestOptions::Kind::kLatency, VerbsTestOptions::Operation::kRead},
};

}  // namespace

absl::StatusOr<VerbsTestOptions> VerbsTestOptions::FromSpec(const v1::PeerTestSpec& spec) {
  VerbsTestOptions options;
  if (!spec.engine().empty() && spec.engine() != "verbs") {
    return absl::InvalidArgumentError(absl::StrCat("engine \"", spec.engine(),
                                                   "\" was given to the verbs engine, which runs "
                                                   "only engine \"verbs\""));
  }
  const auto* test = std::find_if(std::begin(kTests), std::end(kTests),
                                  [&](const TestKind& kind) { return spec.test() == kind.name; });
  if (test == std::end(kTests)) {
    return absl::InvalidArgumentError(absl::StrCat("test \"", spec.test(),
                                                   "\" is not one of write_bw, send_bw, read_bw, "
                                                   "write_lat, send_lat, read_lat"));
  }
  options.test = spec.test();
  options.kind = test->kind;
  options.operation = test->operation;
  if (spec.role() != "server" && spec.role() != "client") {
    return absl::InvalidArgumentError(
        absl::StrCat("role \"", spec.role(), "\" is neither server nor client"));
  }
  options.server = spec.role() == "server";

  if (spec.device().empty()) {
    return absl::InvalidArgumentError(
        "device is empty: name the RDMA device to test, as `ibv_devices` lists it (e.g. mlx5_0)");
  }
  options.device = spec.device();
  options.port = spec.port() == 0 ? 1 : spec.port();
  if (options.port > kMaxPort) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", spec.port(), " of ", spec.device(), " is outside 1..", kMaxPort));
  }
  if (spec.gid_index() > kMaxGidIndex) {
    return absl::InvalidArgumentError(
        absl::StrCat("gid_index ", spec.gid_index(), " is outside 0..", kMaxGidIndex));
  }
  options.gid_index = spec.gid_index();
  if (spec.traffic_class() > kMaxTrafficClass) {
    return absl::InvalidArgumentError(absl::StrCat(
        "traffic_class ", spec.traffic_class(), " is outside 0..", kMaxTrafficClass,
        " (the RoCE GRH traffic class: DSCP << 2 | ECN bits, e.g. 106 for DSCP 26 with ECN)"));
  }
  options.traffic_class = spec.traffic_class();
  if (spec.service_level() > kMaxServiceLevel) {
    return absl::InvalidArgumentError(absl::StrCat("service_level ", spec.service_level(),
                                                   " is outside 0..", kMaxServiceLevel,
                                                   " (the InfiniBand SL)"));
  }
  options.service_level = spec.service_level();

  absl::StatusOr<MemorySpec> memory = MemorySpec::Parse(spec.memory());
  if (!memory.ok()) return memory.status();
  options.memory = *memory;

  const bool latency = options.latency();
  if (latency && options.operation == Operation::kWrite &&
      options.memory.kind != MemorySpec::Kind::kHost) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory ", options.memory.ToString(),
        " is not supported for write_lat, which polls the buffer's last byte from the CPU: use "
        "memory host, or send_lat / read_lat for GPU memory"));
  }

  options.message_bytes = spec.message_bytes();
  if (options.message_bytes == 0) {
    options.message_bytes = latency ? kDefaultLatencyBytes : kDefaultBandwidthBytes;
  }
  const uint64_t max_bytes = latency ? kMaxLatencyMessageBytes : kMaxBandwidthMessageBytes;
  if (options.message_bytes > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("message_bytes ", spec.message_bytes(), " is outside 1..", max_bytes,
                     latency ? " (64 KiB) for latency tests" : " (64 MiB) for bandwidth tests"));
  }

  options.queue_depth = spec.queue_depth() == 0 ? kDefaultQueueDepth : spec.queue_depth();
  if (options.queue_depth > kMaxQueueDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("queue_depth ", spec.queue_depth(), " is outside 1..", kMaxQueueDepth));
  }
  RunShapeLimits limits;
  limits.default_iterations =
      options.test == "write_bw" ? kDefaultWriteBwIterations : kDefaultIterations;
  limits.stream_unit = "QP";
  limits.engine = "verbs";
  absl::StatusOr<RunShape> shape = ParseRunShape(spec, latency, limits);
  if (!shape.ok()) return shape.status();
  static_cast<RunShape&>(options) = *shape;
  return options;
}

absl::StatusOr<ibv_mtu> PathMtu(uint32_t local_bytes, uint32_t peer_bytes) {
  absl::StatusOr<ibv_mtu> local = IbMtuFromBytes(local_bytes);
  if (!local.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("local ", local.status().message()));
  }
  absl::StatusOr<ibv_mtu> peer = IbMtuFromBytes(peer_bytes);
  if (!peer.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the peer's ", peer.status().message()));
  }
  return std::min(*local, *peer);
}

std::string LinkLayerName(uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_UNSPECIFIED:  // older drivers; ibv_devinfo prints InfiniBand too
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return absl::StrCat("Unknown (", link_layer, ")");
  }
}

}  // namespace clustercert::agent::peer
