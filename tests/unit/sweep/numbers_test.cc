#include "sweep/numbers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace clustercert::sweep {
namespace {

TEST(NumbersTest, ParseWholeTakesOnlyTheWholeText) {
  int64_t whole = 0;
  EXPECT_TRUE(ParseWhole("8589934592", whole));
  EXPECT_EQ(whole, 8589934592);
  EXPECT_TRUE(ParseWhole("-1", whole));
  EXPECT_EQ(whole, -1);
  for (const char* bad : {"", " 1", "1 ", "12x", "0x10", "1.5", "99999999999999999999"}) {
    EXPECT_FALSE(ParseWhole(bad, whole)) << "'" << bad << "'";
  }
  double real = 0;
  EXPECT_TRUE(ParseWhole("2156.25", real));
  EXPECT_EQ(real, 2156.25);
  EXPECT_FALSE(ParseWhole("2156.25 GB/s", real));
}

TEST(NumbersTest, ParseFiniteRefusesInfinityAndNan) {
  double value = 0;
  EXPECT_TRUE(ParseWhole("inf", value));  // the protocol's rows may carry it
  EXPECT_FALSE(ParseFinite("inf", value));
  EXPECT_FALSE(ParseFinite("nan", value));
  EXPECT_FALSE(ParseFinite("1e999", value));  // out of range
  EXPECT_TRUE(ParseFinite("5.4e-06", value));
  EXPECT_EQ(value, 5.4e-06);
}

TEST(NumbersTest, ShortestTextReadsBackToTheSameDouble) {
  for (double value :
       {0.0, 0.1, 2144.987654321, 1e300, -3.5e-9, std::numeric_limits<double>::denorm_min()}) {
    double back = -1;
    ASSERT_TRUE(ParseWhole(ShortestText(value), back)) << ShortestText(value);
    EXPECT_EQ(back, value);
  }
  EXPECT_EQ(ShortestText(0.1), "0.1");
  EXPECT_EQ(ShortestText(8.0), "8");
}

}  // namespace
}  // namespace clustercert::sweep
