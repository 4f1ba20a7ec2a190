#include "common/uplink_target.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/printable.h"

namespace clustercert {
namespace {

constexpr size_t kMaxDnsNameChars = 253;
constexpr size_t kMaxDnsLabelChars = 63;

absl::Status Refused(std::string clause) { return absl::InvalidArgumentError(std::move(clause)); }

absl::Status CheckIpv4(uint32_t host_order, absl::string_view shown) {
  if ((host_order >> 24) == 0) {
    return Refused(absl::StrCat("the address ", shown,
                                " is an unspecified (0.0.0.0/8) address, which Linux connects to "
                                "this host itself; give the storage server's address"));
  }
  if ((host_order >> 28) == 0xe) {
    return Refused(absl::StrCat(
        "the address ", shown,
        " is a multicast address (224.0.0.0/4); give the storage server's own address"));
  }
  if (host_order == 0xffffffffu) {
    return Refused(absl::StrCat(
        "the address ", shown, " is the broadcast address; give the storage server's own address"));
  }
  return absl::OkStatus();
}

absl::Status CheckIpv6(const in6_addr& address, absl::string_view shown) {
  if (IN6_IS_ADDR_UNSPECIFIED(&address)) {
    return Refused(absl::StrCat("the address ", shown,
                                " is the unspecified address (::), which Linux connects to this "
                                "host itself; give the storage server's address"));
  }
  if (IN6_IS_ADDR_MULTICAST(&address)) {
    return Refused(
        absl::StrCat("the address ", shown,
                     " is a multicast address (ff00::/8); give the storage server's own address"));
  }
  if (IN6_IS_ADDR_V4MAPPED(&address)) {
    uint32_t v4;
    std::memcpy(&v4, address.s6_addr + 12, sizeof(v4));
    return CheckIpv4(ntohl(v4), shown);
  }
  return absl::OkStatus();
}

// The WHATWG URL rule libcurl follows too: a host whose last label is a
// number (decimal, or 0x hex) is an IPv4 address in some notation
// ("2130706433", "0x7f.1", "127.1"), so it must be a plain dotted quad.
bool EndsInNumber(absl::string_view host) {
  absl::ConsumeSuffix(&host, ".");
  const size_t dot = host.rfind('.');
  absl::string_view last = dot == absl::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  if (std::all_of(last.begin(), last.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    return true;
  }
  if (absl::ConsumePrefix(&last, "0x") || absl::ConsumePrefix(&last, "0X")) {
    return std::all_of(last.begin(), last.end(), [](char c) { return absl::ascii_isxdigit(c); });
  }
  return false;
}

absl::Status CheckDnsName(absl::string_view host) {
  absl::string_view name = host;
  absl::ConsumeSuffix(&name, ".");  // a fully qualified name's root dot
  if (name.empty()) return Refused("the host is missing");
  if (name.size() > kMaxDnsNameChars) {
    return Refused(absl::StrCat("the host name is longer than ", kMaxDnsNameChars, " characters"));
  }
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    const bool valid = !label.empty() && label.size() <= kMaxDnsLabelChars &&
                       label.front() != '-' && label.back() != '-' &&
                       std::all_of(label.begin(), label.end(), [](char c) {
                         return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
                       });
    if (!valid) {
      return Refused(absl::StrCat(
          "the host ", host,
          " is not a DNS name (labels of 1 to 63 letters, digits and '-', not starting or "
          "ending with '-'), a dotted-quad IPv4 address or a bracketed IPv6 address"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ParsePort(absl::string_view text) {
  const bool digits =
      !text.empty() && text.size() <= 5 &&
      std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); });
  int port = 0;
  if (digits) {
    for (char c : text) port = port * 10 + (c - '0');
  }
  if (!digits || port < 1 || port > 65535) {
    return Refused(
        absl::StrCat("the port '", PrintableText(text, 16), "' is not a number from 1 to 65535"));
  }
  return port;
}

}  // namespace

absl::Status CheckUplinkAddress(absl::string_view ip) {
  const std::string text(ip);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return CheckIpv4(ntohl(v4.s_addr), text);
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return CheckIpv6(v6, text);
  return Refused(absl::StrCat(PrintableText(ip, 64), " is not a literal IPv4 or IPv6 address"));
}

absl::Status CheckUplinkSockaddr(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    return CheckIpv4(ntohl(v4->sin_addr.s_addr), text);
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    return CheckIpv6(v6->sin6_addr, text);
  }
  return Refused(absl::StrCat("address family ", address->sa_family,
                              " is neither IPv4 nor IPv6; give an IP address or DNS name"));
}

namespace {

// Too long, or a byte that is not printable ASCII or is a backslash.
absl::Status CheckUrlCharacters(absl::string_view url) {
  if (url.size() > kMaxUplinkUrlChars) {
    return Refused(absl::StrCat("the URL is longer than ", kMaxUplinkUrlChars, " characters"));
  }
  for (size_t i = 0; i < url.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(url[i]);
    if (c <= 0x20 || c >= 0x7f || c == '\\') {
      return Refused(
          absl::StrCat("the URL has ",
                       c == '\\' ? "a backslash" : "a space, control character or non-ASCII byte",
                       " at character ", i + 1, "; percent-encode it"));
    }
  }
  return absl::OkStatus();
}

// The URL's host and port, views into the URL; the host is checked.
struct Authority {
  absl::string_view host;
  absl::string_view port_text;
  bool has_port = false;
};

// "[v6]" or "[v6]:port".
absl::StatusOr<Authority> ParseBracketedAuthority(absl::string_view authority) {
  Authority parts;
  const size_t close = authority.find(']');
  if (close == absl::string_view::npos)
    return Refused("the '[' before the IPv6 host is not closed");
  parts.host = authority.substr(1, close - 1);
  const absl::string_view after = authority.substr(close + 1);
  if (!after.empty()) {
    if (after.front() != ':') {
      return Refused("the bracketed IPv6 host is followed by something other than :port");
    }
    parts.has_port = true;
    parts.port_text = after.substr(1);
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, std::string(parts.host).c_str(), &v6) != 1) {
    return Refused(
        absl::StrCat("[", parts.host, "] is not an IPv6 address (zones are not accepted)"));
  }
  if (absl::Status address = CheckIpv6(v6, parts.host); !address.ok()) return address;
  return parts;
}

// "name", "name:port", "a.b.c.d" or "a.b.c.d:port".
absl::StatusOr<Authority> ParsePlainAuthority(absl::string_view authority) {
  Authority parts;
  parts.host = authority;
  const size_t colon = authority.find(':');
  if (colon != absl::string_view::npos) {
    parts.host = authority.substr(0, colon);
    parts.has_port = true;
    parts.port_text = authority.substr(colon + 1);
  }
  if (parts.host.empty()) return Refused("the host is missing");
  if (EndsInNumber(parts.host)) {
    in_addr v4;
    if (inet_pton(AF_INET, std::string(parts.host).c_str(), &v4) != 1) {
      return Refused(absl::StrCat("the host ", parts.host,
                                  " is not a dotted-quad IPv4 address (such as 10.10.9.1)"));
    }
    if (absl::Status address = CheckIpv4(ntohl(v4.s_addr), parts.host); !address.ok()) {
      return address;
    }
  } else if (absl::Status name = CheckDnsName(parts.host); !name.ok()) {
    return name;
  }
  return parts;
}

absl::StatusOr<Authority> ParseAuthority(absl::string_view authority) {
  if (authority.find('@') != absl::string_view::npos) {
    return Refused(
        "the URL has user information before '@'; the agent sends no credentials, so give an "
        "object it may read without them");
  }
  if (absl::StartsWith(authority, "[")) return ParseBracketedAuthority(authority);
  return ParsePlainAuthority(authority);
}

}  // namespace

absl::StatusOr<UplinkUrl> ParseUplinkUrl(absl::string_view url) {
  if (absl::Status characters = CheckUrlCharacters(url); !characters.ok()) return characters;
  const size_t separator = url.find("://");
  if (separator == absl::string_view::npos) {
    return Refused("the URL does not start with http:// or https://");
  }
  UplinkUrl parsed;
  parsed.scheme = absl::AsciiStrToLower(url.substr(0, separator));
  if (parsed.scheme != "http" && parsed.scheme != "https") {
    return Refused(absl::StrCat("the scheme ", PrintableText(url.substr(0, separator), 32),
                                " is not http or https; the agent fetches nothing else"));
  }
  const absl::string_view rest = url.substr(separator + 3);
  absl::StatusOr<Authority> authority = ParseAuthority(rest.substr(0, rest.find_first_of("/?#")));
  if (!authority.ok()) return authority.status();
  parsed.host = absl::AsciiStrToLower(authority->host);
  if (authority->has_port) {
    absl::StatusOr<int> port = ParsePort(authority->port_text);
    if (!port.ok()) return port.status();
    parsed.port = *port;
  } else {
    parsed.port = parsed.scheme == "https" ? 443 : 80;
  }
  return parsed;
}

absl::StatusOr<HostPort> ParseUplinkTcpAddress(absl::string_view address) {
  if (address.size() > kMaxUplinkUrlChars ||
      !std::all_of(address.begin(), address.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    return Refused("the address has a space, control character or non-ASCII byte");
  }
  absl::StatusOr<HostPort> parsed = ParseHostPort(address);
  if (!parsed.ok()) return parsed.status();
  if (!IsIpAddress(parsed->host) || parsed->host.find('%') != std::string::npos) {
    return Refused(absl::StrCat("the host ", parsed->host,
                                " is not a literal IP address (the agent resolves no names for "
                                "tcp targets)"));
  }
  if (absl::Status checked = CheckUplinkAddress(parsed->host); !checked.ok()) return checked;
  return parsed;
}

}  // namespace clustercert
