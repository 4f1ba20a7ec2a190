#pragma once

// The host<->device copy check of collective-worker-nccl --copy-check: a
// pinned host buffer copied to the GPU and back, each direction timed with
// CUDA events, and the bytes that came back compared with those sent. It
// tells a slow or mis-trained PCIe link (or a GPU that corrupts copies) apart
// from a slow network before the allreduce sweep is blamed.

#include <cstdint>
#include <string>

namespace clustercert::workers::nccl_worker {

inline constexpr int64_t kDefaultCopyCheckBytes = int64_t{256} << 20;

struct CopyCheckResult {
  int64_t bytes = 0;    // per copy
  double h2d_gbps = 0;  // 1e9 bytes/s, mean over the timed copies
  double d2h_gbps = 0;
  bool matched = false;  // the bytes back equal the bytes sent
  std::string error;     // "" when the copies ran; a sentence otherwise
};

// Copies `bytes` (0: kDefaultCopyCheckBytes, lowered to fit half the free
// device memory) `repetitions` times each way on cuda:`device`, after one
// untimed copy each way.
CopyCheckResult RunCopyCheck(int device, int64_t bytes, int repetitions = 5);

// "copy h2d_gbps=24.1 d2h_gbps=25.3 bytes=268435456 ok" (or "mismatch").
std::string CopyCheckNote(const CopyCheckResult& result);

}  // namespace clustercert::workers::nccl_worker
