#include "agent/peer/host_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/verbs_resources.h"
#include "common/errno_text.h"

namespace clustercert::agent::peer {
namespace {

class HostBuffer : public Buffer {
 public:
  HostBuffer(void* data, size_t size) : data_(data), size_(size) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() override { munmap(data_, size_); }

  void* data() const override { return data_; }
  size_t size() const override { return size_; }
  bool host_accessible() const override { return true; }
  absl::StatusOr<MemoryRegion> Register(ibv_pd* pd, int access) override {
    return MemoryRegion::Register(pd, data_, size_, access, "host memory");
  }

 private:
  void* data_;
  size_t size_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Buffer>> HostMemory::Allocate(size_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("a host buffer of 0 bytes was requested");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - page) {
    return absl::InvalidArgumentError(
        absl::StrCat("a host buffer of ", bytes, " bytes cannot be allocated"));
  }
  const size_t size = (bytes + page - 1) / page * page;
  // Anonymous mappings are page-aligned and zero-filled; MAP_POPULATE faults
  // them in now rather than during the measurement.
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (data == MAP_FAILED) {
    const int err = errno;
    return absl::ResourceExhaustedError(
        absl::StrCat("allocating ", size, " bytes of host memory failed: ", ErrnoText(err)));
  }
  return std::unique_ptr<Buffer>(std::make_unique<HostBuffer>(data, size));
}

}  // namespace clustercert::agent::peer
