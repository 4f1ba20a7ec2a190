// The sysfs text formats (port state and rate, GIDs, GUIDs, LIDs, PCIe link
// speed, PCI addresses in device paths): a captured tree or a hostile
// --sysfs-root can hold any bytes in those files, so each parser sees the
// whole input.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/sysfs_formats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace inventory = clustercert::agent::inventory;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  inventory::ParseCodeAndName(text).ok();
  inventory::ParseRate(text).ok();
  inventory::ParseHexU32(text).ok();
  inventory::ParseInt(text).ok();
  inventory::ParseGid(text).ok();
  inventory::ParseGuid(text).ok();
  inventory::ParsePciLinkSpeed(text).ok();
  inventory::IsPciAddress(text);
  inventory::LastPciAddressInPath(text);
  return 0;
}
