#pragma once

// The sweep loop shared by the gloo and NCCL workers: for each size, fill the
// buffers with a per-rank pattern, warm up, time `iters` operations
// out-of-place and then in-place, check every element of the result, and
// produce nccl-tests' row. The backend does the collective; this class does
// the measuring, so both workers measure the same way.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep_row.h"
#include "sweep/sweep_spec.h"

namespace clustercert::sweep {

// What a worker's collective library provides. float elements, sum.
class AllreduceBackend {
 public:
  virtual ~AllreduceBackend() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Largest buffer the backend can hold twice (send and receive), bytes.
  virtual int64_t MemoryCapBytes() const = 0;
  // Makes send/receive buffers of `count` floats, send filled from `host_data`.
  virtual void Prepare(const std::vector<float>& host_data) = 0;
  // Runs `n` allreduces back to back (out-of-place: send -> receive; in-place:
  // receive := send first, then in place on receive) and waits for the
  // last to complete on this rank. Returns "" or an error sentence.
  virtual std::string Run(int n, bool in_place) = 0;
  // Copies the result (the receive buffer) back to the host.
  virtual std::vector<float> Result() = 0;
  // Waits until every rank got here (a barrier), so timings start together.
  virtual void Barrier() = 0;
};

// The value rank r holds at element i before the reduction, and what every
// element must be after a sum over n ranks. Small integers, so float sums are exact.
float InitialValue(int rank, int64_t element);
float ExpectedSum(int ranks, int64_t element);

struct SweepOutcome {
  std::vector<SweepRow> rows;
  std::string error;  // "" when every size ran
};

// `clock_seconds` is injected (steady clock in workers, a fake in tests);
// `on_row` is called after each size, so rows stream out while the sweep runs.
// In-place results are checked on one extra in-place operation over freshly
// prepared data after the timed loop (the timed loop compounds the sums);
// out-of-place results are checked straight after the timed loop.
SweepOutcome RunAllreduceSweep(AllreduceBackend& backend, const SweepSpec& spec,
                               const std::function<double()>& clock_seconds,
                               const std::function<void(const SweepRow&)>& on_row);

}  // namespace clustercert::sweep
