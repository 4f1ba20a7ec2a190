#include "common/errno_text.h"

#include <cerrno>
#include <cstring>

namespace clustercert {

std::string ErrnoText(int err) {
  char buffer[256];
  // GNU strerror_r returns the message, which need not be in `buffer`.
  return strerror_r(err != 0 ? err : EIO, buffer, sizeof(buffer));
}

}  // namespace clustercert
