#pragma once

// The sweep loop shared by the gloo and NCCL workers, for any operation of
// sweep/collective_operation.h: for each size, fill the send buffer with the
// operation's per-rank pattern, warm up, time `iters` operations
// out-of-place and then in-place (not alltoall), check every element of the
// result, and produce nccl-tests' row. The backend does the collective; this
// loop does the measuring, so both workers measure every operation the same way.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep/collective_operation.h"
#include "sweep/sweep_row.h"
#include "sweep/sweep_spec.h"

namespace clustercert::sweep {

// What a worker's collective library provides. float elements, sum.
class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Largest buffer the backend can hold twice (send and receive), bytes.
  virtual int64_t MemoryCapBytes() const = 0;
  // Makes send and receive buffers of shape.bytes each for shape.operation,
  // the send buffer filled from `send_data` (shape.send_count floats).
  virtual void Prepare(const CollectiveShape& shape, const std::vector<float>& send_data) = 0;
  // Runs `n` operations back to back and waits for the last to complete on
  // this rank. Out-of-place: send -> receive. In-place (nccl-tests' way):
  // the send data is first copied to the receive buffer at
  // in_place_send_offset, and each operation reads from there and writes at
  // in_place_receive_offset of the same buffer. Returns "" or an error sentence.
  virtual std::string Run(int n, bool in_place) = 0;
  // Copies the result back to the host: receive_count floats from the
  // receive buffer, at in_place_receive_offset when `in_place`.
  virtual std::vector<float> Result(bool in_place) = 0;
  // Waits until every rank got here (a barrier), so timings start together.
  virtual void Barrier() = 0;
};

struct SweepOutcome {
  std::vector<SweepRow> rows;
  std::string error;  // "" when every size ran
};

// `clock_seconds` is injected (steady clock in workers, a fake in tests);
// `on_row` is called after each size, so rows stream out while the sweep runs.
// In-place results are checked on one extra in-place operation over freshly
// prepared data after the timed loop (the timed loop compounds reductions);
// out-of-place results are checked straight after the timed loop. Sizes that
// hold no element per rank for the operation are skipped.
SweepOutcome RunCollectiveSweep(CollectiveBackend& backend, Operation operation,
                                const SweepSpec& spec, const std::function<double()>& clock_seconds,
                                const std::function<void(const SweepRow&)>& on_row);

}  // namespace clustercert::sweep
