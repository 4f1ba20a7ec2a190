#pragma once

// nccl-tests' arithmetic (doc/PERFORMANCE.md): algbw = bytes / time, and for
// allreduce busbw = algbw * 2(n-1)/n, the figure comparable to the link rate.

#include <cstdint>

namespace clustercert::sweep {

// GB/s (1e9 bytes per second) for `bytes` moved in `seconds`; 0 when seconds <= 0.
double AlgorithmBandwidthGBps(int64_t bytes, double seconds);

// 2(n-1)/n; 0 for n <= 1 (one rank moves nothing over a bus).
double AllreduceBusFactor(int ranks);

double AllreduceBusBandwidthGBps(int64_t bytes, double seconds, int ranks);

}  // namespace clustercert::sweep
