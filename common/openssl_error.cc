#include "common/openssl_error.h"

#include <openssl/err.h>

namespace clustercert {

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "no detail from OpenSSL";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return text;
}

}  // namespace clustercert
