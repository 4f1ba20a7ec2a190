#pragma once

// The frame every collective worker's main() shares, whatever its backend:
// the command line, the sweep with its rows reported, and the last word on
// an exception the backend let through.

#include <cstdio>
#include <functional>
#include <string>

#include "sweep/collective_sweep.h"
#include "sweep/sweep_spec.h"
#include "sweep/worker_failure.h"
#include "sweep/worker_options.h"
#include "sweep/worker_output.h"
#include "sweep/worker_protocol.h"

namespace clustercert::sweep {

// What one backend does with a parsed command line; returns the exit code.
using WorkerBody = std::function<int(const WorkerOptions&, WorkerOutput&, WorkerChannel&)>;

// Keeps the process's stdout for the worker protocol (or --print-table's
// table) on a descriptor of its own and points descriptor 1 at stderr, so
// what a library prints to stdout cannot break a protocol line: NCCL writes
// its NCCL_DEBUG log to stdout unless told otherwise. Returns the stream to
// give WorkerChannel; plain stdout, unchanged, if a descriptor call fails.
std::FILE* ReserveStdoutForProtocol();

// Parses argv (reporting a bad line both ways: ParseWorkerArgs also refuses
// --print-table with more than one rank), then runs `body`. What `body`
// throws becomes a `fail`: a RankFailure as it is, a WorkerFailure after
// "rank R of N: ", anything else as an unexpected error naming the rank and
// `backend` ("gloo", "nccl").
// `channel` is the agent's (stdout and stdin in a worker).
int RunWorkerMain(int argc, char** argv, const std::string& program, const std::string& backend,
                  WorkerChannel& channel, const WorkerBody& body);

// Runs the sweep on `backend`, reporting each row, then `done` or the
// sweep's failure; returns the exit code.
int SweepAndReport(CollectiveBackend& backend, Operation operation, const SweepSpec& spec,
                   WorkerOutput& output);

// "rank 2 of 8".
std::string RankText(const WorkerOptions& options);

}  // namespace clustercert::sweep
