#pragma once

#include <string>

namespace clustercert {

// OpenSSL's oldest queued error as text ("no detail from OpenSSL" when the
// queue is empty), and the queue cleared, so the next failure's text is its
// own.
std::string OpenSslError();

}  // namespace clustercert
