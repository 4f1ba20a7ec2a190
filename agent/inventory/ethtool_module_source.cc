#include "agent/inventory/ethtool_module_source.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "agent/inventory/module_eeprom.h"
#include "agent/peer/ethtool_stats_source.h"
#include "common/errno_text.h"
#include "common/unique_fd.h"

namespace clustercert::agent::inventory {
namespace {

absl::StatusOr<UniqueFd> OpenSocket() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) fd = UniqueFd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return absl::UnavailableError(
        absl::StrCat("cannot open a socket for SIOCETHTOOL: ", ErrnoText(errno)));
  }
  return fd;
}

// Issues one ethtool command whose buffer starts with its u32 `cmd`; 0 or an errno.
int Ethtool(const UniqueFd& socket, const std::string& netdev, void* command) {
  ifreq request{};
  std::memcpy(request.ifr_name, netdev.data(), netdev.size());
  request.ifr_data = static_cast<char*>(command);
  int rc;
  do {
    rc = ::ioctl(socket.get(), SIOCETHTOOL, &request);
  } while (rc < 0 && errno == EINTR);
  return rc < 0 ? errno : 0;
}

absl::Status ModuleError(int err, const std::string& netdev, const char* command) {
  switch (err) {
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(absl::StrCat(netdev, ": no such netdev (", command, ")"));
    case EOPNOTSUPP:
      return absl::UnimplementedError(absl::StrCat(
          netdev,
          " has no pluggable module the kernel can read (EOPNOTSUPP): a virtual or on-board "
          "port"));
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(
          absl::StrCat(netdev, ": ethtool ", command, " was refused: ", ErrnoText(err)));
    default:
      return absl::UnavailableError(absl::StrCat(
          netdev, ": ethtool ", command, " failed (", ErrnoText(err),
          "): is a module plugged in? Reseat it, check `ethtool -m ", netdev, "`, and re-run"));
  }
}

// The size to read: what the kernel reports, bounded.
absl::StatusOr<uint32_t> ModuleSize(const UniqueFd& socket, const std::string& netdev) {
  ethtool_modinfo info{};
  info.cmd = ETHTOOL_GMODULEINFO;
  if (int err = Ethtool(socket, netdev, &info); err != 0) {
    return ModuleError(err, netdev, "ETHTOOL_GMODULEINFO");
  }
  if (info.eeprom_len == 0) {
    return absl::UnavailableError(
        absl::StrCat(netdev, ": the kernel reports a module EEPROM of 0 bytes (type ", info.type,
                     "): nothing to read; reseat the module and re-run"));
  }
  return std::min(info.eeprom_len, kModuleIoctlMaxBytes);
}

}  // namespace

absl::StatusOr<v1::CableModule> IoctlModuleSource::Read(const std::string& netdev) {
  if (!peer::IsValidNetdevName(netdev)) {
    // Not echoed: it failed the very check that makes a name safe to print.
    return absl::InvalidArgumentError(
        absl::StrCat("a ", netdev.size(), "-byte text is not a netdev name (1..", IFNAMSIZ - 1,
                     " printable characters, no '/', ':' or space): give an interface of this "
                     "host"));
  }
  auto socket = OpenSocket();
  if (!socket.ok()) return socket.status();
  auto size = ModuleSize(*socket, netdev);
  if (!size.ok()) return size.status();
  // ethtool_eeprom ends in a flexible array; u64 storage keeps it aligned.
  std::vector<uint64_t> buffer((sizeof(ethtool_eeprom) + *size + 7) / 8, 0);
  auto* eeprom = reinterpret_cast<ethtool_eeprom*>(buffer.data());
  eeprom->cmd = ETHTOOL_GMODULEEEPROM;
  eeprom->offset = 0;
  eeprom->len = *size;
  if (int err = Ethtool(*socket, netdev, eeprom); err != 0) {
    return ModuleError(err, netdev, "ETHTOOL_GMODULEEEPROM");
  }
  // The kernel writes back how much it read; never trust it past the buffer.
  const uint32_t got = std::min(eeprom->len, *size);
  v1::CableModule module = DecodeModuleEeprom(absl::MakeConstSpan(eeprom->data, got));
  module.set_source(absl::StrCat("ETHTOOL_GMODULEEEPROM (", got, " bytes)"));
  return module;
}

}  // namespace clustercert::agent::inventory
