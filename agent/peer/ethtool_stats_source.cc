#include "agent/peer/ethtool_stats_source.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/counter_deltas.h"

namespace clustercert::agent::peer {
namespace {

// A driver reporting more statistics than this is not believed (mlx5 has a
// few thousand with many channels); it bounds the buffers below.
constexpr uint32_t kMaxStats = 1 << 16;

// Owns the datagram socket SIOCETHTOOL is issued on.
class IoctlSocket {
 public:
  static absl::StatusOr<IoctlSocket> Open() {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot open a socket for SIOCETHTOOL: ", std::strerror(errno)));
    }
    return IoctlSocket(fd);
  }

  IoctlSocket(IoctlSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  IoctlSocket& operator=(IoctlSocket&&) = delete;
  IoctlSocket(const IoctlSocket&) = delete;
  IoctlSocket& operator=(const IoctlSocket&) = delete;
  ~IoctlSocket() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Issues one ethtool command whose buffer starts with its u32 `cmd`.
  int Ethtool(const std::string& netdev, void* command) const {
    ifreq request{};
    std::memcpy(request.ifr_name, netdev.data(), netdev.size());
    request.ifr_data = static_cast<char*>(command);
    int rc;
    do {
      rc = ::ioctl(fd_, SIOCETHTOOL, &request);
    } while (rc < 0 && errno == EINTR);
    return rc < 0 ? errno : 0;
  }

 private:
  explicit IoctlSocket(int fd) : fd_(fd) {}
  int fd_;
};

absl::Status EthtoolError(int err, const std::string& netdev, const char* command) {
  std::string message =
      absl::StrCat(netdev, ": ethtool ", command, " failed: ", std::strerror(err));
  switch (err) {
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(absl::StrCat(netdev, ": no such netdev (", command, ")"));
    case EOPNOTSUPP:
      return absl::UnimplementedError(
          absl::StrCat(netdev, ": the driver has no ethtool statistics (", command, ")"));
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

// How many ETH_SS_STATS strings the driver has; Unimplemented when none.
absl::StatusOr<uint32_t> StatsCount(const IoctlSocket& socket, const std::string& netdev) {
  // ethtool_sset_info ends in a flexible array: one u32 per set bit asked.
  uint64_t buffer[(sizeof(ethtool_sset_info) + sizeof(uint32_t) + 7) / 8] = {};
  auto* sset = reinterpret_cast<ethtool_sset_info*>(buffer);
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = uint64_t{1} << ETH_SS_STATS;
  int err = socket.Ethtool(netdev, sset);
  if (err == 0) {
    // The kernel clears the bits of sets the driver cannot count.
    if ((sset->sset_mask & (uint64_t{1} << ETH_SS_STATS)) == 0) {
      return absl::UnimplementedError(
          absl::StrCat(netdev, ": the driver has no ethtool statistics (ETH_SS_STATS)"));
    }
    return sset->data[0];
  }
  if (err != EOPNOTSUPP) return EthtoolError(err, netdev, "ETHTOOL_GSSET_INFO");
  // Kernels before 2.6.34 only report the count through the driver info.
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  err = socket.Ethtool(netdev, &info);
  if (err != 0) return EthtoolError(err, netdev, "ETHTOOL_GDRVINFO");
  if (info.n_stats == 0) {
    return absl::UnimplementedError(
        absl::StrCat(netdev, ": the driver has no ethtool statistics (n_stats 0)"));
  }
  return info.n_stats;
}

// mlx5's per-priority traffic statistics, rx_prio<N>_bytes, tx_prio<N>_bytes,
// rx_prio<N>_packets and tx_prio<N>_packets (N = 0..7): they show which
// 802.1p priority a test's bytes travelled on (lossless.priority).
bool IsPriorityTrafficStat(const std::string& name) {
  auto parsed = counters::ParsePriorityCounter(name);
  return parsed.has_value() && (parsed->suffix == "bytes" || parsed->suffix == "packets");
}

// mlx5's pre-FEC errors per lane, rx_err_lane_<N>_phy (en_stats.c fills them
// from PPCNT's phy_corrected_bits_lane<N>; counters.rst: "physical raw errors
// per lane ... before FEC corrections"): the BER of each lane of the cable.
bool IsLaneErrorStat(const std::string& name) {
  return counters::ParseLaneErrorCounter(name).has_value();
}

}  // namespace

bool IsValidNetdevName(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c > 0x20 && c < 0x7f && c != '/' && c != ':'; });
}

bool IsKeptEthtoolStat(const std::string& name) {
  // The mlx5 physical-port link health counters (kernel
  // Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst):
  // the pair verdict fails a cell on the first four (rx_pcs_symbol_err_phy,
  // rx_symbol_err_phy and rx_crc_errors_phy are what FEC did not correct:
  // the post-FEC errors); FEC-corrected bits, the per-lane pre-FEC errors and
  // rx_bits_phy (the denominator of a bit error rate) give each cell's BER.
  // outbound_pci_buffer_overflow counts received packets dropped for lack of
  // PCIe buffer towards the host: a drop lossless.drops judges.
  static const auto* exact = new std::set<std::string>{
      "link_down_events_phy",        "rx_symbol_err_phy",     "rx_pcs_symbol_err_phy",
      "rx_crc_errors_phy",           "rx_corrected_bits_phy", "rx_bits_phy",
      "outbound_pci_buffer_overflow"};
  return name.find("pause") != std::string::npos || name.find("discard") != std::string::npos ||
         name.find("out_of_buffer") != std::string::npos || exact->count(name) > 0 ||
         IsPriorityTrafficStat(name) || IsLaneErrorStat(name);
}

absl::StatusOr<std::map<std::string, uint64_t>> IoctlEthtoolStatsSource::Read(
    const std::string& netdev) {
  if (!IsValidNetdevName(netdev)) {
    // Not echoed: it failed the very check that makes a name safe to print.
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", netdev.size(), "-byte text is not a netdev name (1..", IFNAMSIZ - 1,
        " printable characters, no '/', ':' or space): give an interface of this host"));
  }
  auto socket = IoctlSocket::Open();
  if (!socket.ok()) return socket.status();
  auto count = StatsCount(*socket, netdev);
  if (!count.ok()) return count.status();
  if (*count > kMaxStats) {
    return absl::UnavailableError(absl::StrCat(netdev, ": the driver reports ", *count,
                                               " ethtool statistics, more than ", kMaxStats));
  }
  const uint32_t n = *count;
  std::map<std::string, uint64_t> kept;
  if (n == 0) return kept;

  // Both replies are a header followed by n entries; u64 storage keeps the
  // trailing arrays aligned.
  std::vector<uint64_t> strings_buffer(
      (sizeof(ethtool_gstrings) + size_t{n} * ETH_GSTRING_LEN + 7) / 8 + 1, 0);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buffer.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  if (int err = socket->Ethtool(netdev, strings); err != 0) {
    return EthtoolError(err, netdev, "ETHTOOL_GSTRINGS");
  }

  std::vector<uint64_t> stats_buffer(sizeof(ethtool_stats) / 8 + size_t{n} + 1, 0);
  auto* stats = reinterpret_cast<ethtool_stats*>(stats_buffer.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  if (int err = socket->Ethtool(netdev, stats); err != 0) {
    return EthtoolError(err, netdev, "ETHTOOL_GSTATS");
  }

  // The statistic count can change between calls (channels reconfigured);
  // only the entries both replies cover line up.
  const uint32_t usable = std::min({n, strings->len, stats->n_stats});
  for (uint32_t i = 0; i < usable; ++i) {
    const char* raw = reinterpret_cast<const char*>(strings->data) + size_t{i} * ETH_GSTRING_LEN;
    std::string name(raw, strnlen(raw, ETH_GSTRING_LEN));
    if (IsKeptEthtoolStat(name)) kept[name] = stats->data[i];
  }
  return kept;
}

}  // namespace clustercert::agent::peer
