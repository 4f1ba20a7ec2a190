#include "agent/peer/tcp_engine.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/peer/run_shape.h"
#include "agent/peer/tcp_client_endpoint.h"
#include "agent/peer/tcp_server_endpoint.h"
#include "agent/peer/tcp_socket.h"

namespace clustercert::agent::peer {
namespace {

constexpr uint64_t kDefaultBandwidthBytes = 65536;
constexpr uint64_t kDefaultLatencyBytes = 2;
constexpr uint64_t kDefaultIterations = 1000;

bool IsBandwidthTest(const std::string& test) {
  return test == "write_bw" || test == "send_bw" || test == "read_bw";
}
bool IsLatencyTest(const std::string& test) {
  return test == "write_lat" || test == "send_lat" || test == "read_lat";
}

}  // namespace

absl::StatusOr<TcpTestOptions> TcpTestOptions::FromSpec(const v1::PeerTestSpec& spec) {
  TcpTestOptions options;
  if (!spec.engine().empty() && spec.engine() != "tcp") {
    return absl::InvalidArgumentError(absl::StrCat("engine \"", spec.engine(),
                                                   "\" was given to the tcp engine, which runs "
                                                   "only engine \"tcp\""));
  }
  options.test = spec.test();
  if (IsBandwidthTest(spec.test())) {
    options.kind = Kind::kBandwidth;
  } else if (IsLatencyTest(spec.test())) {
    options.kind = Kind::kLatency;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("test \"", spec.test(),
                                                   "\" is not one of write_bw, send_bw, read_bw, "
                                                   "write_lat, send_lat, read_lat"));
  }
  if (spec.role() != "server" && spec.role() != "client") {
    return absl::InvalidArgumentError(
        absl::StrCat("role \"", spec.role(), "\" is neither server nor client"));
  }
  options.server = spec.role() == "server";
  if (!spec.memory().empty() && spec.memory() != "host") {
    return absl::InvalidArgumentError(
        absl::StrCat("memory \"", spec.memory(),
                     "\" is not supported by the tcp engine, which "
                     "moves host memory only: use memory \"host\" or the verbs engine"));
  }

  absl::StatusOr<SocketAddress> address = SocketAddress::FromLiteral(spec.data_ip(), 0);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("data_ip \"", spec.data_ip(),
                     "\" is not a literal IPv4 or IPv6 address: give the "
                     "data-plane interface's own address"));
  }
  if (address->ip() == "0.0.0.0" || address->ip() == "::") {
    return absl::InvalidArgumentError(
        absl::StrCat("data_ip ", spec.data_ip(),
                     " is the unspecified address: give the data-plane "
                     "interface's own address, so the test runs over that interface"));
  }
  options.data_ip = spec.data_ip();

  const bool latency = options.kind == Kind::kLatency;
  options.message_bytes = spec.message_bytes();
  if (options.message_bytes == 0) {
    options.message_bytes = latency ? kDefaultLatencyBytes : kDefaultBandwidthBytes;
  }
  if (options.message_bytes > kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("message_bytes ", spec.message_bytes(),
                                                   " is outside 1..", kMaxMessageBytes,
                                                   " (64 MiB) for the tcp engine"));
  }
  RunShapeLimits limits;
  limits.default_iterations = kDefaultIterations;
  limits.stream_unit = "stream";
  limits.engine = "tcp";
  absl::StatusOr<RunShape> shape = ParseRunShape(spec, latency, limits);
  if (!shape.ok()) return shape.status();
  static_cast<RunShape&>(options) = *shape;
  return options;
}

absl::StatusOr<std::unique_ptr<PeerEndpoint>> TcpEngine::Prepare(const v1::PeerTestSpec& spec) {
  absl::StatusOr<TcpTestOptions> options = TcpTestOptions::FromSpec(spec);
  if (!options.ok()) return options.status();
  if (options->server) {
    absl::StatusOr<std::unique_ptr<TcpServerEndpoint>> server =
        TcpServerEndpoint::Create(*std::move(options), clock_);
    if (!server.ok()) return server.status();
    return std::unique_ptr<PeerEndpoint>(*std::move(server));
  }
  absl::StatusOr<SocketAddress> local = SocketAddress::FromLiteral(options->data_ip, 0);
  if (!local.ok()) return local.status();
  return std::unique_ptr<PeerEndpoint>(
      std::make_unique<TcpClientEndpoint>(*std::move(options), *local, clock_));
}

}  // namespace clustercert::agent::peer
