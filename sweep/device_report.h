#pragma once

// What a collective worker says about the transport device it actually
// created, as opposed to the arguments it was given. The gloo worker sends it
// as a `note` (sweep/worker_protocol.h):
//
//   note device tcp, pci=, iface=eth1, speed=25000, addr=[10.0.0.1]; bound [10.0.0.1]:40123
//   note device ibverbs, pci=0000:17:00.0, dev=mlx5_0, port=1, index=3
//
// The part after "device " up to "; bound" is gloo's Device::str() verbatim
// (gloo/transport/{tcp,ibverbs}/device.cc); "bound" is the address a
// connected pair's socket holds (getsockname, tcp only). The controller
// parses it back to judge collectives.transport against the plan.

#include <optional>
#include <string>

namespace clustercert::sweep {

inline constexpr char kDeviceNotePrefix[] = "device ";
// A note longer than this is not a device report (gloo's str() is < 200 B).
inline constexpr size_t kMaxDeviceNoteBytes = 512;

struct DeviceReport {
  std::string transport;    // gloo's first word: "tcp" | "ibverbs" (or what it says)
  std::string interface;    // tcp: iface=, the interface gloo resolved the address to
  std::string address;      // tcp: addr= without brackets or port
  std::string bound;        // tcp: a pair socket's address "[10.0.0.1]:40123"; may be empty
  std::string ib_device;    // ibverbs: dev=
  int ib_port = -1;         // ibverbs: port=; -1 when absent
  int gid_index = -1;       // ibverbs: index=; -1 when absent
  std::string description;  // gloo's str(), verbatim
};

// "device <device_str>[; bound <bound>]": the note's text.
std::string DeviceNote(const std::string& device_str, const std::string& bound);

// The report in a note's text ("device tcp, ..."); nullopt when `note` is not
// one (another note, too long, no transport word).
std::optional<DeviceReport> ParseDeviceNote(const std::string& note);

}  // namespace clustercert::sweep
