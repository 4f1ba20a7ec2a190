#include "common/host_port.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace clustercert {

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text) {
  HostPort result;
  absl::string_view port_text;
  if (absl::StartsWith(text, "[")) {
    auto close = text.find(']');
    if (close == absl::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", text, "' is not [IPv6]:port; write an IPv6 address as [::1]:7070"));
    }
    result.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not host:port; write it like 192.168.100.11:7070"));
    }
    if (text.substr(0, colon).find(':') != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' looks like a bare IPv6 address; bracket it: [::1]:7070"));
    }
    result.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (result.host.empty() || !absl::SimpleAtoi(port_text, &result.port) || result.port < 1 ||
      result.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' has no valid port; the port must be a number from 1 to 65535"));
  }
  return result;
}

bool IsLoopbackHost(absl::string_view host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace clustercert
