#include "controller/plan/byte_size.h"

#include "gtest/gtest.h"

namespace clustercert::controller::plan {
namespace {

TEST(ByteSizeTest, WholeNumbersWithBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("8"), 8);
  EXPECT_EQ(*ParseByteSize("0"), 0);
  EXPECT_EQ(*ParseByteSize("8K"), 8 * 1024);
  EXPECT_EQ(*ParseByteSize("8M"), 8 * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("8G"), int64_t{8} * 1024 * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("1536M"), int64_t{1536} << 20);
}

TEST(ByteSizeTest, RefusesFractionsAndNamesTheWholeSpelling) {
  const absl::StatusOr<int64_t> size = ParseByteSize("1.5G");
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(std::string(size.status().message()), "fractions are not accepted; write 1536M");
  EXPECT_EQ(WholeByteSpelling("1.5G"), "1536M");
  EXPECT_EQ(WholeByteSpelling("0.5M"), "512K");
  EXPECT_EQ(WholeByteSpelling("1.5K"), "1536");
  EXPECT_EQ(WholeByteSpelling("1.3G"), "");
  EXPECT_EQ(WholeByteSpelling("8G"), "");
  EXPECT_FALSE(ParseByteSize("1.3G").ok());
}

TEST(ByteSizeTest, RefusesOtherSpellings) {
  for (const char* text : {"", "K", "8k", "8GB", "8 G", "-8", "+8", "8.0", "0x10", "8T", "1e3"}) {
    EXPECT_FALSE(ParseByteSize(text).ok()) << text;
  }
}

TEST(ByteSizeTest, RefusesOverflow) {
  EXPECT_EQ(ParseByteSize("99999999999999999999").status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseByteSize("9999999999G").status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace clustercert::controller::plan
