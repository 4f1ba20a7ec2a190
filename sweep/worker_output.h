#pragma once

// What a collective worker's main shares whatever its backend: where its
// results go (the agent's protocol, or in --print-table mode nccl-tests'
// table on stdout with notes as '#' lines and the failure on stderr), and
// the steady clock the sweep is timed with.

#include <optional>
#include <string>

#include "sweep/sweep_row.h"
#include "sweep/worker_options.h"
#include "sweep/worker_protocol.h"

namespace clustercert::sweep {

inline constexpr int kWorkerExitFailed = 1;

class WorkerOutput {
 public:
  // `program` prefixes the failure on stderr ("collective-worker-gloo").
  WorkerOutput(WorkerChannel& channel, bool print_table, std::string program);

  void Note(const std::string& text);
  void Row(const SweepRow& row);
  // Reports the failure and returns `exit_code`, for `return output.Fail(...)`.
  int Fail(const std::string& sentence, int exit_code = kWorkerExitFailed);
  int Done();

 private:
  WorkerChannel& channel_;
  bool print_table_;
  std::string program_;
  bool header_printed_ = false;
};

// The worker's command line (argv[1..]); on a bad line reports it both ways
// (stderr, and `fail` to the agent: the mode is unknown when the line does
// not parse) and returns nullopt.
std::optional<WorkerOptions> ParseWorkerCommandLine(int argc, char** argv,
                                                    const std::string& program,
                                                    WorkerChannel& channel);

// Seconds on the steady clock, for RunAllreduceSweep.
double SteadySeconds();

}  // namespace clustercert::sweep
