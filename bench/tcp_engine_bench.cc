// Runs the tcp peer engine outside the agent, to compare it with iperf3.
//
//   tcp_engine_bench --role server --bind 10.77.0.1 --peer 10.77.0.2 --port-file /tmp/p
//   tcp_engine_bench --role client --bind 10.77.0.2 --peer 10.77.0.1:PORT
//   tcp_engine_bench --role both --bind 127.0.0.1 --peer 127.0.0.1   (one process)
//
// Common flags: --test write_bw|send_lat|..., --streams N, --seconds S (0: use
// --iterations), --message-bytes B, --bidirectional. Each side prints one line
//   result role=server test=write_bw streams=8 gbps=37.512 bytes=... seconds=...
// plus latency figures for *_lat, and the engine's detail. Exit status 1 on
// any error, with the engine's sentence on stderr.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/peer/tcp_engine.h"
#include "common/command_line.h"

namespace clustercert::agent::peer {
namespace {

// Time allowed beyond the test's own duration for connecting and draining.
constexpr absl::Duration kSlack = absl::Seconds(60);

struct Options {
  v1::PeerTestSpec spec;
  std::string role;
  std::string bind;
  std::string peer;  // ip for the server, ip:port for the client
  std::string port_file;
};

void PrintResult(const absl::StatusOr<v1::PeerTestResult>& result, const v1::PeerTestSpec& spec,
                 const std::string& role) {
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", role.c_str(), result.status().ToString().c_str());
    return;
  }
  std::string line =
      absl::StrCat("result role=", role, " test=", spec.test(), " streams=", spec.streams());
  if (result->has_bandwidth()) {
    const v1::BandwidthStats& bw = result->bandwidth();
    absl::StrAppend(&line, absl::StrFormat(" gbps=%.3f bytes=%d seconds=%.3f msg_rate_mpps=%.4f",
                                           bw.avg_gbps(), bw.message_bytes() * bw.iterations(),
                                           bw.seconds(), bw.msg_rate_mpps()));
  }
  if (result->has_latency()) {
    const v1::LatencyStats& lat = result->latency();
    absl::StrAppend(
        &line, absl::StrFormat(" samples=%d min_us=%.2f typical_us=%.2f avg_us=%.2f p99_us=%.2f "
                               "max_us=%.2f",
                               lat.samples(), lat.min_us(), lat.typical_us(), lat.avg_us(),
                               lat.p99_us(), lat.max_us()));
  }
  std::printf("%s\n# %s: %s\n", line.c_str(), role.c_str(), result->detail().c_str());
  std::fflush(stdout);
}

absl::Time DeadlineFor(const v1::PeerTestSpec& spec) {
  return absl::Now() + absl::Seconds(spec.duration_s()) + kSlack;
}

int RunServer(const Options& options) {
  TcpEngine engine;
  v1::PeerTestSpec spec = options.spec;
  spec.set_role("server");
  spec.set_data_ip(options.bind);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  if (!server.ok()) {
    std::fprintf(stderr, "server: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const uint32_t port = (*server)->local_info().tcp_port();
  std::printf("listening %s port %u\n", options.bind.c_str(), port);
  std::fflush(stdout);
  if (!options.port_file.empty()) {
    // Written whole, then renamed, so a reader never sees half a number.
    const std::string partial = options.port_file + ".partial";
    std::ofstream(partial) << port << "\n";
    std::rename(partial.c_str(), options.port_file.c_str());
  }
  v1::EndpointInfo client;
  client.set_address(options.peer);
  const absl::Time deadline = DeadlineFor(spec);
  if (absl::Status connected = (*server)->Connect(client, deadline); !connected.ok()) {
    std::fprintf(stderr, "server: %s\n", connected.ToString().c_str());
    return 1;
  }
  absl::StatusOr<v1::PeerTestResult> result = (*server)->Run(deadline);
  PrintResult(result, spec, "server");
  return result.ok() ? 0 : 1;
}

int RunClient(const Options& options, const v1::EndpointInfo& server_info) {
  TcpEngine engine;
  v1::PeerTestSpec spec = options.spec;
  spec.set_role("client");
  spec.set_data_ip(options.bind);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  if (!client.ok()) {
    std::fprintf(stderr, "client: %s\n", client.status().ToString().c_str());
    return 1;
  }
  const absl::Time deadline = DeadlineFor(spec);
  if (absl::Status connected = (*client)->Connect(server_info, deadline); !connected.ok()) {
    std::fprintf(stderr, "client: %s\n", connected.ToString().c_str());
    return 1;
  }
  absl::StatusOr<v1::PeerTestResult> result = (*client)->Run(deadline);
  PrintResult(result, spec, "client");
  return result.ok() ? 0 : 1;
}

// Both ends in one process over --bind (server) and --peer (client).
int RunBoth(const Options& options) {
  TcpEngine engine;
  v1::PeerTestSpec spec = options.spec;
  spec.set_role("server");
  spec.set_data_ip(options.bind);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> server = engine.Prepare(spec);
  spec.set_role("client");
  spec.set_data_ip(options.peer);
  absl::StatusOr<std::unique_ptr<PeerEndpoint>> client = engine.Prepare(spec);
  if (!server.ok() || !client.ok()) {
    std::fprintf(stderr, "prepare: %s / %s\n", server.status().ToString().c_str(),
                 client.status().ToString().c_str());
    return 1;
  }
  const absl::Time deadline = DeadlineFor(spec);
  absl::Status connected = (*server)->Connect((*client)->local_info(), deadline);
  if (connected.ok()) connected = (*client)->Connect((*server)->local_info(), deadline);
  if (!connected.ok()) {
    std::fprintf(stderr, "connect: %s\n", connected.ToString().c_str());
    return 1;
  }
  absl::StatusOr<v1::PeerTestResult> server_result;
  absl::StatusOr<v1::PeerTestResult> client_result;
  {
    std::jthread server_thread([&] { server_result = (*server)->Run(deadline); });
    client_result = (*client)->Run(deadline);
  }
  PrintResult(server_result, spec, "server");
  PrintResult(client_result, spec, "client");
  return server_result.ok() && client_result.ok() ? 0 : 1;
}

absl::StatusOr<Options> ParseOptions(int argc, char** argv) {
  CommandLine command_line({
      {"role", true, "server|client|both", "which end(s) to run", "both"},
      {"bind", true, "IP", "this end's data-plane address (the server's, for --role both)",
       "127.0.0.1"},
      {"peer", true, "IP[:PORT]", "the client's IP (server, both) or the server's IP:PORT (client)",
       "127.0.0.1"},
      {"port-file", true, "PATH", "server: write the listening port here", ""},
      {"test", true, "TEST", "write_bw, send_bw, read_bw, write_lat, send_lat, read_lat",
       "write_bw"},
      {"streams", true, "N", "parallel streams", "1"},
      {"seconds", true, "S", "duration; 0 selects --iterations", "5"},
      {"iterations", true, "N", "messages per stream when --seconds is 0", "0"},
      {"message-bytes", true, "B", "message size (0: perftest's default)", "131072"},
      {"bidirectional", false, "", "both directions at once", ""},
  });
  if (absl::Status parsed = command_line.Parse(argc, argv); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(parsed.message(), "\n", command_line.Help()));
  }
  Options options;
  options.role = command_line.Get("role");
  options.bind = command_line.Get("bind");
  options.peer = command_line.Get("peer");
  options.port_file = command_line.Get("port-file");
  options.spec.set_engine("tcp");
  options.spec.set_test(command_line.Get("test"));
  uint32_t streams = 0;
  double seconds = 0;
  uint64_t iterations = 0;
  uint64_t message_bytes = 0;
  if (!absl::SimpleAtoi(command_line.Get("streams"), &streams) ||
      !absl::SimpleAtod(command_line.Get("seconds"), &seconds) ||
      !absl::SimpleAtoi(command_line.Get("iterations"), &iterations) ||
      !absl::SimpleAtoi(command_line.Get("message-bytes"), &message_bytes)) {
    return absl::InvalidArgumentError(
        "--streams, --seconds, --iterations and --message-bytes "
        "take numbers");
  }
  options.spec.set_streams(streams);
  options.spec.set_duration_s(seconds);
  options.spec.set_iterations(iterations);
  options.spec.set_message_bytes(message_bytes);
  options.spec.set_bidirectional(command_line.GetBool("bidirectional"));
  return options;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Options> options = ParseOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  if (options->role == "server") return RunServer(*options);
  if (options->role == "both") return RunBoth(*options);
  if (options->role == "client") {
    const size_t colon = options->peer.rfind(':');
    uint32_t port = 0;
    if (colon == std::string::npos || !absl::SimpleAtoi(options->peer.substr(colon + 1), &port)) {
      std::fprintf(stderr, "--peer must be the server's IP:PORT for --role client\n");
      return 2;
    }
    v1::EndpointInfo server;
    std::string ip = options->peer.substr(0, colon);
    if (ip.size() > 1 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
    server.set_address(ip);
    server.set_tcp_port(port);
    return RunClient(*options, server);
  }
  std::fprintf(stderr, "--role must be server, client or both\n");
  return 2;
}

}  // namespace
}  // namespace clustercert::agent::peer

int main(int argc, char** argv) { return clustercert::agent::peer::Main(argc, argv); }
