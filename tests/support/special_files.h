#pragma once

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::testing {

// How long a refusal of a special file may take: it is immediate when the
// defence holds; without it the call blocks for good, and FinishesWithin
// turns that into a failure.
inline constexpr std::chrono::milliseconds kSpecialFileDeadline{5000};

// Makes a FIFO at `path`; false (with a test failure) when it cannot.
inline bool MakeFifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) {
    ADD_FAILURE() << "mkfifo " << path << ": " << std::strerror(errno);
    return false;
  }
  return true;
}

// A Unix socket bound at `path`, left bound (the descriptor is kept open by
// the caller through the returned fd, -1 on failure).
inline int BindUnixSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof(address.sun_path)) {
    ADD_FAILURE() << "cannot make a Unix socket at " << path;
    if (fd >= 0) ::close(fd);
    return -1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ADD_FAILURE() << "bind " << path << ": " << std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

// Changing a file's owner to another user needs root. Skipped otherwise,
// except in CI (CI=true), where a skipped ownership test would hide a
// regression: there it fails (tests/support/environment_skip.h).
#define CLUSTERCERT_REQUIRE_ROOT_FOR_CHOWN()                                                \
  do {                                                                                      \
    if (::geteuid() != 0) {                                                                 \
      SKIP_FOR_ENVIRONMENT("root") << "skipped: chown to another user needs root: run the " \
                                      "unit tests as root";                                 \
    }                                                                                       \
  } while (false)

// A user that is neither root nor us: nobody.
inline constexpr uid_t kOtherUid = 65534;

}  // namespace clustercert::testing
