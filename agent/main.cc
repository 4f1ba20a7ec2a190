// node-agent: answers the controller's gRPC calls on the management network
// with this host's inventory (and, in later versions, peer tests).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "agent/inventory/inventory_collector.h"
#include "agent/service/agent_handlers.h"
#include "agent/service/agent_options.h"
#include "agent/service/node_agent_service.h"
#include "common/sysfs_view.h"
#include "common/tls_files.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "", "management-plane HOST:PORT to serve gRPC on, e.g. 192.168.100.11:7070");
ABSL_FLAG(std::string, node_name, "", "this node's name as the plan spells it (default: the hostname)");
ABSL_FLAG(std::string, sysfs_root, "/", "directory under which /sys and /proc are read (a fixture or capture in tests)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate of this agent (mutual TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of this agent");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA that signed the controller's certificate");
ABSL_FLAG(bool, insecure, false, "serve plaintext gRPC: loopback development only");
ABSL_FLAG(std::string, port_file, "", "write the port actually bound here (useful with --listen HOST:0)");
ABSL_FLAG(int, worker_threads, 2, "threads that run inventory collection off the gRPC threads");

namespace {

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace clustercert;
  absl::SetProgramUsageMessage(
      "node-agent --listen HOST:PORT [--node-name NAME] [--sysfs-root DIR] "
      "(--tls-cert F --tls-key F --tls-ca F | --insecure)");
  absl::ParseCommandLine(argc, argv);

  // Shutdown is driven by a thread that waits for the signals, never by a
  // handler: block them here, before any other thread exists.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  agent::AgentFlags flags;
  flags.listen = absl::GetFlag(FLAGS_listen);
  flags.node_name = absl::GetFlag(FLAGS_node_name);
  flags.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
  flags.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  flags.tls_key = absl::GetFlag(FLAGS_tls_key);
  flags.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  flags.insecure = absl::GetFlag(FLAGS_insecure);
  flags.port_file = absl::GetFlag(FLAGS_port_file);
  flags.worker_threads = absl::GetFlag(FLAGS_worker_threads);
  auto options = agent::ValidateAgentFlags(flags, Hostname());
  if (!options.ok()) {
    std::fprintf(stderr, "node-agent: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }

  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (options->insecure) {
    credentials = grpc::InsecureServerCredentials();
    if (!IsLoopbackHost(options->listen.host)) {
      spdlog::warn("serving plaintext gRPC on {}: anyone on that network can query this host; "
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
  agent::AgentHandlers handlers({options->node_name, Hostname()}, *collector,
                                [] { return absl::Now(); });
  WorkerPool pool(options->worker_threads);
  agent::NodeAgentService service(handlers, pool);

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
