#include "common/host_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace clustercert {
namespace {

bool IsIpv4(const std::string& text) {
  in_addr address;
  return inet_pton(AF_INET, text.c_str(), &address) == 1;
}

bool IsIpv6(std::string text) {
  // A zone ("fe80::1%eth0") names a local interface; the address before it
  // is what must be well formed.
  const size_t zone = text.find('%');
  if (zone != std::string::npos) {
    if (zone + 1 == text.size()) return false;
    text.resize(zone);
  }
  in6_addr address;
  return inet_pton(AF_INET6, text.c_str(), &address) == 1;
}

bool LooksLikeIpv4(absl::string_view host) {
  for (char c : host) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

absl::Status CheckHostName(absl::string_view host) {
  if (host.empty()) return absl::InvalidArgumentError("the host is empty");
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
      return absl::InvalidArgumentError(
          absl::StrCat("the host contains '", std::string(1, c), "'"));
    }
  }
  if (LooksLikeIpv4(host) && !IsIpv4(std::string(host))) {
    return absl::InvalidArgumentError(absl::StrCat(host, " is not a valid IPv4 address"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ParsePort(absl::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("the port is missing");
  if (text.size() > 5) {
    return absl::InvalidArgumentError(absl::StrCat("the port ", text, " is outside 1..65535"));
  }
  int port = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(absl::StrCat("the port ", text, " is not a number"));
    }
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("the port ", text, " is outside 1..65535"));
  }
  return port;
}

}  // namespace

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

bool IsIpAddress(absl::string_view text) {
  const std::string host(text);
  return IsIpv4(host) || IsIpv6(host);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text) {
  HostPort result;
  absl::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("the '[' before the IPv6 address is never closed");
    }
    result.host = absl::AsciiStrToLower(text.substr(1, close - 1));
    if (!IsIpv6(result.host)) {
      return absl::InvalidArgumentError(absl::StrCat(result.host, " is not a valid IPv6 address"));
    }
    absl::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return absl::InvalidArgumentError("the port is missing");
    }
    port_text = rest.substr(1);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError("the port is missing");
    }
    absl::string_view host = text.substr(0, colon);
    if (host.find(':') != absl::string_view::npos) {
      return absl::InvalidArgumentError("an IPv6 address needs brackets, as in [fd00::11]:7070");
    }
    if (absl::Status status = CheckHostName(host); !status.ok()) return status;
    result.host = absl::AsciiStrToLower(host);
    port_text = text.substr(colon + 1);
  }
  absl::StatusOr<int> port = ParsePort(port_text);
  if (!port.ok()) return port.status();
  result.port = *port;
  return result;
}

bool IsLoopbackHost(absl::string_view host) {
  if (host == "localhost") return true;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string address(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace clustercert
