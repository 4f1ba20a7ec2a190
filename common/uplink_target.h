#pragma once

#include <sys/socket.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/host_port.h"

// What an uplink run may reach and how big it may be. `controller plan
// check` and the agent's RunUplinkFlows apply the same rules, so a plan that
// checks is a request the agent takes, and a request that did not come from
// a checked plan (anyone who can reach the agent) gets no further: the agent
// fetches only http(s) URLs and sends only to literal IP addresses, never to
// an address that means "this host" or "everyone", with bounded flows and
// durations.
namespace clustercert {

// Parallel flows in one run: what the tcp peer engine's streams allow too,
// and far more than the plans use (flows: [1, 8]); each flow is a socket
// and a libcurl handle in the agent.
inline constexpr int kMaxUplinkFlows = 64;
// Seconds one run may last; a run holds a thread of the agent.
inline constexpr int kMaxUplinkDurationS = 120;
// Flow counts in uplink.flows: the runs each node makes to each target.
inline constexpr int kMaxUplinkFlowCounts = 8;
// Characters in a target URL.
inline constexpr size_t kMaxUplinkUrlChars = 2048;

// An http(s) URL split as the agent will fetch it.
struct UplinkUrl {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // a DNS name, an IPv4 address or an IPv6 address (no brackets)
  int port = 0;        // as written, else 80 or 443
};

// Parses an uplink target URL by the rules above: http:// or https:// only;
// at most kMaxUplinkUrlChars printable ASCII characters (no space, control
// character, non-ASCII byte or backslash); no user information ("user@");
// a host that is a dotted-quad IPv4 address, a bracketed IPv6 address
// without a zone, or a DNS name (labels of letters, digits and '-', at most
// 253 characters, not ending in a number, which libcurl would read as an
// IPv4 address in another notation); a port from 1 to 65535; a literal
// address must pass CheckUplinkAddress. The error is a clause saying what is
// wrong ("the scheme gopher is not http or https"), to follow the value in
// a sentence; it never repeats control characters.
absl::StatusOr<UplinkUrl> ParseUplinkUrl(absl::string_view url);

// Parses a tcp target, "10.10.9.1:5201" or "[fd00::9]:5201": a literal IP
// address (no name: the agent resolves nothing for tcp targets) that passes
// CheckUplinkAddress, and a port from 1 to 65535. Errors as ParseUplinkUrl.
absl::StatusOr<HostPort> ParseUplinkTcpAddress(absl::string_view address);

// Refuses, with a clause, a literal address that reaches no single remote
// host: unspecified (0.0.0.0/8, ::, which Linux connects to this host),
// multicast (224.0.0.0/4, ff00::/8) or the broadcast 255.255.255.255; IPv4
// inside IPv6 (::ffff:a.b.c.d) by its IPv4 rules. Loopback is allowed: an
// agent can be a sink on its own host.
absl::Status CheckUplinkAddress(absl::string_view ip);
// The same for an address the agent is about to connect to (after libcurl
// resolved a name); families other than IPv4 and IPv6 are refused.
absl::Status CheckUplinkSockaddr(const sockaddr* address);

}  // namespace clustercert
