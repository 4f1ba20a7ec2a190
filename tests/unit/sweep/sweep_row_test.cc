#include "sweep/sweep_row.h"

#include <gtest/gtest.h>

namespace clustercert::sweep {
namespace {

SweepRow SampleRow() {
  SweepRow row;
  row.bytes = 8589934592;
  row.count = 2147483648;
  row.out_of_place = {43682.123456789, 196.6478123, 368.7146481, 0};
  row.in_place = {0.1 + 0.2, 1.0 / 3.0, 2e-300, -1};
  return row;
}

TEST(SweepRowTest, EncodesTheDocumentedLine) {
  SweepRow row;
  row.bytes = 8;
  row.count = 2;
  row.out_of_place = {30.5, 0.25, 0.5, 0};
  row.in_place = {31, 0.125, 0.25, 3};
  EXPECT_EQ(EncodeRowLine(row),
            "row bytes=8 count=2 type=float redop=sum root=-1 oop_us=30.5 oop_algbw=0.25 "
            "oop_busbw=0.5 oop_wrong=0 ip_us=31 ip_algbw=0.125 ip_busbw=0.25 ip_wrong=3");
  row.has_in_place = false;
  EXPECT_EQ(EncodeRowLine(row),
            "row bytes=8 count=2 type=float redop=sum root=-1 oop_us=30.5 oop_algbw=0.25 "
            "oop_busbw=0.5 oop_wrong=0");
}

TEST(SweepRowTest, RoundTripsExactly) {
  const SweepRow row = SampleRow();
  std::optional<SweepRow> decoded = DecodeRowLine(EncodeRowLine(row));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->bytes, row.bytes);
  EXPECT_EQ(decoded->count, row.count);
  EXPECT_EQ(decoded->type, "float");
  EXPECT_EQ(decoded->redop, "sum");
  EXPECT_EQ(decoded->root, -1);
  EXPECT_EQ(decoded->out_of_place.time_us, row.out_of_place.time_us);
  EXPECT_EQ(decoded->out_of_place.algbw_gbps, row.out_of_place.algbw_gbps);
  EXPECT_EQ(decoded->out_of_place.busbw_gbps, row.out_of_place.busbw_gbps);
  EXPECT_EQ(decoded->in_place.time_us, row.in_place.time_us);
  EXPECT_EQ(decoded->in_place.algbw_gbps, row.in_place.algbw_gbps);
  EXPECT_EQ(decoded->in_place.busbw_gbps, row.in_place.busbw_gbps);
  EXPECT_EQ(decoded->in_place.wrong, -1);
  EXPECT_TRUE(decoded->has_in_place);
}

TEST(SweepRowTest, RoundTripsWithoutInPlace) {
  SweepRow row = SampleRow();
  row.has_in_place = false;
  std::optional<SweepRow> decoded = DecodeRowLine(EncodeRowLine(row) + "\n");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_FALSE(decoded->has_in_place);
  EXPECT_EQ(decoded->out_of_place.time_us, row.out_of_place.time_us);
}

TEST(SweepRowTest, RejectsMalformedLines) {
  const std::string good = EncodeRowLine(SampleRow());
  EXPECT_FALSE(DecodeRowLine("note hello").has_value());
  EXPECT_FALSE(DecodeRowLine("rowbytes=8").has_value());
  EXPECT_FALSE(DecodeRowLine("row count=2 type=float redop=sum root=-1 oop_us=1 oop_algbw=1 "
                             "oop_busbw=1 oop_wrong=0")
                   .has_value());
  EXPECT_FALSE(DecodeRowLine("row bytes=8x count=2 type=float redop=sum root=-1 oop_us=1 "
                             "oop_algbw=1 oop_busbw=1 oop_wrong=0")
                   .has_value());
  EXPECT_FALSE(DecodeRowLine("row bytes=8 count=2 type=float redop=sum root=-1 oop_us=fast "
                             "oop_algbw=1 oop_busbw=1 oop_wrong=0")
                   .has_value());
  // Half an in-place variant is not a row.
  EXPECT_FALSE(DecodeRowLine("row bytes=8 count=2 type=float redop=sum root=-1 oop_us=1 "
                             "oop_algbw=1 oop_busbw=1 oop_wrong=0 ip_us=1")
                   .has_value());
  EXPECT_FALSE(DecodeRowLine(good + " stray").has_value());
  EXPECT_TRUE(DecodeRowLine(good + " future=1").has_value());
}

TEST(SweepRowTest, HeaderIsNcclTestsHeader) {
  EXPECT_EQ(NcclTestsHeader(),
            "#                                                              out-of-place        "
            "               in-place          \n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong "
            "    time   algbw   busbw #wrong\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
            "    (us)  (GB/s)  (GB/s)       \n");
}

TEST(SweepRowTest, RowLineMatchesNcclTestsLayout) {
  SweepRow row;
  row.bytes = 8;
  row.count = 2;
  row.out_of_place = {30.88, 0.000259, 0.000486, 0};
  row.in_place = {31.65, 0.000253, 0.000474, 0};
  EXPECT_EQ(NcclTestsRowLine(row),
            "           8             2     float     sum      -1    30.88    0.00    0.00      0"
            "    31.65    0.00    0.00      0\n");
}

TEST(SweepRowTest, TimeLosesDecimalsAsItGrowsAndUncheckedIsNA) {
  SweepRow row;
  row.bytes = 8589934592;
  row.count = 2147483648;
  row.out_of_place = {43682.4, 196.65, 368.72, 0};
  row.in_place = {5465.24, 196.47, 368.38, -1};
  EXPECT_EQ(NcclTestsRowLine(row),
            "  8589934592    2147483648     float     sum      -1    43682  196.65  368.72      0"
            "   5465.2  196.47  368.38    N/A\n");
  row.in_place.time_us = 99.996;  // rounds to 100.00 in the 2-decimal form, as nccl-tests does
  row.in_place.wrong = 12;
  EXPECT_EQ(NcclTestsRowLine(row).substr(84), "   100.00  196.47  368.38     12\n");
}

TEST(SweepRowTest, RowLineWithoutInPlaceEndsAfterOutOfPlace) {
  SweepRow row;
  row.bytes = 1024;
  row.count = 256;
  row.has_in_place = false;
  row.out_of_place = {40.0, 0.0256, 0.048, 0};
  EXPECT_EQ(
      NcclTestsRowLine(row),
      "        1024           256     float     sum      -1    40.00    0.03    0.05      0\n");
}

TEST(SweepRowTest, OperationTravelsAndAllReduceLinesStayAsTheyWere) {
  SweepRow row;
  row.bytes = 64;
  row.count = 4;
  row.operation = "alltoall";
  row.redop = "none";
  row.has_in_place = false;
  const std::string line = EncodeRowLine(row);
  EXPECT_EQ(line.rfind("row op=alltoall bytes=64 count=4 type=float redop=none ", 0), 0u) << line;
  std::optional<SweepRow> decoded = DecodeRowLine(line);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->operation, "alltoall");
  row.operation = "all_reduce";
  EXPECT_EQ(EncodeRowLine(row).find(" op="), std::string::npos);
  EXPECT_EQ(DecodeRowLine(EncodeRowLine(row))->operation, "all_reduce");
  EXPECT_FALSE(
      DecodeRowLine("row op= bytes=8 count=2 type=float redop=sum root=-1 oop_us=1 "
                    "oop_algbw=1 oop_busbw=1 oop_wrong=0"));
}

TEST(SweepRowTest, TitleIsNcclTestsFirstLine) {
  EXPECT_EQ(NcclTestsTitle("all_gather"), "# Collective test starting: all_gather_perf\n");
  EXPECT_EQ(NcclTestsTitle(""), "# Collective test starting: all_reduce_perf\n");
}

}  // namespace
}  // namespace clustercert::sweep
