#include "sweep/nccl_tests_output.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace clustercert::sweep {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream file(std::string(CLUSTERCERT_FIXTURES) + "/nccl/" + name);
  EXPECT_TRUE(file.good()) << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(NcclTestsOutputTest, TwoNodeClassicOutput) {
  const NcclTestsRun run = ParseNcclTestsOutput(Fixture("all_reduce_perf-2node.txt"));
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  EXPECT_EQ(run.ranks, 16);
  ASSERT_EQ(run.rows.size(), 31u);
  EXPECT_EQ(run.out_of_bounds, 0);
  ASSERT_TRUE(run.average_busbw_gbps.has_value());
  EXPECT_DOUBLE_EQ(*run.average_busbw_gbps, 128.797);

  const SweepRow& first = run.rows.front();
  EXPECT_EQ(first.bytes, 8);
  EXPECT_EQ(first.count, 2);
  EXPECT_EQ(first.type, "float");
  EXPECT_EQ(first.redop, "sum");
  EXPECT_EQ(first.root, -1);
  EXPECT_DOUBLE_EQ(first.out_of_place.time_us, 30.88);
  EXPECT_DOUBLE_EQ(first.in_place.time_us, 31.65);
  EXPECT_EQ(first.out_of_place.wrong, 0);

  const SweepRow& last = run.rows.back();
  EXPECT_EQ(last.bytes, int64_t{8} << 30);
  EXPECT_EQ(last.count, int64_t{2} << 30);
  EXPECT_DOUBLE_EQ(last.out_of_place.time_us, 43682);
  EXPECT_DOUBLE_EQ(last.out_of_place.algbw_gbps, 196.65);
  EXPECT_DOUBLE_EQ(last.out_of_place.busbw_gbps, 368.72);
  EXPECT_DOUBLE_EQ(last.in_place.time_us, 44208);
  EXPECT_DOUBLE_EQ(last.in_place.busbw_gbps, 364.32);
  EXPECT_TRUE(last.has_in_place);
}

TEST(NcclTestsOutputTest, OldOutputWithoutRootAndWithErrorColumn) {
  const NcclTestsRun run = ParseNcclTestsOutput(Fixture("all_reduce_perf-v2.11-1node.txt"));
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  EXPECT_EQ(run.ranks, 4);
  ASSERT_EQ(run.rows.size(), 25u);
  EXPECT_EQ(run.out_of_bounds, 1);
  ASSERT_TRUE(run.average_busbw_gbps.has_value());
  EXPECT_DOUBLE_EQ(*run.average_busbw_gbps, 39.806);
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_EQ(run.rows[0].redop, "sum");
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us, 11.43);
  int corrupted = 0;
  for (const SweepRow& row : run.rows) {
    EXPECT_EQ(row.out_of_place.wrong, 0) << row.bytes;
    if (row.in_place.wrong != 0) {
      ++corrupted;
      EXPECT_EQ(row.bytes, int64_t{1} << 26);
      EXPECT_EQ(row.in_place.wrong, 1);
    }
  }
  EXPECT_EQ(corrupted, 1);
}

TEST(NcclTestsOutputTest, NewestOutputUncheckedIsMinusOne) {
  const NcclTestsRun run = ParseNcclTestsOutput(Fixture("all_reduce_perf-v2.19-1node.txt"));
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  EXPECT_EQ(run.ranks, 8);
  ASSERT_EQ(run.rows.size(), 6u);
  EXPECT_EQ(run.rows[0].bytes, 1048576);
  EXPECT_EQ(run.rows[0].out_of_place.wrong, -1);
  EXPECT_EQ(run.rows[0].in_place.wrong, -1);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.busbw_gbps, 111.01);
  ASSERT_TRUE(run.average_busbw_gbps.has_value());
  EXPECT_DOUBLE_EQ(*run.average_busbw_gbps, 514.175);
}

TEST(NcclTestsOutputTest, BadRowsAreReportedAndOtherTextIgnored) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "node1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
      "        1024           256     float     sum      -1    20.10    0.05    0.05      0    "
      "20.00    0.05    0.05      3\n"
      "        2048           512     float     sum      -1    fast    0.10    0.10      0    "
      "20.00    0.10    0.10      0\n"
      "        4096          1024     float     sum\n"
      "    8192          2048     float     sum      -1  1.2e+05    0.00    0.00  1e+06  "
      "1.2e+05    0.00    0.00      0\n"
      "# Out of bounds values : 3 FAILED\n";
  const NcclTestsRun run = ParseNcclTestsOutput(text);
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].in_place.wrong, 3);
  EXPECT_DOUBLE_EQ(run.rows[1].out_of_place.time_us, 1.2e5);
  EXPECT_EQ(run.rows[1].out_of_place.wrong, 1000000);
  ASSERT_EQ(run.errors.size(), 2u);
  EXPECT_EQ(run.errors[0],
            "all_reduce_perf output line 4 is not a table row (time, algbw or busbw is not a "
            "number):         2048           512     float     sum      -1    fast    0.10    "
            "0.10      0    20.00    0.10    0.10      0");
  EXPECT_NE(run.errors[1].find("line 5 is not a table row (expected at least 13 columns, got 4)"),
            std::string::npos);
  EXPECT_EQ(run.out_of_bounds, 3);
  EXPECT_FALSE(run.average_busbw_gbps.has_value());
  EXPECT_EQ(run.ranks, 0);
}

// nccl-tests before v2.13 (as microsoft/superbenchmark's tests/data keeps
// them): all_gather's header has no redop column, alltoall's has one that
// every row leaves blank, and -c 0 prints N/A in the error column. Both
// used to be rejected line by line (0 rows of 34).
TEST(NcclTestsOutputTest, OldGatherAndAlltoallWithoutRedopReadAsNone) {
  const std::string gather =
      "#   Rank  0 Pid 112372 on localhost device  0 [0x00] A100-SXM4-40GB\n"
      "#   Rank  1 Pid 112372 on localhost device  1 [0x00] A100-SXM4-40GB\n"
      "#       size         count    type     time   algbw   busbw  error     time   algbw   "
      "busbw  error\n"
      "           0             0   float    34.27    0.00    0.00    N/A    33.57    0.00    "
      "0.00    N/A\n"
      "  8589934592     268435456   float    33646  255.31  223.39    N/A    32669  262.94  "
      "230.07    N/A\n";
  NcclTestsRun run = ParseNcclTestsOutput(gather);
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.nodes, 1);
  EXPECT_EQ(run.rows[1].redop, "none");
  EXPECT_EQ(run.rows[1].count, 268435456);
  EXPECT_DOUBLE_EQ(run.rows[1].out_of_place.time_us, 33646);
  EXPECT_DOUBLE_EQ(run.rows[1].in_place.busbw_gbps, 230.07);
  EXPECT_EQ(run.rows[1].in_place.wrong, -1);

  const std::string alltoall =
      "#       size         count    type   redop     time   algbw   busbw  error     time   "
      "algbw   busbw  error\n"
      "          32             1   float            89.00    0.00    0.00    N/A    85.13    "
      "0.00    0.00    N/A\n"
      "  8589934592     268435456   float            33508  256.36  224.31  0e+00    33234  "
      "258.47  226.16  0e+00\n";
  run = ParseNcclTestsOutput(alltoall);
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].redop, "none");
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place.time_us, 89.00);
  EXPECT_EQ(run.rows[0].out_of_place.wrong, -1);
  EXPECT_DOUBLE_EQ(run.rows[1].out_of_place.busbw_gbps, 224.31);
  EXPECT_DOUBLE_EQ(run.rows[1].in_place.time_us, 33234);
  EXPECT_EQ(run.rows[1].in_place.wrong, 0);
}

// A blank redop is one missing token; a row missing more (or carrying more)
// is still refused and reported, and a word in the redop column is a redop.
TEST(NcclTestsOutputTest, BlankRedopOnlyWhenTheRestOfTheRowFits) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "        1024           256     float      -1    20.10    0.05    0.05      0    20.00    "
      "0.05    0.05      0\n"
      "        1024           256     float      -1    20.10    0.05    0.05      0    20.00    "
      "0.05    0.05      0     7\n"
      "        2048           512     float     0.5    20.10    0.05    0.05\n"
      "        4096          1024     float    none      -1    20.10    0.05    0.05      0    "
      "20.00    0.05    0.05      0\n";
  const NcclTestsRun run = ParseNcclTestsOutput(text);
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].redop, "none");
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place.time_us, 20.00);
  EXPECT_EQ(run.rows[1].bytes, 4096);
  EXPECT_EQ(run.rows[1].redop, "none");
  ASSERT_EQ(run.errors.size(), 2u);
  EXPECT_NE(run.errors[0].find("line 3 is not a table row (the redop column is '-1' and the row "
                               "has 13 columns, not 12"),
            std::string::npos)
      << run.errors[0];
  EXPECT_NE(run.errors[1].find("line 4 is not a table row"), std::string::npos) << run.errors[1];
}

// v2.13+ with the Group column, two hosts, and -c 0 (N/A in #wrong).
TEST(NcclTestsOutputTest, ManyNodesCountedFromTheDeviceLines) {
  const std::string text =
      "#  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB "
      "HBM3\n"
      "#  Rank  1 Group  0 Pid   6900 on ztan-mig-235z device  1 [0000:05:00] NVIDIA H100 80GB "
      "HBM3\n"
      "#  Rank  2 Group  0 Pid   6733 on ztan-mig-gq73 device  0 [0000:04:00] NVIDIA H100 80GB "
      "HBM3\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    135.8    0.00    0.00    N/A    "
      "123.5    0.00    0.00    N/A\n"
      "# Avg bus bandwidth    : 0 \n";
  const NcclTestsRun run = ParseNcclTestsOutput(text);
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  EXPECT_EQ(run.ranks, 3);
  EXPECT_EQ(run.nodes, 2);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].redop, "sum");
  EXPECT_EQ(run.rows[0].out_of_place.wrong, -1);
  EXPECT_EQ(run.rows[0].in_place.wrong, -1);
}

// nccl-tests' average: every out-of-place and in-place busbw, a variant cut
// short counting once.
TEST(NcclTestsOutputTest, MeanBusBandwidthTakesBothVariants) {
  EXPECT_FALSE(MeanBusBandwidthGbps({}).has_value());
  SweepRow full;
  full.out_of_place.busbw_gbps = 10;
  full.in_place.busbw_gbps = 20;
  SweepRow cut;
  cut.out_of_place.busbw_gbps = 60;
  cut.in_place.busbw_gbps = 1000;  // not printed: has_in_place false
  cut.has_in_place = false;
  EXPECT_DOUBLE_EQ(*MeanBusBandwidthGbps({full, cut}), 30);
}

TEST(NcclTestsOutputTest, EmptyTextIsAnEmptyRun) {
  const NcclTestsRun run = ParseNcclTestsOutput("");
  EXPECT_TRUE(run.rows.empty());
  EXPECT_TRUE(run.errors.empty());
}

// The NCCL worker's own table on the first H200 (bench/gpu_check.sh, one
// rank, 8 B .. 8 GiB): one rank has no bus, so busbw is 0 throughout, and
// the out-of-place allreduce is a device copy at ~2.15 TB/s (read + write
// ~4.3 TB/s, the HBM3e copy rate).
TEST(NcclTestsOutputTest, RealH200OneRankWorkerTable) {
  const NcclTestsRun run = ParseNcclTestsOutput(Fixture("worker-table-h200-1rank.txt"));
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  ASSERT_EQ(run.rows.size(), 31u);
  for (const SweepRow& row : run.rows) {
    EXPECT_EQ(row.out_of_place.wrong, 0) << row.bytes;
    EXPECT_EQ(row.in_place.wrong, 0) << row.bytes;
    EXPECT_DOUBLE_EQ(row.out_of_place.busbw_gbps, 0) << row.bytes;
  }
  const SweepRow& last = run.rows.back();
  EXPECT_EQ(last.bytes, int64_t{8} << 30);
  EXPECT_DOUBLE_EQ(last.out_of_place.time_us, 3983.6);
  EXPECT_DOUBLE_EQ(last.out_of_place.algbw_gbps, 2156.33);
}

// The same sweep before the worker filled its buffers on its own stream: a
// default-stream memset of the receive buffer raced the in-place copy, and
// whole in-place buffers came back zero (#wrong = the element count, printed
// "%g" above a million) from a healthy GPU. The table must read exactly so,
// since collectives.correctness judges from it.
TEST(NcclTestsOutputTest, RealH200InPlaceRaceIsReadAsWrongElements) {
  const NcclTestsRun run = ParseNcclTestsOutput(Fixture("worker-table-h200-inplace-race.txt"));
  EXPECT_TRUE(run.errors.empty()) << run.errors.front();
  ASSERT_EQ(run.rows.size(), 31u);
  std::vector<int64_t> wrong_sizes;
  for (const SweepRow& row : run.rows) {
    EXPECT_EQ(row.out_of_place.wrong, 0) << row.bytes;
    if (row.in_place.wrong == 0) continue;
    wrong_sizes.push_back(row.bytes);
    // "%g" keeps six digits: 1048576 wrong elements print as 1.04858e+06.
    if (row.bytes <= (int64_t{4} << 20)) {
      EXPECT_NEAR(row.in_place.wrong, row.count, 5) << row.bytes;
    }
  }
  EXPECT_EQ(wrong_sizes,
            (std::vector<int64_t>{262144, 524288, 1048576, 2097152, 4194304, 16777216}));
}

}  // namespace
}  // namespace clustercert::sweep
