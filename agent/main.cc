// node-agent: answers the controller's gRPC calls on the management network
// with this host's inventory (and, in later versions, peer tests).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "agent/capture/host_capture.h"
#include "agent/inventory/inventory_collector.h"
#include "agent/peer/endpoint_registry.h"
#include "agent/peer/ethtool_stats_source.h"
#include "agent/peer/port_counters.h"
#include "agent/peer/tcp_engine.h"
#include "agent/peer/verbs_engine.h"
#include "agent/service/agent_handlers.h"
#include "agent/service/agent_options.h"
#include "agent/service/node_agent_service.h"
#include "agent/service/uplink_handlers.h"
#include "agent/uplink/http_range_flows.h"
#include "agent/uplink/tcp_send_flows.h"
#include "common/command_line.h"
#include "common/sysfs_view.h"
#include "common/tls_files.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace {

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace

static int RunAgent(int argc, char** argv) {
  using namespace clustercert;
  CommandLine command_line({
      {"listen", true, "HOST:PORT",
       "management-plane address to serve gRPC on; HOST:0 picks a free port", ""},
      {"node-name", true, "NAME", "this node's name as the plan spells it (default: the hostname)",
       ""},
      {"sysfs-root", true, "DIR", "read /sys and /proc under DIR (a fixture or captured host)",
       "/"},
      {"tls-cert", true, "FILE", "PEM certificate of this agent (mutual TLS)", ""},
      {"tls-key", true, "FILE", "PEM private key of this agent", ""},
      {"tls-ca", true, "FILE", "PEM CA that signed the controller's certificate", ""},
      {"insecure", false, "", "serve plaintext gRPC: loopback development only", ""},
      {"port-file", true, "FILE", "write the port actually bound to FILE", ""},
      {"worker-threads", true, "N", "threads that run collection off the gRPC threads", "2"},
      {"worker-dir", true, "DIR",
       "where the collective workers (collective-worker-gloo, -nccl) are (default: the "
       "node-agent's own directory)",
       ""},
      {"test-clock-offset-ms", true, "MS",
       "TEST ONLY: report this agent's clock MS milliseconds off, to exercise the controller's "
       "clock.offset check; never set it in production",
       "0"},
      {"capture", true, "DIR",
       "write what this agent reads from the host (a /sys and /proc allow-list, tool outputs) "
       "under DIR, a new or empty directory that --sysfs-root accepts, and exit",
       ""},
      {"help", false, "", "print this help", ""},
  });
  if (auto parsed = command_line.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "node-agent: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  if (command_line.GetBool("help")) {
    std::printf(
        "node-agent %s\nusage: node-agent --listen HOST:PORT (--tls-cert F --tls-key F "
        "--tls-ca F | --insecure) [flags]\n%s",
        kToolVersion, command_line.Help().c_str());
    return 0;
  }
  if (!command_line.positional().empty()) {
    std::fprintf(stderr,
                 "node-agent: unexpected argument '%s'; every option is a --flag (see --help)\n",
                 command_line.positional()[0].c_str());
    return 2;
  }

  // A capture needs no listener, credentials or signals: it writes and exits.
  if (!command_line.Get("capture").empty()) {
    return agent::RunHostCapture(command_line.Get("sysfs-root"), command_line.Get("capture"));
  }

  // Logs go to stderr (journald keeps it); stdout stays free for output.
  spdlog::set_default_logger(spdlog::stderr_color_mt("node-agent"));

  // Shutdown is driven by a thread that waits for the signals, never by a
  // handler: block them here, before any other thread exists.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  agent::AgentFlags flags;
  flags.listen = command_line.Get("listen");
  flags.node_name = command_line.Get("node-name");
  flags.sysfs_root = command_line.Get("sysfs-root");
  flags.tls_cert = command_line.Get("tls-cert");
  flags.tls_key = command_line.Get("tls-key");
  flags.tls_ca = command_line.Get("tls-ca");
  flags.insecure = command_line.GetBool("insecure");
  flags.port_file = command_line.Get("port-file");
  if (!absl::SimpleAtoi(command_line.Get("worker-threads"), &flags.worker_threads)) {
    std::fprintf(stderr, "node-agent: --worker-threads must be a number, got '%s'\n",
                 command_line.Get("worker-threads").c_str());
    return 2;
  }
  double test_clock_offset_ms = 0;
  if (!absl::SimpleAtod(command_line.Get("test-clock-offset-ms"), &test_clock_offset_ms)) {
    std::fprintf(stderr, "node-agent: --test-clock-offset-ms must be a number, got '%s'\n",
                 command_line.Get("test-clock-offset-ms").c_str());
    return 2;
  }
  auto options = agent::ValidateAgentFlags(flags, Hostname());
  if (!options.ok()) {
    std::fprintf(stderr, "node-agent: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }

  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (options->insecure) {
    credentials = grpc::InsecureServerCredentials();
    if (!IsLoopbackHost(options->listen.host)) {
      spdlog::warn(
          "serving plaintext gRPC on {}: anyone on that network can query this host; "
          "use mutual TLS (deploy/pki.sh) outside loopback development",
          options->listen_text);
    }
  } else {
    auto material = LoadTlsMaterial(options->tls);
    if (!material.ok()) {
      std::fprintf(stderr, "node-agent: %s\n", std::string(material.status().message()).c_str());
      return 2;
    }
    credentials = MutualTlsServerCredentials(*material);
  }

  SysfsView view(options->sysfs_root);
  auto collector = inventory::MakeInventoryCollector(view, options->listen.host);
  if (test_clock_offset_ms != 0) {
    spdlog::warn(
        "--test-clock-offset-ms {}: this agent reports a clock that is off on purpose "
        "(a test-only flag); certificates say so",
        test_clock_offset_ms);
  }
  agent::AgentHandlers handlers(
      {options->node_name, Hostname()}, *collector, [] { return absl::Now(); },
      absl::Milliseconds(test_clock_offset_ms));
  agent::UplinkHandlers uplink({uplink::RunHttpRangeFlows, uplink::RunTcpSendFlows},
                               [] { return absl::Now(); });
  // Peer tests: the engines this build has, each endpoint under a lease the
  // reaper enforces; port counters for the before/after deltas.
  peer::TcpEngine tcp_engine;
  peer::VerbsEngine verbs_engine;
  peer::EndpointRegistry endpoints({{"tcp", &tcp_engine}, {"verbs", &verbs_engine}},
                                   [] { return absl::Now(); });
  endpoints.StartReaper(absl::Seconds(1));
  peer::IoctlEthtoolStatsSource ethtool;
  peer::PortCounterReader counters(view, view.is_live() ? &ethtool : nullptr);

  // Collective ranks: worker processes under a lease the sweeper enforces.
  // A worker that exits early must not take the agent down with SIGPIPE on
  // its stdin: writes to a dead worker fail with EPIPE instead.
  ::signal(SIGPIPE, SIG_IGN);
  agent::collective::CollectiveRegistry collective_jobs([] { return absl::Now(); });
  collective_jobs.StartSweeper(absl::Seconds(1));
  const std::string worker_dir = command_line.Get("worker-dir").empty()
                                     ? agent::ExecutableDirectory()
                                     : command_line.Get("worker-dir");
  agent::CollectiveHandlers collectives(collective_jobs, worker_dir);

  WorkerPool pool(options->worker_threads);
  agent::NodeAgentService service(handlers, endpoints, counters, collectives, uplink, pool);

  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(options->listen_text, credentials, &bound_port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    std::fprintf(stderr,
                 "node-agent: cannot listen on %s: the address is in use or not on this host; "
                 "pick a free port or an address this host owns\n",
                 options->listen_text.c_str());
    return 1;
  }
  if (!options->port_file.empty()) {
    std::ofstream(options->port_file) << bound_port << "\n";
  }
  spdlog::info("node-agent {} '{}' listening on {}:{} ({}), sysfs root {}", kToolVersion,
               options->node_name, options->listen.host, bound_port,
               options->insecure ? "insecure" : "mutual TLS", view.root().string());

  std::thread stopper([&server, stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    spdlog::info("received {}, shutting down", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  });
  server->Wait();
  stopper.join();
  spdlog::info("node-agent stopped");
  return 0;
}

int main(int argc, char** argv) { return RunAgent(argc, argv); }
