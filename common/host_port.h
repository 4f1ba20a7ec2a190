#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert {

// A network endpoint written "host:port" in the plan: a host name, an IPv4
// address, or an IPv6 address in brackets ("[fd00::11]:7070").
struct HostPort {
  std::string host;  // without brackets; lower case
  int port = 0;      // 1..65535

  // "host:port", with brackets around an IPv6 host; equal endpoints print
  // the same, so this is the key for duplicate detection.
  std::string ToString() const;
};

// Parses "host:port". The error message is a clause saying what is wrong
// ("the port 70700 is outside 1..65535"), meant to follow the value in a
// plan error sentence.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);

// True when `text` is a literal IPv4 or IPv6 address (no brackets, no port).
bool IsIpAddress(absl::string_view text);

// True for 127.0.0.0/8, ::1 (bracketed or not) and "localhost", parsed as
// addresses: the DNS name 127.example.com is not loopback.
bool IsLoopbackHost(absl::string_view host);

}  // namespace clustercert
