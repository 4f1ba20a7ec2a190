#include "agent/peer/memory_provider.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/peer/host_memory.h"

namespace clustercert::agent::peer {
namespace {

constexpr absl::string_view kCudaPrefix = "cuda:";

absl::Status BadMemory(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("memory \"", text, "\" ", why,
                                                 ": use \"host\" or \"cuda:N\" with the GPU's "
                                                 "CUDA index, e.g. cuda:0"));
}

}  // namespace

absl::StatusOr<MemorySpec> MemorySpec::Parse(absl::string_view text) {
  MemorySpec spec;
  if (text.empty() || text == "host") return spec;
  if (!absl::StartsWith(text, kCudaPrefix)) return BadMemory(text, "is not a memory kind");
  const absl::string_view digits = text.substr(kCudaPrefix.size());
  if (digits.empty()) return BadMemory(text, "names no CUDA device");
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return BadMemory(text, "has a CUDA device index that is not a decimal number");
    }
  }
  int index = 0;
  if (digits.size() > 3 || !absl::SimpleAtoi(digits, &index) || index > kMaxCudaDevice) {
    return BadMemory(text, absl::StrCat("has a CUDA device index outside 0..", kMaxCudaDevice));
  }
  spec.kind = Kind::kCuda;
  spec.cuda_device = index;
  return spec;
}

std::string MemorySpec::ToString() const {
  return kind == Kind::kHost ? std::string("host") : absl::StrCat("cuda:", cuda_device);
}

absl::StatusOr<std::unique_ptr<MemoryProvider>> MakeMemoryProvider(const MemorySpec& spec) {
  if (spec.kind == MemorySpec::Kind::kHost) {
    return std::unique_ptr<MemoryProvider>(std::make_unique<HostMemory>());
  }
  return MakeCudaMemory(spec.cuda_device);
}

}  // namespace clustercert::agent::peer
