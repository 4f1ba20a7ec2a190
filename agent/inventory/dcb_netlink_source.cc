#include "agent/inventory/dcb_netlink_source.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/inventory/netlink_socket.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kReceiveBufferBytes = size_t{64} * 1024;
constexpr uint32_t kSequence = 1;

absl::Status NetlinkError(int err, const std::string& netdev, absl::string_view what) {
  const char* name = strerrorname_np(err);
  std::string errno_name = name != nullptr ? name : absl::StrCat("errno ", err);
  switch (err) {
    case EOPNOTSUPP:
      return absl::UnimplementedError(
          absl::StrCat(netdev, ": DCB netlink not supported by the driver (", errno_name, ")"));
    case ENODEV:
      return absl::NotFoundError(absl::StrCat(netdev, ": no such netdev (", errno_name, ")"));
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(
          absl::StrCat(netdev, ": DCB netlink ", what, " denied (", errno_name, ")"));
    case EAGAIN:
    case ETIMEDOUT:
      return absl::DeadlineExceededError(
          absl::StrCat(netdev, ": no DCB netlink answer from the kernel (", errno_name, ")"));
    default:
      return absl::UnavailableError(absl::StrCat(
          netdev, ": DCB netlink ", what, " failed: ", std::strerror(err), " (", errno_name, ")"));
  }
}

absl::StatusOr<DcbSettings> ParseIeee(const char* data, size_t length, const std::string& netdev,
                                      std::string source) {
  DcbSettings settings;
  settings.source = std::move(source);
  bool app_table_seen = false;
  bool well_formed =
      ForEachAttribute(data, length, [&](uint16_t type, const char* payload, size_t size) {
        if (type == DCB_ATTR_IEEE_PFC) {
          if (size >= offsetof(ieee_pfc, pfc_en) + 1) {
            ieee_pfc pfc{};
            std::memcpy(&pfc, payload, std::min(size, sizeof(pfc)));
            settings.pfc_enabled_mask = pfc.pfc_en;
          } else {
            settings.pfc_reason = absl::StrCat("DCB_ATTR_IEEE_PFC too short (", size, " bytes)");
          }
        } else if (type == DCB_ATTR_IEEE_APP_TABLE) {
          app_table_seen = true;
          std::vector<DcbDscpPriority> entries;
          bool table_ok = ForEachAttribute(
              payload, size, [&](uint16_t app_type, const char* app, size_t app_size) {
                if (app_type != DCB_ATTR_IEEE_APP || app_size < sizeof(dcb_app)) return;
                dcb_app entry;
                std::memcpy(&entry, app, sizeof(entry));
                if (entry.selector != IEEE_8021QAZ_APP_SEL_DSCP) return;
                entries.push_back(
                    DcbDscpPriority{static_cast<uint8_t>(entry.protocol), entry.priority});
              });
          if (table_ok) {
            settings.dscp_priorities = std::move(entries);
          } else {
            settings.dscp_reason = "DCB_ATTR_IEEE_APP_TABLE is malformed";
          }
        }
      });
  if (!well_formed) {
    return absl::DataLossError(absl::StrCat(netdev, ": malformed DCB_ATTR_IEEE reply"));
  }
  if (!settings.pfc_enabled_mask.has_value() && settings.pfc_reason.empty()) {
    settings.pfc_reason = "the driver reports no IEEE PFC (no DCB_ATTR_IEEE_PFC in the reply)";
  }
  if (!app_table_seen) settings.dscp_reason = "the reply has no DCB_ATTR_IEEE_APP_TABLE";
  return settings;
}

}  // namespace

DcbNetlinkSource::DcbNetlinkSource(absl::Duration timeout) : timeout_(timeout) {}

absl::StatusOr<DcbSettings> DcbNetlinkSource::Read(const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError(absl::StrCat("'", netdev, "' is not a netdev name"));
  }
  auto socket = NetlinkSocket::Open(timeout_);
  if (!socket.ok()) return socket.status();

  // nlmsghdr, dcbmsg, then one DCB_ATTR_IFNAME string attribute.
  alignas(NLMSG_ALIGNTO) char
      request[NLMSG_SPACE(sizeof(dcbmsg)) + NLA_HDRLEN + NLA_ALIGN(IFNAMSIZ)] = {};
  auto* header = reinterpret_cast<nlmsghdr*>(request);
  header->nlmsg_type = RTM_GETDCB;
  header->nlmsg_flags = NLM_F_REQUEST;
  header->nlmsg_seq = kSequence;
  auto* dcb = reinterpret_cast<dcbmsg*>(NLMSG_DATA(header));
  dcb->dcb_family = AF_UNSPEC;
  dcb->cmd = DCB_CMD_IEEE_GET;
  auto* attr = reinterpret_cast<nlattr*>(request + NLMSG_SPACE(sizeof(dcbmsg)));
  attr->nla_type = DCB_ATTR_IFNAME;
  attr->nla_len = NLA_HDRLEN + netdev.size() + 1;
  std::memcpy(reinterpret_cast<char*>(attr) + NLA_HDRLEN, netdev.c_str(), netdev.size() + 1);
  header->nlmsg_len = NLMSG_SPACE(sizeof(dcbmsg)) + NLA_ALIGN(attr->nla_len);

  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(socket->fd(), request, header->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) < 0) {
    return NetlinkError(errno, netdev, "request");
  }

  const std::string source = absl::StrCat("rtnetlink DCB_CMD_IEEE_GET ", netdev);
  std::vector<char> buffer(kReceiveBufferBytes);
  while (true) {
    ssize_t n = ::recv(socket->fd(), buffer.data(), buffer.size(), MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return NetlinkError(errno, netdev, "reply");
    }
    if (static_cast<size_t>(n) > buffer.size()) {
      return absl::ResourceExhaustedError(
          absl::StrCat(netdev, ": DCB netlink reply of ", n, " bytes exceeds the buffer"));
    }
    size_t remaining = static_cast<size_t>(n);
    for (auto* msg = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(msg, remaining);
         msg = NLMSG_NEXT(msg, remaining)) {
      if (msg->nlmsg_seq != kSequence) continue;
      if (msg->nlmsg_type == NLMSG_ERROR) {
        if (msg->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
          return absl::DataLossError(absl::StrCat(netdev, ": truncated netlink error"));
        }
        const auto* error = reinterpret_cast<const nlmsgerr*>(NLMSG_DATA(msg));
        if (error->error == 0) continue;  // an ACK; the answer comes separately
        return NetlinkError(-error->error, netdev, "request");
      }
      if (msg->nlmsg_type != RTM_GETDCB) continue;
      if (msg->nlmsg_len < NLMSG_SPACE(sizeof(dcbmsg))) {
        return absl::DataLossError(absl::StrCat(netdev, ": truncated DCB netlink reply"));
      }
      const char* attrs = reinterpret_cast<const char*>(msg) + NLMSG_SPACE(sizeof(dcbmsg));
      size_t attrs_length = msg->nlmsg_len - NLMSG_SPACE(sizeof(dcbmsg));
      const char* ieee = nullptr;
      size_t ieee_length = 0;
      ForEachAttribute(attrs, attrs_length, [&](uint16_t type, const char* payload, size_t size) {
        if (type == DCB_ATTR_IEEE) {
          ieee = payload;
          ieee_length = size;
        }
      });
      if (ieee == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat(netdev, ": DCB netlink reply carries no IEEE 802.1Qaz settings"));
      }
      return ParseIeee(ieee, ieee_length, netdev, source);
    }
  }
}

}  // namespace clustercert::agent::inventory
