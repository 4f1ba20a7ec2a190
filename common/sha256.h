#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace clustercert {

// SHA-256 of `bytes` as 64 lowercase hex digits (OpenSSL's EVP digest).
std::string Sha256Hex(absl::string_view bytes);

}  // namespace clustercert
