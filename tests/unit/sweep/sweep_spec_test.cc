#include "sweep/sweep_spec.h"

#include <gtest/gtest.h>

#include <limits>

namespace clustercert::sweep {
namespace {

TEST(SweepSizesTest, DefaultSweepIsEightBytesToEightGiBDoubling) {
  const std::vector<int64_t> sizes = SweepSizes(SweepSpec(), 4, 0);
  ASSERT_EQ(sizes.size(), 31u);
  EXPECT_EQ(sizes.front(), 8);
  EXPECT_EQ(sizes[1], 16);
  EXPECT_EQ(sizes.back(), int64_t{8} << 30);
}

TEST(SweepSizesTest, RoundsDownToElementsAndKeepsOneElement) {
  SweepSpec spec;
  spec.min_bytes = 1;
  spec.max_bytes = 40;
  spec.factor = 3;
  // 1, 3, 9, 27 -> 4 (one element), 4 (duplicate), 8, 24.
  EXPECT_EQ(SweepSizes(spec, 4, 0), (std::vector<int64_t>{4, 8, 24}));
}

TEST(SweepSizesTest, SkipsSizesAboveTheMemoryCap) {
  SweepSpec spec;
  spec.min_bytes = 1024;
  spec.max_bytes = 1 << 20;
  EXPECT_EQ(SweepSizes(spec, 4, 5000), (std::vector<int64_t>{1024, 2048, 4096}));
  EXPECT_TRUE(SweepSizes(spec, 4, 1000).empty());
}

TEST(SweepSizesTest, StopsBeforeOverflow) {
  SweepSpec spec;
  spec.min_bytes = int64_t{1} << 61;
  spec.max_bytes = std::numeric_limits<int64_t>::max();
  spec.factor = 4;
  EXPECT_EQ(SweepSizes(spec, 4, 0), (std::vector<int64_t>{int64_t{1} << 61}));
}

TEST(SweepSizesTest, InvalidFactorDoesNotLoop) {
  SweepSpec spec;
  spec.factor = 1;
  EXPECT_EQ(SweepSizes(spec, 4, 0), (std::vector<int64_t>{8}));
}

TEST(ValidateSweepSpecTest, DefaultIsValid) { EXPECT_EQ(ValidateSweepSpec(SweepSpec()), ""); }

TEST(ValidateSweepSpecTest, NamesTheBadValueAndTheFix) {
  SweepSpec spec;
  spec.factor = 1;
  EXPECT_EQ(ValidateSweepSpec(spec),
            "collectives.sizes.factor is 1: it must be 2 or more (nccl-tests -f)");
  spec = SweepSpec();
  spec.min_bytes = 0;
  EXPECT_EQ(ValidateSweepSpec(spec),
            "collectives.sizes.min is 0: it must be 1 byte or more (nccl-tests -b)");
  spec = SweepSpec();
  spec.min_bytes = 64;
  spec.max_bytes = 8;
  EXPECT_EQ(ValidateSweepSpec(spec),
            "collectives.sizes.max is 8, below min 64: raise max to at least min (nccl-tests -e)");
  spec = SweepSpec();
  spec.warmup_iters = -1;
  EXPECT_EQ(ValidateSweepSpec(spec),
            "collectives.warmup_iters is -1: it must be 0 or more (nccl-tests -w)");
  spec = SweepSpec();
  spec.iters = 0;
  EXPECT_EQ(ValidateSweepSpec(spec),
            "collectives.iters is 0: it must be 1 or more (nccl-tests -n)");
  spec = SweepSpec();
  spec.warmup_iters = 0;
  EXPECT_EQ(ValidateSweepSpec(spec), "");
}

}  // namespace
}  // namespace clustercert::sweep
