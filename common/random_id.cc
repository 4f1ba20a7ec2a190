#include "common/random_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace clustercert {

absl::StatusOr<std::string> RandomId(absl::string_view prefix) {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    // Blocks only before the kernel's pool is first seeded, early in boot.
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(
          absl::StrCat("cannot draw a random id: getrandom failed: ", std::strerror(errno),
                       "; the node-agent needs Linux 3.17 or later"));
    }
    got += static_cast<size_t>(n);
  }
  return absl::StrCat(
      prefix, absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(bytes), 16)));
}

}  // namespace clustercert
