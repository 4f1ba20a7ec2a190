#include "sweep/collective_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sweep/bus_bandwidth.h"

namespace clustercert::sweep {
namespace {

// Simulates a whole job inside one process: this rank's send buffer comes
// from Prepare, the other ranks send SendData, and every rank steps in
// lockstep through a host model of the operation, so in-place reductions
// compound as they would on real ranks. Each operation moves a fake clock by
// a fixed latency plus bytes over a fixed rate.
class FakeJobBackend : public CollectiveBackend {
 public:
  FakeJobBackend(int rank, int ranks, int64_t cap) : rank_(rank), ranks_(ranks), cap_(cap) {}
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  int64_t MemoryCapBytes() const override { return cap_; }

  void Prepare(const CollectiveShape& shape, const std::vector<float>& send_data) override {
    calls.push_back("prepare " + std::to_string(send_data.size()));
    shapes_.assign(ranks_, shape);
    send_.assign(ranks_, {});
    for (int r = 0; r < ranks_; ++r) {
      shapes_[r] = *ShapeOf(shape.operation, shape.bytes, ranks_, r);
      send_[r] = r == rank_ ? send_data : SendData(shapes_[r], r, ranks_);
    }
    const int64_t largest = std::max(shape.send_count, shape.receive_count);
    receive_.assign(ranks_, std::vector<float>(static_cast<size_t>(largest), -1.0f));
  }

  std::string Run(int n, bool in_place) override {
    calls.push_back("run " + std::to_string(n) + (in_place ? " ip" : " oop"));
    const CollectiveShape& shape = shapes_[rank_];
    if (fail_at_bytes > 0 && shape.bytes == fail_at_bytes) {
      return "ncclAllReduce returned unhandled system error";
    }
    if (in_place) {
      for (int r = 0; r < ranks_; ++r) {
        std::copy(send_[r].begin(), send_[r].end(),
                  receive_[r].begin() + shapes_[r].in_place_send_offset);
      }
    }
    for (int k = 0; k < n; ++k) {
      Step(in_place);
      now += kLatencySeconds + static_cast<double>(shape.bytes) / kBytesPerSecond;
    }
    return "";
  }

  std::vector<float> Result(bool in_place) override {
    calls.push_back("result");
    const CollectiveShape& shape = shapes_[rank_];
    const auto from = receive_[rank_].begin() + (in_place ? shape.in_place_receive_offset : 0);
    std::vector<float> result(from, from + shape.receive_count);
    if (corrupt_out_of_place && !in_place && result.size() > 3) result[3] += 1.0f;
    if (short_result && !result.empty()) result.pop_back();
    return result;
  }

  void Barrier() override { calls.push_back("barrier"); }

  static constexpr double kLatencySeconds = 10e-6;
  static constexpr double kBytesPerSecond = 100e9;

  double now = 1000.0;
  std::vector<std::string> calls;
  int64_t fail_at_bytes = 0;
  bool corrupt_out_of_place = false;
  bool short_result = false;

 private:
  // One operation on every rank: inputs first, then every output written.
  void Step(bool in_place) {
    std::vector<std::vector<float>> inputs(ranks_);
    for (int r = 0; r < ranks_; ++r) {
      const CollectiveShape& shape = shapes_[r];
      const auto from =
          in_place ? receive_[r].begin() + shape.in_place_send_offset : send_[r].begin();
      inputs[r].assign(from, from + shape.send_count);
    }
    for (int r = 0; r < ranks_; ++r) {
      const CollectiveShape& shape = shapes_[r];
      const std::vector<float> output = Output(inputs, r);
      std::copy(output.begin(), output.end(),
                receive_[r].begin() + (in_place ? shape.in_place_receive_offset : 0));
    }
  }

  // What rank r receives from the operation, in a few lines per operation.
  std::vector<float> Output(const std::vector<std::vector<float>>& in, int r) const {
    const CollectiveShape& shape = shapes_[r];
    const size_t base = static_cast<size_t>(shape.count);
    std::vector<float> out(static_cast<size_t>(shape.receive_count), 0.0f);
    for (size_t i = 0; i < out.size(); ++i) {
      const size_t block = i / base;
      const size_t j = i % base;
      switch (shape.operation) {
        case Operation::kAllReduce:
          for (const auto& rank_in : in) out[i] += rank_in[i];
          break;
        case Operation::kReduceScatter:
          for (const auto& rank_in : in) out[i] += rank_in[r * base + i];
          break;
        case Operation::kAllGather:
          out[i] = in[block][j];
          break;
        case Operation::kAlltoAll:
          out[i] = in[block][r * base + j];
          break;
      }
    }
    return out;
  }

  int rank_;
  int ranks_;
  int64_t cap_;
  std::vector<CollectiveShape> shapes_;
  std::vector<std::vector<float>> send_;
  std::vector<std::vector<float>> receive_;
};

SweepSpec SmallSpec() {
  SweepSpec spec;
  spec.min_bytes = 8;
  spec.max_bytes = 64;
  spec.factor = 2;
  spec.warmup_iters = 2;
  spec.iters = 4;
  return spec;
}

SweepOutcome RunSweep(FakeJobBackend& backend, const SweepSpec& spec,
                      std::vector<SweepRow>* streamed,
                      Operation operation = Operation::kAllReduce) {
  return RunCollectiveSweep(
      backend, operation, spec, [&backend] { return backend.now; },
      [streamed](const SweepRow& row) {
        if (streamed) streamed->push_back(row);
      });
}

TEST(CollectiveSweepTest, PatternIsSmallIntegersAndSumsExactly) {
  EXPECT_EQ(InitialValue(0, 0), 1.0f);
  EXPECT_EQ(InitialValue(2, 3), 12.0f);
  EXPECT_EQ(InitialValue(1, 7), 2.0f);  // period 7
  EXPECT_EQ(ExpectedSum(4, 3), 40.0f);  // (1+2+3+4) * 4
  float sum = 0;
  for (int r = 0; r < 16; ++r) sum += InitialValue(r, 6);
  EXPECT_EQ(sum, ExpectedSum(16, 6));
}

TEST(CollectiveSweepTest, TimesEverySizeFromTheInjectedClock) {
  FakeJobBackend backend(1, 4, 0);
  std::vector<SweepRow> streamed;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), &streamed);
  ASSERT_EQ(outcome.error, "");
  ASSERT_EQ(outcome.rows.size(), 4u);
  ASSERT_EQ(streamed.size(), 4u);
  const int64_t expected_bytes[] = {8, 16, 32, 64};
  for (size_t i = 0; i < 4; ++i) {
    const SweepRow& row = outcome.rows[i];
    EXPECT_EQ(row.bytes, expected_bytes[i]);
    EXPECT_EQ(row.count, expected_bytes[i] / 4);
    EXPECT_EQ(streamed[i].bytes, row.bytes);
    EXPECT_TRUE(row.has_in_place);
    const double seconds = 10e-6 + expected_bytes[i] / 100e9;
    for (const TimedVariant* variant : {&row.out_of_place, &row.in_place}) {
      EXPECT_NEAR(variant->time_us, seconds * 1e6, 1e-6);
      EXPECT_NEAR(variant->algbw_gbps, AlgorithmBandwidthGBps(row.bytes, seconds), 1e-9);
      EXPECT_NEAR(variant->busbw_gbps, variant->algbw_gbps * 1.5, 1e-9);  // 2(4-1)/4
      EXPECT_EQ(variant->wrong, 0);
    }
  }
}

TEST(CollectiveSweepTest, SameClockGivesSameRows) {
  FakeJobBackend first(0, 2, 0);
  FakeJobBackend second(0, 2, 0);
  const SweepOutcome a = RunSweep(first, SmallSpec(), nullptr);
  const SweepOutcome b = RunSweep(second, SmallSpec(), nullptr);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i)
    EXPECT_EQ(EncodeRowLine(a.rows[i]), EncodeRowLine(b.rows[i]));
}

TEST(CollectiveSweepTest, WarmsUpBarriersThenTimesAndChecksInPlaceOnFreshData) {
  FakeJobBackend backend(0, 2, 0);
  SweepSpec spec = SmallSpec();
  spec.max_bytes = 8;
  ASSERT_EQ(RunSweep(backend, spec, nullptr).error, "");
  EXPECT_EQ(backend.calls,
            (std::vector<std::string>{"prepare 2", "run 2 oop", "barrier", "run 4 oop", "result",
                                      "prepare 2", "run 2 ip", "barrier", "run 4 ip", "prepare 2",
                                      "run 1 ip", "result"}));
}

TEST(CollectiveSweepTest, NoWarmupRunWhenWarmupIsZero) {
  FakeJobBackend backend(0, 2, 0);
  SweepSpec spec = SmallSpec();
  spec.max_bytes = 8;
  spec.warmup_iters = 0;
  spec.in_place = false;
  const SweepOutcome outcome = RunSweep(backend, spec, nullptr);
  ASSERT_EQ(outcome.error, "");
  EXPECT_EQ(backend.calls,
            (std::vector<std::string>{"prepare 2", "barrier", "run 4 oop", "result"}));
  ASSERT_EQ(outcome.rows.size(), 1u);
  EXPECT_FALSE(outcome.rows[0].has_in_place);
}

TEST(CollectiveSweepTest, CountsWrongElements) {
  FakeJobBackend backend(0, 8, 0);
  backend.corrupt_out_of_place = true;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  ASSERT_EQ(outcome.error, "");
  ASSERT_EQ(outcome.rows.size(), 4u);
  EXPECT_EQ(outcome.rows[0].out_of_place.wrong, 0);  // 2 elements: index 3 does not exist
  EXPECT_EQ(outcome.rows[1].out_of_place.wrong, 1);
  EXPECT_EQ(outcome.rows[1].in_place.wrong, 0);
}

TEST(CollectiveSweepTest, ShortResultCountsMissingElementsAsWrong) {
  FakeJobBackend backend(0, 2, 0);
  backend.short_result = true;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  ASSERT_EQ(outcome.rows.size(), 4u);
  EXPECT_EQ(outcome.rows[3].out_of_place.wrong, 1);
  EXPECT_EQ(outcome.rows[3].in_place.wrong, 1);
}

TEST(CollectiveSweepTest, BackendErrorStopsTheSweepAndNamesTheSize) {
  FakeJobBackend backend(0, 2, 0);
  backend.fail_at_bytes = 32;
  std::vector<SweepRow> streamed;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), &streamed);
  EXPECT_EQ(outcome.error,
            "all_reduce of 32 bytes (out-of-place) failed: ncclAllReduce returned unhandled "
            "system error");
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].bytes, 16);
  EXPECT_EQ(streamed.size(), 2u);
}

TEST(CollectiveSweepTest, SkipsSizesAboveTheBackendCap) {
  FakeJobBackend backend(0, 2, 20);
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  ASSERT_EQ(outcome.error, "");
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows.back().bytes, 16);
}

TEST(CollectiveSweepTest, NothingFitsIsAnError) {
  FakeJobBackend backend(3, 4, 4);
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  EXPECT_TRUE(outcome.rows.empty());
  EXPECT_EQ(outcome.error,
            "no size of the sweep fits rank 3's memory cap of 4 bytes (min is 8): lower "
            "collectives.sizes.min or free device memory");
}

TEST(CollectiveSweepTest, InvalidSpecIsRejectedBeforeAnyRun) {
  FakeJobBackend backend(0, 2, 0);
  SweepSpec spec = SmallSpec();
  spec.iters = 0;
  const SweepOutcome outcome = RunSweep(backend, spec, nullptr);
  EXPECT_EQ(outcome.error, "collectives.iters is 0: it must be 1 or more (nccl-tests -n)");
  EXPECT_TRUE(backend.calls.empty());
}

SweepSpec WideSpec() {
  SweepSpec spec = SmallSpec();
  spec.max_bytes = 1024;
  return spec;
}

// Every operation's sweep on 4 ranks: nccl-tests' sizes (16 bytes a rank at
// least), its busbw factor, and every element right in both variants.
TEST(CollectiveSweepTest, EveryOperationRunsCorrectlyOnFourRanks) {
  for (Operation operation : kOperations) {
    SCOPED_TRACE(OperationName(operation));
    FakeJobBackend backend(2, 4, 0);
    const SweepOutcome outcome = RunSweep(backend, WideSpec(), nullptr, operation);
    ASSERT_EQ(outcome.error, "");
    const bool all_reduce = operation == Operation::kAllReduce;
    ASSERT_EQ(outcome.rows.size(), all_reduce ? 8u : 5u);  // 64 B is the first of 4 x 16 B
    EXPECT_EQ(outcome.rows.front().bytes, all_reduce ? 8 : 64);
    for (const SweepRow& row : outcome.rows) {
      EXPECT_EQ(row.operation, OperationName(operation));
      EXPECT_EQ(row.count, all_reduce ? row.bytes / 4 : row.bytes / 16);
      EXPECT_EQ(row.out_of_place.wrong, 0);
      EXPECT_EQ(row.has_in_place, operation != Operation::kAlltoAll);
      if (row.has_in_place) EXPECT_EQ(row.in_place.wrong, 0);
      EXPECT_NEAR(row.out_of_place.busbw_gbps,
                  row.out_of_place.algbw_gbps * (all_reduce ? 1.5 : 0.75), 1e-9);
    }
  }
}

TEST(CollectiveSweepTest, AWrongElementIsCountedForEveryOperation) {
  for (Operation operation : kOperations) {
    SCOPED_TRACE(OperationName(operation));
    FakeJobBackend backend(1, 4, 0);
    backend.corrupt_out_of_place = true;
    const SweepOutcome outcome = RunSweep(backend, WideSpec(), nullptr, operation);
    ASSERT_EQ(outcome.error, "");
    ASSERT_FALSE(outcome.rows.empty());
    EXPECT_EQ(outcome.rows.back().out_of_place.wrong, 1);
    if (outcome.rows.back().has_in_place) EXPECT_EQ(outcome.rows.back().in_place.wrong, 0);
  }
}

TEST(CollectiveSweepTest, NoSizeHoldingSixteenBytesPerRankIsAnError) {
  FakeJobBackend backend(0, 8, 0);
  SweepSpec spec = SmallSpec();
  spec.max_bytes = 64;  // 8 ranks need 128
  const SweepOutcome outcome = RunSweep(backend, spec, nullptr, Operation::kAlltoAll);
  EXPECT_TRUE(outcome.rows.empty());
  EXPECT_EQ(outcome.error,
            "no size of the alltoall sweep up to 64 bytes gives each of 8 ranks 16 bytes within "
            "rank 0's memory cap of 0 bytes: raise collectives.sizes.max to at least 128 or free "
            "device memory");
}

TEST(CollectiveSweepTest, FailureNamesTheOperation) {
  FakeJobBackend backend(0, 2, 0);
  backend.fail_at_bytes = 64;
  const SweepOutcome outcome = RunSweep(backend, WideSpec(), nullptr, Operation::kAllGather);
  EXPECT_EQ(outcome.error.rfind("all_gather of 64 bytes (out-of-place) failed: ", 0), 0u)
      << outcome.error;
}

}  // namespace
}  // namespace clustercert::sweep
