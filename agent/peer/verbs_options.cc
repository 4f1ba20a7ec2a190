#include "agent/peer/verbs_options.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace clustercert::peer {
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
  options.streams = spec.streams() == 0 ? 1 : spec.streams();
  if (options.streams > kMaxStreams) {
    return absl::InvalidArgumentError(absl::StrCat("streams ", spec.streams(), " is outside 1..",
                                                   kMaxStreams, " QPs for the verbs engine"));
  }
  if (latency && options.streams != 1) {
    return absl::InvalidArgumentError(absl::StrCat("streams ", spec.streams(),
                                                   " is outside 1..1 for ", spec.test(),
                                                   ": latency runs on one QP"));
  }
  if (latency && spec.bidirectional()) {
    return absl::InvalidArgumentError(absl::StrCat("bidirectional is not supported for ",
                                                   spec.test(),
                                                   ": a ping-pong already goes both ways"));
  }
  options.bidirectional = spec.bidirectional();

  const double seconds = spec.duration_s();
  if (std::isnan(seconds) || seconds < 0 || seconds > kMaxDurationSeconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration_s ", seconds, " is outside 0 < duration_s <= ", kMaxDurationSeconds,
                     " (0 selects iterations mode)"));
  }
  if (seconds > 0) {
    options.duration = absl::Seconds(seconds);
    return options;
  }
  const uint64_t default_iterations =
      options.test == "write_bw" ? kDefaultWriteBwIterations : kDefaultIterations;
  options.iterations = spec.iterations() == 0 ? default_iterations : spec.iterations();
  const uint64_t max_iterations = latency ? kMaxLatencySamples : kMaxIterations;
  if (options.iterations > max_iterations) {
    return absl::InvalidArgumentError(absl::StrCat(
        "iterations ", spec.iterations(), " is outside 1..", max_iterations, " for ", spec.test(),
        latency ? " (every latency sample is kept for percentiles)" : ""));
  }
  return options;
}

absl::StatusOr<uint32_t> MtuEnumToBytes(int mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "verbs MTU enum ", mtu, " is not one of IBV_MTU_256 (1) .. IBV_MTU_4096 (5)"));
  }
}

absl::StatusOr<ibv_mtu> MtuBytesToEnum(uint32_t bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "active_mtu ", bytes, " is not an IB MTU: one of 256, 512, 1024, 2048, 4096 bytes"));
  }
}

absl::StatusOr<ibv_mtu> PathMtu(uint32_t local_bytes, uint32_t peer_bytes) {
  absl::StatusOr<ibv_mtu> local = MtuBytesToEnum(local_bytes);
  if (!local.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("local ", local.status().message()));
  }
  absl::StatusOr<ibv_mtu> peer = MtuBytesToEnum(peer_bytes);
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

}  // namespace clustercert::peer
