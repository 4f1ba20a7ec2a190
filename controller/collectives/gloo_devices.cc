#include "controller/collectives/gloo_devices.h"

#include <arpa/inet.h>

#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sweep/device_report.h"

namespace clustercert::controller {
namespace {

constexpr std::string_view kAskedPrefix = "transport ";
// Mismatches named in the finding's message before "and N more".
constexpr size_t kMismatchesNamed = 3;

// "node1 rank 3: TEXT" -> node, rank and TEXT; nullopt for another shape.
struct RankNote {
  std::string node;
  int rank = -1;
  std::string text;
};
std::optional<RankNote> SplitRankNote(const std::string& note) {
  const size_t colon = note.find(": ");
  if (colon == std::string::npos) return std::nullopt;
  const std::string_view head = std::string_view(note).substr(0, colon);
  const size_t at = head.rfind(" rank ");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  RankNote out;
  if (!absl::SimpleAtoi(std::string(head.substr(at + 6)), &out.rank) || out.rank < 0)
    return std::nullopt;
  out.node = std::string(head.substr(0, at));
  out.text = note.substr(colon + 2);
  return out;
}

void SetCreated(const sweep::DeviceReport& report, v1::GlooDevice& device) {
  device.set_transport(report.transport);
  device.set_interface(report.interface);
  device.set_address(report.address);
  device.set_bound(report.bound);
  device.set_ib_device(report.ib_device);
  device.set_ib_port(report.ib_port);
  device.set_gid_index(report.gid_index);
  device.set_description(report.description);
}

// The same address in any spelling ("fd00::1" and "fd00:0::1"); a name that
// is no address compares as text.
bool SameAddress(const std::string& a, const std::string& b) {
  unsigned char x[16] = {}, y[16] = {};
  for (int family : {AF_INET, AF_INET6}) {
    if (inet_pton(family, a.c_str(), x) == 1 && inet_pton(family, b.c_str(), y) == 1) {
      return std::string_view(reinterpret_cast<char*>(x), 16) ==
             std::string_view(reinterpret_cast<char*>(y), 16);
    }
  }
  return a == b;
}

// What the device is, in a few words: "tcp on lo 127.0.0.1" or "ibverbs
// mlx5_0 port 1 gid 3".
std::string Created(const v1::GlooDevice& device) {
  if (device.transport() == "tcp") {
    return absl::StrCat("tcp on ", device.interface().empty() ? "?" : device.interface(), " ",
                        device.address().empty() ? "?" : device.address());
  }
  if (device.transport() == "ibverbs") {
    return absl::StrCat("ibverbs ", device.ib_device(), " port ", device.ib_port(), " gid ",
                        device.gid_index());
  }
  return device.description();
}

// Why this rank's device is not what was planned and asked; "" when it is.
std::string Mismatch(const v1::GlooDevice& device, const std::string& expected) {
  const std::string who = absl::StrCat(device.node(), " rank ", device.rank());
  if (device.transport() != expected) {
    return absl::StrCat(who, ": the plan asks for gloo ", expected, ", gloo created ",
                        Created(device));
  }
  // The arguments: "tcp ADDRESS" | "ibverbs DEVICE port P gid G".
  const std::vector<std::string> asked = absl::StrSplit(device.asked(), ' ');
  if (expected == "tcp" && asked.size() >= 2 && !SameAddress(asked[1], device.address())) {
    return absl::StrCat(who, ": the plan gives the data address ", asked[1],
                        ", gloo's tcp device bound ", Created(device));
  }
  if (expected == "ibverbs" && asked.size() >= 6 &&
      (asked[1] != device.ib_device() || asked[3] != std::to_string(device.ib_port()) ||
       asked[5] != std::to_string(device.gid_index()))) {
    return absl::StrCat(who, ": the plan asks for ", device.asked(), ", gloo created ",
                        Created(device));
  }
  return "";
}

}  // namespace

void RecordGlooDevices(const std::vector<std::string>& notes, v1::CollectiveSweep& sweep) {
  std::map<int, v1::GlooDevice> by_rank;
  for (const std::string& note : notes) {
    std::optional<RankNote> split = SplitRankNote(note);
    if (!split) continue;
    auto found = by_rank.find(split->rank);
    if (found == by_rank.end()) {
      if (by_rank.size() >= static_cast<size_t>(kMaxGlooDevices)) continue;
      found = by_rank.emplace(split->rank, v1::GlooDevice()).first;
      found->second.set_node(split->node);
      found->second.set_rank(split->rank);
    }
    if (split->text.rfind(kAskedPrefix, 0) == 0) {
      found->second.set_asked(split->text.substr(kAskedPrefix.size()));
    } else if (auto report = sweep::ParseDeviceNote(split->text)) {
      SetCreated(*report, found->second);
    }
  }
  std::string transport;
  for (auto& [rank, device] : by_rank) {
    if (!device.transport().empty()) {
      transport =
          transport.empty() || transport == device.transport() ? device.transport() : "mixed";
    }
    *sweep.add_gloo_devices() = std::move(device);
  }
  sweep.set_transport(transport);
}

v1::Finding JudgeGlooDevices(const checks::FindingBuilder& builder,
                             const v1::CollectiveSweep& sweep, const std::string& expected) {
  std::vector<std::string> mismatches;
  std::vector<std::string> silent;
  std::map<std::string, int> created;  // "tcp on lo 127.0.0.1" -> ranks
  for (const v1::GlooDevice& device : sweep.gloo_devices()) {
    if (device.transport().empty()) {
      silent.push_back(absl::StrCat(device.node(), " rank ", device.rank()));
      continue;
    }
    ++created[Created(device)];
    if (std::string why = Mismatch(device, expected); !why.empty()) mismatches.push_back(why);
  }
  std::vector<std::string> seen;
  seen.reserve(created.size());
  for (const auto& [what, ranks] : created) seen.push_back(absl::StrCat(what, " x", ranks));
  const std::string observed = absl::StrCat("gloo ", absl::StrJoin(seen, ", "));
  const std::string planned = absl::StrCat("gloo ", expected);
  if (!mismatches.empty()) {
    const size_t named = std::min(mismatches.size(), kMismatchesNamed);
    std::string message =
        absl::StrCat(builder.subject(), " ranks did not run on the transport the plan asks for: ",
                     absl::StrJoin(mismatches.begin(), mismatches.begin() + named, "; "));
    if (mismatches.size() > named) {
      absl::StrAppend(&message, "; and ", mismatches.size() - named, " more rank(s)");
    }
    return builder.Fail(observed, planned, absl::StrCat(message, "."),
                        "Set collectives.transport to the transport the nodes can run, give each "
                        "node the data_ip of its data interface, or fix the rail the plan names "
                        "so ibverbs can open it.");
  }
  const int reported = sweep.gloo_devices_size() - static_cast<int>(silent.size());
  if (!silent.empty() || reported < sweep.ranks()) {
    const std::string reason =
        silent.empty()
            ? absl::StrCat(reported, " of ", sweep.ranks(), " rank(s) reported their device")
            : absl::StrCat(absl::StrJoin(silent, ", "),
                           " did not report the device gloo created (a collective-worker-gloo "
                           "older than the controller: install both from one release)");
    return builder.Unknown(checks::MissingBecause(reason), "transport", planned);
  }
  return builder.Pass(observed, planned,
                      absl::StrCat(builder.subject(), " ranks ran on the gloo ", expected,
                                   " device the plan asks for: ", absl::StrJoin(seen, ", "), "."));
}

}  // namespace clustercert::controller
