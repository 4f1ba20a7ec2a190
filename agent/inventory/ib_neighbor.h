#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/process/command_runner.h"

namespace clustercert::agent::inventory {

// The far end of an InfiniBand port, as the subnet's own management
// packets show it: infiniband-diags' smpquery sends a directed-route SMP out
// of the port (path "0,<port>") and prints the remote node's NodeInfo (its
// GUID, type, and LocalPort: the port number the packet entered by) and its
// NodeDescription (a switch's name, "MF0;leaf07:MQM8790/U1"). Two fixed argv
// per port, no shell, each within kTimeout; the device name must be one the
// inventory lists (the caller checks) and is checked again for shape here.
class IbNeighborReader {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(2);

  // `runner` must outlive the reader.
  explicit IbNeighborReader(process::CommandRunner& runner) : runner_(runner) {}

  // smpquery -C DEVICE -P PORT -D ATTRIBUTE 0,PORT
  static std::vector<std::string> Argv(absl::string_view attribute, const std::string& device,
                                       uint32_t port);

  // NotFound when infiniband-diags is not installed; another error naming
  // the command and what it printed otherwise. `timeout` bounds each call.
  absl::StatusOr<v1::LinkNeighbor> Read(const std::string& device, uint32_t port,
                                        absl::Duration timeout) const;

 private:
  absl::StatusOr<std::string> Query(absl::string_view attribute, const std::string& device,
                                    uint32_t port, absl::Duration timeout) const;

  process::CommandRunner& runner_;
};

// smpquery's "Key:.....value" lines: the value of `key`, or "" when absent.
// At most the first 256 lines are read.
std::string SmpqueryField(absl::string_view text, absl::string_view key);

}  // namespace clustercert::agent::inventory
