// A transceiver's or cable's module EEPROM: bytes the module (or a driver,
// or a counterfeit) hands the kernel, decoded as SFF-8636 or CMIS by the
// identifier they start with. Any length, any bytes: the decoder must not
// read past them or produce a NaN or an infinity.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/types/span.h"
#include "agent/inventory/module_eeprom.h"
#include "common/non_finite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const clustercert::v1::CableModule module =
      clustercert::agent::inventory::DecodeModuleEeprom(absl::MakeConstSpan(data, size));
  if (clustercert::FindNonFinite(module).has_value()) std::abort();
  if (module.lanes_size() > 8) std::abort();
  return 0;
}
