#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace clustercert::agent::inventory {

// Owns one rtnetlink socket whose sends and receives give up after the
// timeout it was opened with: the kernel always answers, but a daemon must
// not hang on the one time it does not. Shared by the DCB and route readers.
class NetlinkSocket {
 public:
  static absl::StatusOr<NetlinkSocket> Open(absl::Duration timeout);

  NetlinkSocket(NetlinkSocket&& other) noexcept;
  NetlinkSocket& operator=(NetlinkSocket&&) = delete;
  NetlinkSocket(const NetlinkSocket&) = delete;
  NetlinkSocket& operator=(const NetlinkSocket&) = delete;
  ~NetlinkSocket();

  int fd() const { return fd_; }

 private:
  explicit NetlinkSocket(int fd) : fd_(fd) {}
  int fd_;
};

// Calls `visit(type, payload, length)` for each netlink attribute in
// [data, data + length); false when an attribute runs past the end.
bool ForEachAttribute(const char* data, size_t length,
                      const std::function<void(uint16_t, const char*, size_t)>& visit);

}  // namespace clustercert::agent::inventory
