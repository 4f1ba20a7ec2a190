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
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/capture/host_capture.h"
#include "agent/inventory/fabric_isolation.h"
#include "agent/inventory/gpu_source.h"
#include "agent/inventory/inventory_collector.h"
#include "agent/inventory/netlink_route_source.h"
#include "agent/inventory/socket_reach_prober.h"
#include "agent/peer/endpoint_registry.h"
#include "agent/peer/ethtool_stats_source.h"
#include "agent/peer/port_counters.h"
#include "agent/peer/tcp_engine.h"
#include "agent/peer/verbs_engine.h"
#include "agent/service/agent_handlers.h"
#include "agent/service/agent_options.h"
#include "agent/service/node_agent_service.h"
#include "agent/service/peer_auth_processor.h"
#include "agent/service/peer_authorizer.h"
#include "agent/service/uplink_handlers.h"
#include "agent/uplink/http_range_flows.h"
#include "agent/uplink/tcp_send_flows.h"
#include "common/clock.h"
#include "common/command_line.h"
#include "common/log_setup.h"
#include "common/sysfs_view.h"
#include "common/tls_files.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace {

using namespace clustercert;

constexpr int kExitUsage = 2;

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// Diagnostics before (and beside) the daemon's log: "node-agent: <sentence>".
int Refuse(const std::string& sentence) {
  CommandLineLogger("node-agent").error("{}", sentence);
  return kExitUsage;
}

CommandLine AgentCommandLine() {
  return CommandLine({
      {"listen", true, "HOST:PORT",
       "management-plane address to serve gRPC on; HOST:0 picks a free port", ""},
      {"node-name", true, "NAME", "this node's name as the plan spells it (default: the hostname)",
       ""},
      {"sysfs-root", true, "DIR", "read /sys and /proc under DIR (a fixture or captured host)",
       "/"},
      {"tls-cert", true, "FILE", "PEM certificate of this agent (mutual TLS)", ""},
      {"tls-key", true, "FILE", "PEM private key of this agent", ""},
      {"tls-ca", true, "FILE", "PEM CA that signed the controller's certificate", ""},
      {"allow-roles", true, "ROLE[,ROLE]",
       "certificate roles (URI SAN urn:clustercert:role:ROLE, as deploy/pki.sh writes) that may "
       "call this agent over mutual TLS (default: controller)",
       ""},
      {"insecure", false, "",
       "serve plaintext gRPC with no caller identity: only on a loopback --listen, for "
       "development and tests",
       ""},
      {"port-file", true, "FILE", "write the port actually bound to FILE", ""},
      {"frr-pathspace", true, "NAME",
       "read BGP from the FRR started with -N NAME (vtysh -N NAME); default: the host's FRR", ""},
      {"log-level", true, "LEVEL", "trace, debug, info, warn or error", "info"},
      {"log-format", true, "FORMAT",
       "text, or json (one object per line: time, level, logger, msg) for a log shipper", "text"},
      {"worker-threads", true, "N", "threads that run collection off the gRPC threads", "2"},
      {"max-long-calls", true, "N",
       "RunEndpoint/RunUplinkFlows calls served at once; more are refused with "
       "RESOURCE_EXHAUSTED",
       "32"},
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
}

// Logs go to stderr (journald keeps it); stdout stays free for output.
absl::Status SetUpLogging(const CommandLine& command_line) {
  const absl::StatusOr<spdlog::level::level_enum> level =
      ParseLogLevel(command_line.Get("log-level"));
  if (!level.ok()) return level.status();
  const absl::StatusOr<LogFormat> format = ParseLogFormat(command_line.Get("log-format"));
  if (!format.ok()) return format.status();
  auto logger = *format == LogFormat::kJson ? spdlog::stderr_logger_mt("node-agent")
                                            : spdlog::stderr_color_mt("node-agent");
  ApplyLogFormat(*logger, *format);
  logger->set_level(*level);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

// Shutdown is driven by a thread that waits for the signals, never by a
// handler: they are blocked here, before any other thread exists. Writes to
// a peer or a worker that went away fail with EPIPE instead of killing the
// agent (a TCP peer test whose peer closed, a worker that exited early).
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

absl::Status ParseNumber(const CommandLine& command_line, const char* flag, int* out) {
  if (absl::SimpleAtoi(command_line.Get(flag), out)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " must be a number, got '", command_line.Get(flag), "'"));
}

// The flags as ValidateAgentFlags takes them, and the test-only clock offset.
absl::StatusOr<agent::AgentFlags> ReadFlags(const CommandLine& command_line,
                                            double* test_clock_offset_ms) {
  agent::AgentFlags flags;
  flags.listen = command_line.Get("listen");
  flags.node_name = command_line.Get("node-name");
  flags.sysfs_root = command_line.Get("sysfs-root");
  flags.tls_cert = command_line.Get("tls-cert");
  flags.tls_key = command_line.Get("tls-key");
  flags.tls_ca = command_line.Get("tls-ca");
  flags.insecure = command_line.GetBool("insecure");
  flags.allow_roles = command_line.Get("allow-roles");
  flags.port_file = command_line.Get("port-file");
  flags.frr_pathspace = command_line.Get("frr-pathspace");
  for (auto [flag, out] : {std::pair{"worker-threads", &flags.worker_threads},
                           std::pair{"max-long-calls", &flags.max_long_calls}}) {
    if (absl::Status read = ParseNumber(command_line, flag, out); !read.ok()) return read;
  }
  if (!absl::SimpleAtod(command_line.Get("test-clock-offset-ms"), test_clock_offset_ms)) {
    return absl::InvalidArgumentError(absl::StrCat("--test-clock-offset-ms must be a number, got '",
                                                   command_line.Get("test-clock-offset-ms"), "'"));
  }
  return flags;
}

// Mutual TLS with every call passing the authoriser before any handler sees
// it (the CA vouches for node certificates too, so the handshake alone must
// not decide who drives a root daemon); plaintext only where
// ValidateAgentFlags admitted --insecure, on a loopback --listen.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const agent::AgentOptions& options) {
  if (options.insecure) return grpc::InsecureServerCredentials();
  auto material = LoadTlsMaterial(options.tls);
  if (!material.ok()) return material.status();
  auto authorizer = agent::PeerAuthorizer::Create(options.allow_roles);
  if (!authorizer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--allow-roles: ", authorizer.status().message()));
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = MutualTlsServerCredentials(*material);
  credentials->SetAuthMetadataProcessor(
      std::make_shared<agent::PeerAuthProcessor>(std::move(*authorizer)));
  return credentials;
}

// Everything the service's handlers use, in the order they depend on each
// other; destroyed in reverse, after the server stopped.
struct AgentParts {
  AgentParts(const agent::AgentOptions& options, double test_clock_offset_ms,
             const std::string& worker_dir)
      : view(options.sysfs_root),
        collector(agent::inventory::MakeInventoryCollector(view, options.listen.host,
                                                           {options.frr_pathspace})),
        prober(RealClock()),
        isolation(routes, prober),
        handlers(
            {options.node_name, Hostname()}, *collector, [] { return absl::Now(); },
            absl::Milliseconds(test_clock_offset_ms), view.is_live() ? &isolation : nullptr),
        uplink({agent::uplink::RunHttpRangeFlows, agent::uplink::RunTcpSendFlows},
               [] { return absl::Now(); }),
        tcp_engine(RealClock()),
        verbs_engine(RealClock()),
        endpoints({{"tcp", &tcp_engine}, {"verbs", &verbs_engine}}, [] { return absl::Now(); }),
        counters(view, view.is_live() ? &ethtool : nullptr),
        collective_jobs([] { return absl::Now(); },
                        [](agent::collective::JobLaunch launch) {
                          return agent::collective::CollectiveJob::Start(
                              std::move(launch), process::LiveSpawner(), RealClock());
                        }),
        gpus(agent::inventory::MakeGpuSource()),
        collectives(collective_jobs, worker_dir, *gpus),
        pool(options.worker_threads),
        service(handlers, endpoints, counters, collectives, uplink, pool,
                static_cast<size_t>(options.max_long_calls)) {
    // Peer-test endpoints and collective ranks live under leases the
    // reapers enforce.
    endpoints.StartReaper(absl::Seconds(1));
    collective_jobs.StartSweeper(absl::Seconds(1));
  }

  SysfsView view;
  std::unique_ptr<agent::inventory::InventorySource> collector;
  // Whether the data netdevs reach the plan's other fabrics (live hosts only).
  agent::inventory::NetlinkRouteSource routes;
  agent::inventory::SocketReachProber prober;
  agent::inventory::FabricIsolationCollector isolation;
  agent::AgentHandlers handlers;
  agent::UplinkHandlers uplink;
  agent::peer::TcpEngine tcp_engine;
  agent::peer::VerbsEngine verbs_engine;
  agent::peer::EndpointRegistry endpoints;
  agent::peer::IoctlEthtoolStatsSource ethtool;
  agent::peer::PortCounterReader counters;
  agent::collective::CollectiveRegistry collective_jobs;
  // An nccl job gets at most one rank per GPU the CUDA runtime shows.
  std::unique_ptr<agent::inventory::GpuSource> gpus;
  agent::CollectiveHandlers collectives;
  WorkerPool pool;
  agent::NodeAgentService service;
};

// Serves until SIGTERM or SIGINT; 1 when the address cannot be bound.
int Serve(const agent::AgentOptions& options,
          const std::shared_ptr<grpc::ServerCredentials>& credentials, AgentParts& parts,
          const sigset_t& stop_signals) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(options.listen_text, credentials, &bound_port);
  builder.RegisterService(&parts.service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    CommandLineLogger("node-agent")
        .error(
            "cannot listen on {}: the address is in use or not on this host; pick a free port or "
            "an address this host owns",
            options.listen_text);
    return 1;
  }
  if (!options.port_file.empty()) std::ofstream(options.port_file) << bound_port << "\n";
  spdlog::info("node-agent {} '{}' listening on {}:{} ({}), sysfs root {}", kToolVersion,
               options.node_name, options.listen.host, bound_port,
               options.insecure
                   ? std::string("insecure, loopback only")
                   : "mutual TLS, admitting " + absl::StrJoin(options.allow_roles, ", "),
               parts.view.root().string());
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

int RunAgent(int argc, char** argv) {
  CommandLine command_line = AgentCommandLine();
  if (auto parsed = command_line.Parse(argc, argv); !parsed.ok()) {
    return Refuse(std::string(parsed.message()));
  }
  if (command_line.GetBool("help")) {
    std::printf(
        "node-agent %s\nusage: node-agent --listen HOST:PORT (--tls-cert F --tls-key F "
        "--tls-ca F [--allow-roles ROLE[,ROLE]] | --insecure) [flags]\n%s",
        kToolVersion, command_line.Help().c_str());
    return 0;
  }
  if (!command_line.positional().empty()) {
    return Refuse(absl::StrCat("unexpected argument '", command_line.positional()[0],
                               "'; every option is a --flag (see --help)"));
  }
  // A capture needs no listener, credentials or signals: it writes and exits.
  if (!command_line.Get("capture").empty()) {
    return agent::RunHostCapture(command_line.Get("sysfs-root"), command_line.Get("capture"));
  }
  if (absl::Status logging = SetUpLogging(command_line); !logging.ok()) {
    return Refuse(std::string(logging.message()));
  }
  const sigset_t stop_signals = BlockStopSignals();
  double test_clock_offset_ms = 0;
  absl::StatusOr<agent::AgentFlags> flags = ReadFlags(command_line, &test_clock_offset_ms);
  if (!flags.ok()) return Refuse(std::string(flags.status().message()));
  auto options = agent::ValidateAgentFlags(*flags, Hostname());
  if (!options.ok()) return Refuse(std::string(options.status().message()));
  auto credentials = ServerCredentialsFor(*options);
  if (!credentials.ok()) return Refuse(std::string(credentials.status().message()));
  if (test_clock_offset_ms != 0) {
    spdlog::warn(
        "--test-clock-offset-ms {}: this agent reports a clock that is off on purpose "
        "(a test-only flag); certificates say so",
        test_clock_offset_ms);
  }
  const std::string worker_dir = command_line.Get("worker-dir").empty()
                                     ? agent::ExecutableDirectory()
                                     : command_line.Get("worker-dir");
  AgentParts parts(*options, test_clock_offset_ms, worker_dir);
  return Serve(*options, *credentials, parts, stop_signals);
}

}  // namespace

int main(int argc, char** argv) { return RunAgent(argc, argv); }
