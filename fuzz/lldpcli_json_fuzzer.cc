// What `lldpcli -f json|json0 show neighbors details` prints: JSON made of
// what every switch announced to lldpd.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/lldpcli_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  clustercert::agent::inventory::ParseLldpcliJson(text).ok();
  return 0;
}
