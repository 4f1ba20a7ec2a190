#include "sweep/bus_bandwidth.h"

#include <gtest/gtest.h>

namespace clustercert::sweep {
namespace {

TEST(BusBandwidthTest, AlgorithmBandwidthIsBytesPerSecondInGB) {
  EXPECT_DOUBLE_EQ(AlgorithmBandwidthGBps(int64_t{1} << 30, 0.01), 107.3741824);
  EXPECT_DOUBLE_EQ(AlgorithmBandwidthGBps(8, 1e-6), 0.008);
}

TEST(BusBandwidthTest, ZeroOrNegativeTimeGivesZero) {
  EXPECT_EQ(AlgorithmBandwidthGBps(1024, 0), 0);
  EXPECT_EQ(AlgorithmBandwidthGBps(1024, -1), 0);
}

TEST(BusBandwidthTest, AllreduceFactorIsTwoNMinusOneOverN) {
  EXPECT_EQ(AllreduceBusFactor(0), 0);
  EXPECT_EQ(AllreduceBusFactor(1), 0);
  EXPECT_DOUBLE_EQ(AllreduceBusFactor(2), 1.0);
  EXPECT_DOUBLE_EQ(AllreduceBusFactor(8), 1.75);
  EXPECT_DOUBLE_EQ(AllreduceBusFactor(16), 1.875);
}

TEST(BusBandwidthTest, BusBandwidthMatchesNcclTestsRow) {
  // all_reduce_perf-2node.txt, 8 GiB out-of-place on 16 ranks: 43682 us.
  const double busbw = AllreduceBusBandwidthGBps(8589934592, 43682e-6, 16);
  EXPECT_NEAR(busbw, 368.72, 0.01);
}

}  // namespace
}  // namespace clustercert::sweep
