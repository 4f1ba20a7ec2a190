// `controller verify` on arbitrary JSON: the certificate reader (its strict
// pre-pass first, common/json_strict.h: duplicate and aliased keys, invalid
// UTF-8, nesting), the signature check (with the key the certificate
// embeds) and the verdict recomputation run on whatever a certificate file
// holds, including values no run could have recorded (NaN, infinities; the
// corpus seeds both, and duplicated keys).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/verdict_recompute.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  auto certificate = clustercert::controller::ParseCertificateJson(json, "fuzz.json");
  if (!certificate.ok()) return 0;
  clustercert::controller::CheckSignature(*certificate, clustercert::controller::TrustedKeys());
  clustercert::controller::RecheckVerdicts(*certificate);
  return 0;
}
