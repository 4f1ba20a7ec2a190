#include "controller/report/report_text.h"

#include <gtest/gtest.h>

namespace clustercert::controller::report {
namespace {

TEST(ReportText, Numbers) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(0.09195567776), "0.091956");
  EXPECT_EQ(FormatNumber(7403.64125), "7403.6");
  EXPECT_EQ(FormatNumber(171022.3955), "171022");
  EXPECT_EQ(FormatNumber(3.5216e-07), "3.52e-07");
  EXPECT_EQ(ShortNumber(7403.6), "7404");
  EXPECT_EQ(ShortNumber(12.34), "12.3");
  EXPECT_EQ(ShortNumber(0.0845), "0.085");
}

TEST(ReportText, SizesAsNcclTestsLabelsThem) {
  EXPECT_EQ(FormatBytes(8), "8B");
  EXPECT_EQ(FormatBytes(512), "512B");
  EXPECT_EQ(FormatBytes(4096), "4K");
  EXPECT_EQ(FormatBytes(262144), "256K");
  EXPECT_EQ(FormatBytes(int64_t{8} << 30), "8G");
  EXPECT_EQ(FormatBytes(1536), "1.5K");
}

TEST(ReportText, DurationsAndAges) {
  EXPECT_EQ(FormatDurationMs(60), "60 ms");
  EXPECT_EQ(FormatDurationMs(4131), "4.1 s");
  EXPECT_EQ(FormatDurationMs(199599), "3 min 19 s");
  EXPECT_EQ(FormatAge(45), "45 s");
  EXPECT_EQ(FormatAge(97200), "1 d 3 h");
  EXPECT_EQ(MillisBetween("2026-12-01T13:21:44.300Z", "2026-12-01T13:25:08.091Z"), 203791);
  EXPECT_EQ(MillisBetween("", "2026-12-01T13:25:08.091Z"), -1);
}

TEST(ReportText, CarriedAndKeys) {
  v1::Carried carried;
  EXPECT_FALSE(IsCarried(carried));
  EXPECT_EQ(CarriedText(carried), "");
  carried.set_from_started_at("2026-11-30T10:00:00Z");
  carried.set_age_s(7200);
  EXPECT_EQ(CarriedText(carried),
            "carried from the baseline of 2026-11-30T10:00:00Z (2 h 0 min old)");
  v1::Finding finding;
  finding.set_id("port.rate");
  finding.set_node("node1");
  finding.set_device("mlx5_0");
  finding.set_port(1);
  EXPECT_EQ(KeyOf(finding), "port.rate@node1/mlx5_0:1");
  finding.set_key("recorded");
  EXPECT_EQ(KeyOf(finding), "recorded");
}

}  // namespace
}  // namespace clustercert::controller::report
