#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/memory_provider.h"

namespace clustercert::agent::peer {

absl::StatusOr<std::unique_ptr<MemoryProvider>> MakeCudaMemory(int device) {
  return absl::UnimplementedError(
      absl::StrCat("memory cuda:", device,
                   " needs CUDA, and this agent was built without the CUDA toolkit: cuda memory "
                   "tests cannot run; rebuild on a host with /usr/local/cuda or use memory host"));
}

}  // namespace clustercert::agent::peer
