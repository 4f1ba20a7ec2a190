#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// Reads the transceiver or cable plugged into one netdev's port: its module
// EEPROM decoded (identity, DOM values and the module's own thresholds), on a
// live host through the kernel's module-EEPROM read. An error Status (with
// the netdev and the cause in its message: no module, a driver without the
// read, an EEPROM that does not decode) means nothing usable was read; a
// module read in part comes back with Unknown entries for what is missing.
class ModuleSource {
 public:
  virtual ~ModuleSource() = default;
  virtual absl::StatusOr<v1::CableModule> Read(const std::string& netdev) = 0;
};

}  // namespace clustercert::agent::inventory
