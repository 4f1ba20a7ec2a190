#include "sweep/allreduce_sweep.h"

#include "sweep/bus_bandwidth.h"

namespace clustercert::sweep {
namespace {

// The repeat of the pattern: 7 keeps values small (sums stay exact in float
// up to about 2,000 ranks) while still catching shifted or swapped blocks.
constexpr int64_t kPatternPeriod = 7;

std::vector<float> InitialData(int rank, int64_t count) {
  std::vector<float> data(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) data[static_cast<size_t>(i)] = InitialValue(rank, i);
  return data;
}

int64_t CountWrong(const std::vector<float>& result, int ranks, int64_t count) {
  const int64_t held = static_cast<int64_t>(result.size());
  // A short result is wrong in every element it lacks.
  int64_t wrong = held < count ? count - held : 0;
  const int64_t checked = held < count ? held : count;
  for (int64_t i = 0; i < checked; ++i) {
    if (result[static_cast<size_t>(i)] != ExpectedSum(ranks, i)) ++wrong;
  }
  return wrong;
}

std::string VariantName(bool in_place) { return in_place ? "in-place" : "out-of-place"; }

std::string RunFailure(int64_t bytes, bool in_place, const std::string& error) {
  return "allreduce of " + std::to_string(bytes) + " bytes (" + VariantName(in_place) +
         ") failed: " + error;
}

// Times one variant of one size; "" or the error sentence.
std::string TimeVariant(AllreduceBackend& backend, const SweepSpec& spec,
                        const std::function<double()>& clock_seconds,
                        const std::vector<float>& host_data, int64_t bytes, bool in_place,
                        TimedVariant& variant) {
  const int64_t count = static_cast<int64_t>(host_data.size());
  backend.Prepare(host_data);
  if (spec.warmup_iters > 0) {
    std::string error = backend.Run(spec.warmup_iters, in_place);
    if (!error.empty()) return RunFailure(bytes, in_place, error);
  }
  backend.Barrier();
  const double start = clock_seconds();
  std::string error = backend.Run(spec.iters, in_place);
  const double end = clock_seconds();
  if (!error.empty()) return RunFailure(bytes, in_place, error);

  const double seconds_per_op = (end - start) / spec.iters;
  variant.time_us = seconds_per_op * 1e6;
  variant.algbw_gbps = AlgorithmBandwidthGBps(bytes, seconds_per_op);
  variant.busbw_gbps = AllreduceBusBandwidthGBps(bytes, seconds_per_op, backend.ranks());

  if (in_place) {
    // After warmup + iters in-place sums the buffer holds the sum of sums, not
    // one sum, so the check runs a single fresh in-place operation on the
    // initial data, outside the timed loop.
    backend.Prepare(host_data);
    error = backend.Run(1, true);
    if (!error.empty()) return RunFailure(bytes, in_place, error);
  }
  // Out-of-place always reads the untouched send buffer, so the receive
  // buffer after the timed loop holds exactly one sum.
  variant.wrong = CountWrong(backend.Result(), backend.ranks(), count);
  return "";
}

}  // namespace

float InitialValue(int rank, int64_t element) {
  return static_cast<float>((static_cast<int64_t>(rank) + 1) * (element % kPatternPeriod + 1));
}

float ExpectedSum(int ranks, int64_t element) {
  // Sum over r of (r + 1) * k = k * n(n + 1) / 2.
  const int64_t n = ranks;
  return static_cast<float>(n * (n + 1) / 2 * (element % kPatternPeriod + 1));
}

SweepOutcome RunAllreduceSweep(AllreduceBackend& backend, const SweepSpec& spec,
                               const std::function<double()>& clock_seconds,
                               const std::function<void(const SweepRow&)>& on_row) {
  SweepOutcome outcome;
  if (std::string invalid = ValidateSweepSpec(spec); !invalid.empty()) {
    outcome.error = invalid;
    return outcome;
  }
  const int64_t cap = backend.MemoryCapBytes();
  const std::vector<int64_t> sizes = SweepSizes(spec, static_cast<int>(sizeof(float)), cap);
  if (sizes.empty()) {
    outcome.error = "no size of the sweep fits rank " + std::to_string(backend.rank()) +
                    "'s memory cap of " + std::to_string(cap) + " bytes (min is " +
                    std::to_string(spec.min_bytes) +
                    "): lower collectives.sizes.min or free device memory";
    return outcome;
  }

  for (int64_t bytes : sizes) {
    const int64_t count = bytes / static_cast<int64_t>(sizeof(float));
    const std::vector<float> host_data = InitialData(backend.rank(), count);
    SweepRow row;
    row.bytes = bytes;
    row.count = count;
    row.has_in_place = spec.in_place;
    outcome.error =
        TimeVariant(backend, spec, clock_seconds, host_data, bytes, false, row.out_of_place);
    if (outcome.error.empty() && spec.in_place) {
      outcome.error =
          TimeVariant(backend, spec, clock_seconds, host_data, bytes, true, row.in_place);
    }
    if (!outcome.error.empty()) return outcome;
    outcome.rows.push_back(row);
    if (on_row) on_row(outcome.rows.back());
  }
  return outcome;
}

}  // namespace clustercert::sweep
