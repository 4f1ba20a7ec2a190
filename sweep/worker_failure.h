#pragma once

// The failures a collective worker's backend throws where its interface has
// no return value (gloo's store, the sweep's Run/Barrier), so that the
// worker's main (sweep/worker_main.h) reports each as a `fail` sentence.

#include <stdexcept>

namespace clustercert::sweep {

// An expected failure whose sentence does not name the rank: the main puts
// "rank R of N: " in front (the rendezvous store closing under the worker).
class WorkerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure whose sentence already names the rank (gloo's and NCCL's
// errors, built with the rank they happened on): reported as it is.
class RankFailure : public WorkerFailure {
 public:
  using WorkerFailure::WorkerFailure;
};

}  // namespace clustercert::sweep
