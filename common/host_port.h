#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// "host:port" as used by --listen and the plan's `agent` key; IPv6 literals
// come bracketed ("[::1]:7070"). The host is returned without brackets.
struct HostPort {
  std::string host;
  int port = 0;
};

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(absl::string_view host);

}  // namespace clustercert
