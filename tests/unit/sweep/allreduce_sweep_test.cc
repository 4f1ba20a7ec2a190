#include "sweep/allreduce_sweep.h"

#include <gtest/gtest.h>

#include "sweep/bus_bandwidth.h"

namespace clustercert::sweep {
namespace {

// Simulates a whole job inside one process: this rank's buffer comes from
// Prepare, the other ranks hold InitialValue, and every rank steps in lockstep,
// so in-place sums compound as they would on real ranks. Each operation moves a
// fake clock by a fixed latency plus bytes over a fixed rate.
class FakeJobBackend : public AllreduceBackend {
 public:
  FakeJobBackend(int rank, int ranks, int64_t cap) : rank_(rank), ranks_(ranks), cap_(cap) {}
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  int64_t MemoryCapBytes() const override { return cap_; }

  void Prepare(const std::vector<float>& host_data) override {
    calls.push_back("prepare " + std::to_string(host_data.size()));
    send_.assign(ranks_, {});
    for (int r = 0; r < ranks_; ++r) {
      send_[r].resize(host_data.size());
      for (size_t i = 0; i < host_data.size(); ++i) {
        send_[r][i] = r == rank_ ? host_data[i] : InitialValue(r, static_cast<int64_t>(i));
      }
    }
    receive_.assign(ranks_, std::vector<float>(host_data.size(), -1.0f));
  }

  std::string Run(int n, bool in_place) override {
    calls.push_back("run " + std::to_string(n) + (in_place ? " ip" : " oop"));
    const size_t count = send_.empty() ? 0 : send_[0].size();
    if (fail_at_bytes > 0 && static_cast<int64_t>(count * sizeof(float)) == fail_at_bytes) {
      return "ncclAllReduce returned unhandled system error";
    }
    if (in_place) receive_ = send_;
    for (int k = 0; k < n; ++k) {
      const std::vector<std::vector<float>>& source = in_place ? receive_ : send_;
      std::vector<float> sum(count, 0.0f);
      for (int r = 0; r < ranks_; ++r) {
        for (size_t i = 0; i < count; ++i) sum[i] += source[r][i];
      }
      for (int r = 0; r < ranks_; ++r) receive_[r] = sum;
      now += kLatencySeconds + static_cast<double>(count * sizeof(float)) / kBytesPerSecond;
    }
    return "";
  }

  std::vector<float> Result() override {
    calls.push_back("result");
    std::vector<float> result = receive_[rank_];
    if (corrupt_out_of_place && !calls.empty() && LastRunWasOutOfPlace() && result.size() > 3) {
      result[3] += 1.0f;
    }
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
  bool LastRunWasOutOfPlace() const {
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      if (it->rfind("run ", 0) == 0) return it->find("oop") != std::string::npos;
    }
    return false;
  }

  int rank_;
  int ranks_;
  int64_t cap_;
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
                      std::vector<SweepRow>* streamed) {
  return RunAllreduceSweep(
      backend, spec, [&backend] { return backend.now; },
      [streamed](const SweepRow& row) {
        if (streamed) streamed->push_back(row);
      });
}

TEST(AllreduceSweepTest, PatternIsSmallIntegersAndSumsExactly) {
  EXPECT_EQ(InitialValue(0, 0), 1.0f);
  EXPECT_EQ(InitialValue(2, 3), 12.0f);
  EXPECT_EQ(InitialValue(1, 7), 2.0f);  // period 7
  EXPECT_EQ(ExpectedSum(4, 3), 40.0f);  // (1+2+3+4) * 4
  float sum = 0;
  for (int r = 0; r < 16; ++r) sum += InitialValue(r, 6);
  EXPECT_EQ(sum, ExpectedSum(16, 6));
}

TEST(AllreduceSweepTest, TimesEverySizeFromTheInjectedClock) {
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

TEST(AllreduceSweepTest, SameClockGivesSameRows) {
  FakeJobBackend first(0, 2, 0);
  FakeJobBackend second(0, 2, 0);
  const SweepOutcome a = RunSweep(first, SmallSpec(), nullptr);
  const SweepOutcome b = RunSweep(second, SmallSpec(), nullptr);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i)
    EXPECT_EQ(EncodeRowLine(a.rows[i]), EncodeRowLine(b.rows[i]));
}

TEST(AllreduceSweepTest, WarmsUpBarriersThenTimesAndChecksInPlaceOnFreshData) {
  FakeJobBackend backend(0, 2, 0);
  SweepSpec spec = SmallSpec();
  spec.max_bytes = 8;
  ASSERT_EQ(RunSweep(backend, spec, nullptr).error, "");
  EXPECT_EQ(backend.calls,
            (std::vector<std::string>{"prepare 2", "run 2 oop", "barrier", "run 4 oop", "result",
                                      "prepare 2", "run 2 ip", "barrier", "run 4 ip", "prepare 2",
                                      "run 1 ip", "result"}));
}

TEST(AllreduceSweepTest, NoWarmupRunWhenWarmupIsZero) {
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

TEST(AllreduceSweepTest, CountsWrongElements) {
  FakeJobBackend backend(0, 8, 0);
  backend.corrupt_out_of_place = true;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  ASSERT_EQ(outcome.error, "");
  ASSERT_EQ(outcome.rows.size(), 4u);
  EXPECT_EQ(outcome.rows[0].out_of_place.wrong, 0);  // 2 elements: index 3 does not exist
  EXPECT_EQ(outcome.rows[1].out_of_place.wrong, 1);
  EXPECT_EQ(outcome.rows[1].in_place.wrong, 0);
}

TEST(AllreduceSweepTest, ShortResultCountsMissingElementsAsWrong) {
  FakeJobBackend backend(0, 2, 0);
  backend.short_result = true;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  ASSERT_EQ(outcome.rows.size(), 4u);
  EXPECT_EQ(outcome.rows[3].out_of_place.wrong, 1);
  EXPECT_EQ(outcome.rows[3].in_place.wrong, 1);
}

TEST(AllreduceSweepTest, BackendErrorStopsTheSweepAndNamesTheSize) {
  FakeJobBackend backend(0, 2, 0);
  backend.fail_at_bytes = 32;
  std::vector<SweepRow> streamed;
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), &streamed);
  EXPECT_EQ(outcome.error,
            "allreduce of 32 bytes (out-of-place) failed: ncclAllReduce returned unhandled "
            "system error");
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].bytes, 16);
  EXPECT_EQ(streamed.size(), 2u);
}

TEST(AllreduceSweepTest, SkipsSizesAboveTheBackendCap) {
  FakeJobBackend backend(0, 2, 20);
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  ASSERT_EQ(outcome.error, "");
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows.back().bytes, 16);
}

TEST(AllreduceSweepTest, NothingFitsIsAnError) {
  FakeJobBackend backend(3, 4, 4);
  const SweepOutcome outcome = RunSweep(backend, SmallSpec(), nullptr);
  EXPECT_TRUE(outcome.rows.empty());
  EXPECT_EQ(outcome.error,
            "no size of the sweep fits rank 3's memory cap of 4 bytes (min is 8): lower "
            "collectives.sizes.min or free device memory");
}

TEST(AllreduceSweepTest, InvalidSpecIsRejectedBeforeAnyRun) {
  FakeJobBackend backend(0, 2, 0);
  SweepSpec spec = SmallSpec();
  spec.iters = 0;
  const SweepOutcome outcome = RunSweep(backend, spec, nullptr);
  EXPECT_EQ(outcome.error, "collectives.iters is 0: it must be 1 or more (nccl-tests -n)");
  EXPECT_TRUE(backend.calls.empty());
}

}  // namespace
}  // namespace clustercert::sweep
