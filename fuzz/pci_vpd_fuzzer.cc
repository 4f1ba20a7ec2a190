// A PCI function's Vital Product Data: binary bytes from a card's EEPROM
// (or a captured tree), walked by tags and lengths the bytes themselves
// give.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/pci_vpd.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto vpd = clustercert::agent::inventory::ParsePciVpd(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  if (vpd.ok()) {
    vpd->Field("SN");
    vpd->Field("PN");
  }
  return 0;
}
