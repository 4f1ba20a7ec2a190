#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/peer/memory_provider.h"

namespace clustercert::agent::peer {

// Host memory for verbs tests: anonymous pages, page-aligned and zeroed, all
// faulted in at allocation so page faults are not measured; registered with
// ibv_reg_mr. Describe() is "host".
class HostMemory : public MemoryProvider {
 public:
  absl::StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes) override;
  std::string Describe() const override { return "host"; }
};

}  // namespace clustercert::agent::peer
