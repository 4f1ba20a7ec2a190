#include "sweep/bus_bandwidth.h"

namespace clustercert::sweep {

double AlgorithmBandwidthGBps(int64_t bytes, double seconds) {
  if (!(seconds > 0)) return 0;  // also catches NaN
  return static_cast<double>(bytes) / seconds / 1e9;
}

double AllreduceBusFactor(int ranks) {
  if (ranks <= 1) return 0;
  return 2.0 * (ranks - 1) / ranks;
}

double AllreduceBusBandwidthGBps(int64_t bytes, double seconds, int ranks) {
  return AlgorithmBandwidthGBps(bytes, seconds) * AllreduceBusFactor(ranks);
}

}  // namespace clustercert::sweep
