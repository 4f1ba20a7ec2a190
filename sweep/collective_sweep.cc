#include "sweep/collective_sweep.h"

#include "sweep/bus_bandwidth.h"

namespace clustercert::sweep {
namespace {

std::string VariantName(bool in_place) { return in_place ? "in-place" : "out-of-place"; }

std::string RunFailure(const CollectiveShape& shape, bool in_place, const std::string& error) {
  return OperationName(shape.operation) + " of " + std::to_string(shape.bytes) + " bytes (" +
         VariantName(in_place) + ") failed: " + error;
}

// Times one variant of one size; "" or the error sentence.
std::string TimeVariant(CollectiveBackend& backend, const SweepSpec& spec,
                        const std::function<double()>& clock_seconds, const CollectiveShape& shape,
                        const std::vector<float>& send_data, bool in_place, TimedVariant& variant) {
  backend.Prepare(shape, send_data);
  if (spec.warmup_iters > 0) {
    std::string error = backend.Run(spec.warmup_iters, in_place);
    if (!error.empty()) return RunFailure(shape, in_place, error);
  }
  backend.Barrier();
  const double start = clock_seconds();
  std::string error = backend.Run(spec.iters, in_place);
  const double end = clock_seconds();
  if (!error.empty()) return RunFailure(shape, in_place, error);

  const double seconds_per_op = (end - start) / spec.iters;
  variant.time_us = seconds_per_op * 1e6;
  variant.algbw_gbps = AlgorithmBandwidthGBps(shape.bytes, seconds_per_op);
  variant.busbw_gbps =
      BusBandwidthGBps(shape.operation, shape.bytes, seconds_per_op, backend.ranks());

  if (in_place) {
    // After warmup + iters in-place reductions the buffer holds sums of
    // sums, not one sum, so the check runs a single fresh in-place
    // operation on the initial data, outside the timed loop.
    backend.Prepare(shape, send_data);
    error = backend.Run(1, true);
    if (!error.empty()) return RunFailure(shape, in_place, error);
  }
  // Out-of-place always reads the untouched send buffer, so the receive
  // buffer after the timed loop holds exactly one result.
  variant.wrong = CountWrong(shape, backend.rank(), backend.ranks(), backend.Result(in_place));
  return "";
}

std::string NothingFits(const CollectiveBackend& backend, Operation operation,
                        const SweepSpec& spec, int64_t cap) {
  const std::string where = "rank " + std::to_string(backend.rank()) + "'s memory cap of " +
                            std::to_string(cap) + " bytes";
  if (operation == Operation::kAllReduce) {
    return "no size of the sweep fits " + where + " (min is " + std::to_string(spec.min_bytes) +
           "): lower collectives.sizes.min or free device memory";
  }
  // nccl-tests gives each rank a share of the size rounded down to 16 bytes.
  const int64_t least = int64_t{16} * backend.ranks();
  return "no size of the " + OperationName(operation) + " sweep up to " +
         std::to_string(spec.max_bytes) + " bytes gives each of " +
         std::to_string(backend.ranks()) + " ranks 16 bytes within " + where +
         ": raise collectives.sizes.max to at least " + std::to_string(least) +
         " or free device memory";
}

}  // namespace

SweepOutcome RunCollectiveSweep(CollectiveBackend& backend, Operation operation,
                                const SweepSpec& spec, const std::function<double()>& clock_seconds,
                                const std::function<void(const SweepRow&)>& on_row) {
  SweepOutcome outcome;
  if (std::string invalid = ValidateSweepSpec(spec); !invalid.empty()) {
    outcome.error = invalid;
    return outcome;
  }
  const int64_t cap = backend.MemoryCapBytes();
  const bool in_place = spec.in_place && HasInPlace(operation);
  for (int64_t bytes : SweepSizes(spec, static_cast<int>(sizeof(float)), cap)) {
    const std::optional<CollectiveShape> shape =
        ShapeOf(operation, bytes, backend.ranks(), backend.rank());
    if (!shape) continue;
    const std::vector<float> send_data = SendData(*shape, backend.rank(), backend.ranks());
    SweepRow row;
    row.bytes = shape->bytes;
    row.count = shape->count;
    row.operation = OperationName(operation);
    row.redop = RedopName(operation);
    row.has_in_place = in_place;
    outcome.error =
        TimeVariant(backend, spec, clock_seconds, *shape, send_data, false, row.out_of_place);
    if (outcome.error.empty() && in_place) {
      outcome.error =
          TimeVariant(backend, spec, clock_seconds, *shape, send_data, true, row.in_place);
    }
    if (!outcome.error.empty()) return outcome;
    outcome.rows.push_back(row);
    if (on_row) on_row(outcome.rows.back());
  }
  if (outcome.rows.empty()) outcome.error = NothingFits(backend, operation, spec, cap);
  return outcome;
}

}  // namespace clustercert::sweep
