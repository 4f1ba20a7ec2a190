#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/host_port.h"
#include "common/tls_files.h"

namespace clustercert::agent {

// The node-agent's command line, as given.
struct AgentFlags {
  std::string listen;
  std::string node_name;
  std::string sysfs_root = "/";
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  bool insecure = false;
  std::string allow_roles;  // --allow-roles ROLE[,ROLE]; empty: not given (controller)
  std::string port_file;
  int worker_threads = 2;
  int max_long_calls = 32;    // RunEndpoint/RunUplinkFlows at once
  std::string frr_pathspace;  // --frr-pathspace NAME: vtysh -N NAME; empty: FRR's default
};

// The validated form the daemon runs with.
struct AgentOptions {
  HostPort listen;
  std::string listen_text;
  std::string node_name;
  std::string sysfs_root;
  bool insecure = false;
  TlsPaths tls;
  // The certificate roles that may call this agent over mutual TLS.
  std::vector<std::string> allow_roles;
  std::string port_file;
  int worker_threads = 2;
  int max_long_calls = 32;
  // The FRR instance whose BGP state the inventory reads (vtysh -N); empty
  // for the host's default one.
  std::string frr_pathspace;
};

// Checks the flags together; every error says which flag and how to fix it.
// `hostname` fills --node-name when it is not given. --insecure is refused
// unless --listen is a loopback address: plaintext has no caller identity.
absl::StatusOr<AgentOptions> ValidateAgentFlags(const AgentFlags& flags,
                                                const std::string& hostname);

}  // namespace clustercert::agent
