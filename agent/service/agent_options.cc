#include "agent/service/agent_options.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/service/peer_authorizer.h"
#include "common/host_port.h"

namespace clustercert::agent {

namespace {

absl::StatusOr<HostPort> ParseListen(const std::string& listen_flag) {
  if (listen_flag.empty()) {
    return absl::InvalidArgumentError(
        "--listen is required: give the management-plane address, e.g. --listen "
        "192.168.100.11:7070 "
        "(or 127.0.0.1:7070 for loopback development)");
  }
  auto listen = ParseHostPort(listen_flag);
  if (!listen.ok() && listen_flag.size() > 2 &&
      listen_flag.substr(listen_flag.size() - 2) == ":0") {
    // Port 0 asks the kernel for a free port (tests); ParseHostPort rejects it.
    listen = HostPort{listen_flag.substr(0, listen_flag.size() - 2), 0};
  }
  if (!listen.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen ", listen_flag, ": ", listen.status().message(),
        "; write it as HOST:PORT, e.g. 192.168.100.11:7070 (HOST:0 picks a free port)"));
  }
  return listen;
}

absl::Status CheckSysfsRoot(const std::string& sysfs_root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(sysfs_root, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sysfs-root ", sysfs_root,
                     " is not a directory: give / on a real host or a fixture/capture tree"));
  }
  return absl::OkStatus();
}

// Mutual TLS or --insecure on loopback, never both or neither.
absl::Status CheckTransportFlags(const AgentFlags& flags, const HostPort& listen) {
  const bool any_tls = !flags.tls_cert.empty() || !flags.tls_key.empty() || !flags.tls_ca.empty();
  const bool all_tls = !flags.tls_cert.empty() && !flags.tls_key.empty() && !flags.tls_ca.empty();
  if (flags.insecure && any_tls) {
    return absl::InvalidArgumentError(
        "--insecure and --tls-* were both given: choose mutual TLS (--tls-cert, --tls-key, "
        "--tls-ca) "
        "or --insecure for loopback development, not both");
  }
  if (!flags.insecure && !all_tls) {
    return absl::InvalidArgumentError(
        "mutual TLS needs all of --tls-cert, --tls-key and --tls-ca (deploy/pki.sh makes them); "
        "for loopback development pass --insecure instead");
  }
  if (flags.insecure && !IsLoopbackHost(listen.host)) {
    // Plaintext carries no caller identity, so anyone who reaches the port
    // would drive a root daemon: only the host itself may reach it.
    return absl::InvalidArgumentError(absl::StrCat(
        "--insecure serves plaintext gRPC with no caller identity, so it only listens on "
        "loopback (127.0.0.0/8, ::1, localhost), and --listen ",
        flags.listen,
        " is not: give this agent its certificate from deploy/pki.sh (--tls-cert, --tls-key, "
        "--tls-ca), or listen on 127.0.0.1 for development"));
  }
  if (flags.insecure && !flags.allow_roles.empty()) {
    return absl::InvalidArgumentError(
        "--allow-roles was given with --insecure, which has no caller identity to check roles "
        "against: use mutual TLS (--tls-cert, --tls-key, --tls-ca) or drop --allow-roles");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseAllowRoles(const std::string& allow_roles) {
  auto roles = ParseRoleList(allow_roles.empty() ? "controller" : allow_roles);
  if (!roles.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--allow-roles ", allow_roles, ": ", roles.status().message(),
                     "; write ROLE[,ROLE], e.g. --allow-roles controller"));
  }
  return roles;
}

absl::Status CheckThreadLimits(const AgentFlags& flags) {
  if (flags.worker_threads < 1 || flags.worker_threads > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--worker-threads is ", flags.worker_threads, "; give a number from 1 to 64"));
  }
  // Each long call holds a thread (and a device or sockets) for its whole run.
  if (flags.max_long_calls < 1 || flags.max_long_calls > 256) {
    return absl::InvalidArgumentError(absl::StrCat("--max-long-calls is ", flags.max_long_calls,
                                                   "; give a number from 1 to 256"));
  }
  return absl::OkStatus();
}

// The name goes to vtysh as an argument and into paths under /var/run/frr
// and /etc/frr, so only FRR's plain instance names pass: no '/', no '..',
// nothing a path or an option could be made of.
absl::Status CheckFrrPathspace(const std::string& pathspace) {
  const bool plain =
      pathspace.size() <= 32 && (pathspace.empty() || pathspace.front() != '-') &&
      std::all_of(pathspace.begin(), pathspace.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (plain) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--frr-pathspace '", pathspace.substr(0, 40),
      "' is not an FRR pathspace: give the NAME the FRR daemons were started with (-N NAME), "
      "1 to 32 letters, digits, '_' or '-' not starting with '-', or leave it out for the "
      "host's FRR"));
}

}  // namespace

absl::StatusOr<AgentOptions> ValidateAgentFlags(const AgentFlags& flags,
                                                const std::string& hostname) {
  AgentOptions options;
  absl::StatusOr<HostPort> listen = ParseListen(flags.listen);
  if (!listen.ok()) return listen.status();
  options.listen = *listen;
  options.listen_text = flags.listen;

  options.node_name = flags.node_name.empty() ? hostname : flags.node_name;
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError(
        "--node-name is empty and the hostname could not be read: pass --node-name as the plan "
        "names "
        "this node");
  }

  options.sysfs_root = flags.sysfs_root.empty() ? "/" : flags.sysfs_root;
  if (absl::Status root = CheckSysfsRoot(options.sysfs_root); !root.ok()) return root;
  if (absl::Status transport = CheckTransportFlags(flags, options.listen); !transport.ok()) {
    return transport;
  }
  absl::StatusOr<std::vector<std::string>> roles = ParseAllowRoles(flags.allow_roles);
  if (!roles.ok()) return roles.status();
  options.allow_roles = std::move(*roles);
  options.insecure = flags.insecure;
  options.tls = TlsPaths{flags.tls_ca, flags.tls_cert, flags.tls_key};
  options.port_file = flags.port_file;
  if (absl::Status threads = CheckThreadLimits(flags); !threads.ok()) return threads;
  options.worker_threads = flags.worker_threads;
  options.max_long_calls = flags.max_long_calls;
  if (absl::Status frr = CheckFrrPathspace(flags.frr_pathspace); !frr.ok()) return frr;
  options.frr_pathspace = flags.frr_pathspace;
  return options;
}

}  // namespace clustercert::agent
