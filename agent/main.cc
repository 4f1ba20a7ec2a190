// node-agent: answers the controller's gRPC calls on the management network
// with this host's inventory (and, in later versions, peer tests).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/capture/host_capture.h"
#include "agent/inventory/ethtool_module_source.h"
#include "agent/inventory/fabric_isolation.h"
#include "agent/inventory/gpu_source.h"
#include "agent/inventory/host_neighbor_source.h"
#include "agent/inventory/inventory_collector.h"
#include "agent/inventory/netlink_route_source.h"
#include "agent/inventory/rail_port_collector.h"
#include "agent/inventory/socket_reach_prober.h"
#include "agent/peer/endpoint_registry.h"
#include "agent/peer/ethtool_stats_source.h"
#include "agent/peer/port_counters.h"
#include "agent/peer/tcp_engine.h"
#include "agent/peer/verbs_engine.h"
#include "agent/service/agent_handlers.h"
#include "agent/service/agent_options.h"
#include "agent/service/connection_gate.h"
#include "agent/service/gate_interceptor.h"
#include "agent/service/node_agent_service.h"
#include "agent/service/peer_auth_processor.h"
#include "agent/service/peer_authorizer.h"
#include "agent/service/stop_watchdog.h"
#include "agent/service/uplink_handlers.h"
#include "agent/uplink/http_range_flows.h"
#include "agent/uplink/tcp_send_flows.h"
#include "common/clock.h"
#include "common/command_line.h"
#include "common/file_limit.h"
#include "common/log_setup.h"
#include "common/process/process_command_runner.h"
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

// gRPC's shutdown lets calls run this long after SIGTERM; the whole stop
// (destructors joining threads too) gets kStopDeadline, then StopWatchdog
// ends the process anyway, well inside systemd's TimeoutStopSec (90 s).
constexpr absl::Duration kShutdownGrace = absl::Seconds(5);
constexpr absl::Duration kStopDeadline = absl::Seconds(10);

// An authenticated connection with no call for this long is closed (gRPC
// sends GOAWAY; the controller's channel reconnects on its next call). Calls
// in progress, a peer test's minutes-long run included, keep it open.
constexpr absl::Duration kMaxConnectionIdle = absl::Minutes(5);

// The open-file limit the agent raises its soft limit to, as far as the hard
// one allows (the unit sets LimitNOFILE=65536): the kernel's default
// fs.nr_open.
constexpr uint64_t kWantedOpenFiles = uint64_t{1} << 20;

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

// The flags as ValidateAgentFlags takes them.
absl::StatusOr<agent::AgentFlags> ReadFlags(const CommandLine& command_line) {
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

// What answers a cabling query: on a live host lldpd, the agent's own LLDP
// receive, the module-EEPROM ioctl and smpquery; on a captured tree nothing,
// since all of them would describe this machine.
agent::inventory::RailPortSources CablingSources(const SysfsView& view,
                                                 agent::inventory::NeighborSource& neighbors,
                                                 agent::inventory::ModuleSource& modules,
                                                 process::CommandRunner& commands) {
  agent::inventory::RailPortSources sources;
  if (!view.is_live()) {
    sources.offline_reason = absl::StrCat(
        "a captured tree (--sysfs-root ", view.root().string(),
        "): the LLDP neighbours, modules and InfiniBand links would be this machine's, not the "
        "tree's host's");
    return sources;
  }
  sources.neighbors = &neighbors;
  sources.modules = &modules;
  sources.ib = &commands;
  return sources;
}

// Everything the service's handlers use, in the order they depend on each
// other; destroyed in reverse, after the server stopped.
struct AgentParts {
  AgentParts(const agent::AgentOptions& options, const std::string& worker_dir)
      : view(options.sysfs_root),
        collector(agent::inventory::MakeInventoryCollector(view, options.listen.host,
                                                           {options.frr_pathspace})),
        prober(RealClock()),
        isolation(routes, prober),
        neighbors(&commands, RealClock()),
        cabling(CablingSources(view, neighbors, modules, commands), RealClock()),
        handlers(
            {options.node_name, Hostname()}, *collector, [] { return absl::Now(); },
            view.is_live() ? &isolation : nullptr, &cabling),
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
  // Where each rail's cable lands (GetInventoryRequest.cabling).
  process::ProcessCommandRunner commands;
  agent::inventory::HostNeighborSource neighbors;
  agent::inventory::IoctlModuleSource modules;
  agent::inventory::RailPortCollector cabling;
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

// Raises the soft open-file limit to the hard one (systemd's default soft
// limit is 1,024, which idle connections alone used to exhaust) and says what
// it got; the gate's bound on unauthenticated connections takes at most half
// of it.
agent::ConnectionGateOptions GateOptionsForOpenFileLimit() {
  const OpenFileLimit limit = RaiseOpenFileLimit(kWantedOpenFiles);
  agent::ConnectionGateOptions gate;
  gate.max_unauthenticated =
      static_cast<size_t>(std::clamp<uint64_t>(limit.after / 4, 16, gate.max_unauthenticated));
  if (limit.after < 4096) {
    spdlog::warn(
        "the open-file limit is {} (hard limit {}): set LimitNOFILE=65536 in the unit (as "
        "deploy/clustercert-agent.service does) so peer tests and connections have room",
        limit.after, limit.hard);
  } else {
    spdlog::info("open-file limit {} (was {}, hard limit {})", limit.after, limit.before,
                 limit.hard);
  }
  return gate;
}

// The server's transport bounds: a handshake must finish within the gate's
// bound, an idle connection is closed, and a compressed request is refused
// from its headers (grpc-encoding), before any byte is inflated: gRPC 1.51
// inflates a whole message before its size check (a 1 MB gzip request grew
// the agent by 1 GiB), and the controller never compresses.
void BoundTransport(grpc::ServerBuilder& builder, const agent::ConnectionGateOptions& gate) {
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(gate.handshake_timeout)));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(kMaxConnectionIdle)));
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
}

// Serves until SIGTERM or SIGINT; 1 when the address cannot be bound.
// Connections come through the ConnectionGate (it owns the listening
// sockets), then gRPC's external-connection acceptor, with the same
// credentials and authorisation a port of gRPC's own would have.
int Serve(const agent::AgentOptions& options,
          const std::shared_ptr<grpc::ServerCredentials>& credentials, AgentParts& parts,
          const sigset_t& stop_signals, agent::StopWatchdog& stop_watchdog) {
  const agent::ConnectionGateOptions gate_options = GateOptionsForOpenFileLimit();
  auto gate = agent::ConnectionGate::Listen(options.listen.host, options.listen.port, gate_options);
  if (!gate.ok()) {
    CommandLineLogger("node-agent").error("{}", std::string(gate.status().message()));
    return 1;
  }
  grpc::ServerBuilder builder;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor =
      builder.experimental().AddExternalConnectionAcceptor(
          grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, credentials);
  builder.RegisterService(&parts.service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<agent::GateInterceptorFactory>(**gate));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  BoundTransport(builder, gate_options);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    CommandLineLogger("node-agent")
        .error("cannot start the gRPC server on {} (gRPC's own log line above says why)",
               options.listen_text);
    return 1;
  }
  (*gate)->Start([&acceptor](int listener_fd, int fd) {
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters connection;
    connection.listener_fd = listener_fd;
    connection.fd = fd;
    acceptor->HandleNewConnection(&connection);
  });
  const int bound_port = (*gate)->port();
  if (!options.port_file.empty()) std::ofstream(options.port_file) << bound_port << "\n";
  spdlog::info("node-agent {} '{}' listening on {}:{} ({}), sysfs root {}", kToolVersion,
               options.node_name, options.listen.host, bound_port,
               options.insecure
                   ? std::string("insecure, loopback only")
                   : "mutual TLS, admitting " + absl::StrJoin(options.allow_roles, ", "),
               parts.view.root().string());
  std::thread stopper([&server, &gate, &stop_watchdog, stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    spdlog::info("received {}, shutting down", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
    stop_watchdog.Arm(kStopDeadline);
    (*gate)->Stop();
    server->Shutdown(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(kShutdownGrace));
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
  absl::StatusOr<agent::AgentFlags> flags = ReadFlags(command_line);
  if (!flags.ok()) return Refuse(std::string(flags.status().message()));
  auto options = agent::ValidateAgentFlags(*flags, Hostname());
  if (!options.ok()) return Refuse(std::string(options.status().message()));
  auto credentials = ServerCredentialsFor(*options);
  if (!credentials.ok()) return Refuse(std::string(credentials.status().message()));
  const std::string worker_dir = command_line.Get("worker-dir").empty()
                                     ? agent::ExecutableDirectory()
                                     : command_line.Get("worker-dir");
  // Outlives `parts`: a stop stuck in their destructors still ends in time.
  agent::StopWatchdog stop_watchdog(agent::StopWatchdog::ExitProcess(kStopDeadline));
  AgentParts parts(*options, worker_dir);
  return Serve(*options, *credentials, parts, stop_signals, stop_watchdog);
}

}  // namespace

int main(int argc, char** argv) { return RunAgent(argc, argv); }
