#include "sweep/collective_operation.h"

#include <gtest/gtest.h>

#include <utility>

namespace clustercert::sweep {
namespace {

TEST(CollectiveOperationTest, NamesAreNcclTestsBinariesWithoutPerf) {
  for (Operation operation : kOperations) {
    EXPECT_EQ(ParseOperation(OperationName(operation)), operation);
    EXPECT_EQ(NcclTestsBinary(operation), OperationName(operation) + "_perf");
  }
  EXPECT_EQ(NcclTestsBinary(Operation::kAlltoAll), "alltoall_perf");
  EXPECT_EQ(ParseOperation("allreduce"), std::nullopt);
  EXPECT_EQ(ParseOperation("all_to_all"), std::nullopt);
  EXPECT_EQ(OperationNamesText(), "all_reduce, all_gather, reduce_scatter, alltoall");
  EXPECT_EQ(RedopName(Operation::kReduceScatter), "sum");
  EXPECT_EQ(RedopName(Operation::kAllGather), "none");
}

// nccl-tests' factors: 2(n-1)/n for allreduce, (n-1)/n for the other three.
TEST(CollectiveOperationTest, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(BusFactor(Operation::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusFactor(Operation::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusFactor(Operation::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusFactor(Operation::kAlltoAll, 2), 0.5);
  for (Operation operation : kOperations) EXPECT_EQ(BusFactor(operation, 1), 0);
  // 1 GB in 10 ms is 100 GB/s algbw; 16 ranks of alltoall: x 15/16.
  EXPECT_DOUBLE_EQ(BusBandwidthGBps(Operation::kAlltoAll, 1000000000, 0.01, 16), 93.75);
  EXPECT_EQ(BusBandwidthGBps(Operation::kAllGather, 1000, 0, 4), 0);
}

TEST(CollectiveOperationTest, AllReduceShapeIsTheWholeBuffer) {
  const CollectiveShape shape = *ShapeOf(Operation::kAllReduce, 1024, 4, 3);
  EXPECT_EQ(shape.bytes, 1024);
  EXPECT_EQ(shape.count, 256);
  EXPECT_EQ(shape.send_count, 256);
  EXPECT_EQ(shape.receive_count, 256);
  EXPECT_EQ(shape.in_place_send_offset, 0);
  EXPECT_EQ(shape.in_place_receive_offset, 0);
}

// nccl-tests: base = (count / n) rounded down to 16 bytes; size = the larger buffer.
TEST(CollectiveOperationTest, ShapesFollowNcclTests) {
  const CollectiveShape gather = *ShapeOf(Operation::kAllGather, 1024, 4, 3);
  EXPECT_EQ(gather.count, 64);
  EXPECT_EQ(gather.send_count, 64);
  EXPECT_EQ(gather.receive_count, 256);
  EXPECT_EQ(gather.bytes, 1024);
  EXPECT_EQ(gather.in_place_send_offset, 192);  // the rank's chunk at its offset
  EXPECT_EQ(gather.in_place_receive_offset, 0);

  const CollectiveShape scatter = *ShapeOf(Operation::kReduceScatter, 100, 3, 2);
  EXPECT_EQ(scatter.count, 8);  // 25 / 3 = 8, already a multiple of 4
  EXPECT_EQ(scatter.send_count, 24);
  EXPECT_EQ(scatter.receive_count, 8);
  EXPECT_EQ(scatter.bytes, 96);
  EXPECT_EQ(scatter.in_place_send_offset, 0);
  EXPECT_EQ(scatter.in_place_receive_offset, 16);  // the result at the rank's offset

  const CollectiveShape all = *ShapeOf(Operation::kAlltoAll, 200, 4, 1);
  EXPECT_EQ(all.count, 12);  // 50 / 4 = 12
  EXPECT_EQ(all.send_count, 48);
  EXPECT_EQ(all.receive_count, 48);
  EXPECT_EQ(all.bytes, 192);

  EXPECT_EQ(ShapeOf(Operation::kAlltoAll, 32, 4, 0), std::nullopt);  // 2 floats a rank
  EXPECT_EQ(ShapeOf(Operation::kAllGather, 8, 1, 0), std::nullopt);
  EXPECT_TRUE(ShapeOf(Operation::kAllReduce, 8, 1, 0).has_value());
}

std::vector<float> Expected(const CollectiveShape& shape, int rank, int ranks) {
  std::vector<float> values;
  for (int64_t i = 0; i < shape.receive_count; ++i) {
    values.push_back(ExpectedValue(shape, rank, ranks, i));
  }
  return values;
}

TEST(CollectiveOperationTest, ExpectedValuesFollowFromEveryRanksSendData) {
  const int ranks = 4;
  const int rank = 1;
  const CollectiveShape gather = *ShapeOf(Operation::kAllGather, 256, ranks, rank);
  const CollectiveShape all = *ShapeOf(Operation::kAlltoAll, 256, ranks, rank);
  const CollectiveShape scatter = *ShapeOf(Operation::kReduceScatter, 256, ranks, rank);
  for (int64_t i = 0; i < gather.receive_count; ++i) {
    const int source = static_cast<int>(i / gather.count);
    const int64_t j = i % gather.count;
    EXPECT_EQ(ExpectedValue(gather, rank, ranks, i), SendData(gather, source, ranks)[j]);
    EXPECT_EQ(ExpectedValue(all, rank, ranks, i),
              SendData(all, source, ranks)[rank * all.count + j]);
    if (i < scatter.count) {
      float sum = 0;
      for (int r = 0; r < ranks; ++r) sum += SendData(scatter, r, ranks)[rank * scatter.count + i];
      EXPECT_EQ(ExpectedValue(scatter, rank, ranks, i), sum);
    }
  }
}

TEST(CollectiveOperationTest, CountWrongCatchesOneElementAndSwappedBlocks) {
  for (Operation operation : kOperations) {
    SCOPED_TRACE(OperationName(operation));
    const CollectiveShape shape = *ShapeOf(operation, 1024, 4, 2);
    std::vector<float> result = Expected(shape, 2, 4);
    EXPECT_EQ(CountWrong(shape, 2, 4, result), 0);
    result[5] += 1.0f;
    EXPECT_EQ(CountWrong(shape, 2, 4, result), 1);
    result.pop_back();
    EXPECT_EQ(CountWrong(shape, 2, 4, result), 2);  // a short result lacks one
  }
  // Blocks from two sources delivered to each other's place.
  for (Operation operation : {Operation::kAllGather, Operation::kAlltoAll}) {
    const CollectiveShape shape = *ShapeOf(operation, 1024, 4, 2);
    std::vector<float> result = Expected(shape, 2, 4);
    std::swap_ranges(result.begin(), result.begin() + shape.count, result.begin() + shape.count);
    EXPECT_EQ(CountWrong(shape, 2, 4, result), shape.count * 2) << OperationName(operation);
  }
}

// alltoall: a sender that sent the block meant for another destination is caught.
TEST(CollectiveOperationTest, AlltoallBlocksDifferByDestination) {
  const CollectiveShape shape = *ShapeOf(Operation::kAlltoAll, 1024, 4, 0);
  const std::vector<float> sent = SendData(shape, 3, 4);
  for (int64_t j = 0; j < shape.count; ++j) {
    EXPECT_NE(sent[j], sent[shape.count + j]);
  }
}

TEST(CollectiveOperationTest, AllreducePatternIsSmallIntegersAndSumsExactly) {
  EXPECT_EQ(InitialValue(0, 0), 1.0f);
  EXPECT_EQ(InitialValue(2, 3), 12.0f);
  EXPECT_EQ(ExpectedSum(4, 3), 40.0f);
}

}  // namespace
}  // namespace clustercert::sweep
