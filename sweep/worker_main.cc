#include "sweep/worker_main.h"

#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <optional>
#include <string>

namespace clustercert::sweep {

std::string RankText(const WorkerOptions& options) {
  return "rank " + std::to_string(options.rank) + " of " + std::to_string(options.ranks);
}

std::FILE* ReserveStdoutForProtocol() {
  std::fflush(stdout);
  // Above the standard three, and closed on exec: NCCL's and CUDA's helper
  // processes must not hold the agent's pipe open.
  const int protocol_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol_fd < 0) return stdout;
  std::FILE* protocol = ::fdopen(protocol_fd, "w");
  if (protocol == nullptr) {
    ::close(protocol_fd);
    return stdout;
  }
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::fclose(protocol);
    return stdout;
  }
  return protocol;
}

int RunWorkerMain(int argc, char** argv, const std::string& program, const std::string& backend,
                  WorkerChannel& channel, const WorkerBody& body) {
  std::optional<WorkerOptions> options = ParseWorkerCommandLine(argc, argv, program, channel);
  if (!options) return kWorkerExitFailed;
  WorkerOutput output(channel, options->print_table, program);
  try {
    return body(*options, output, channel);
  } catch (const RankFailure& failure) {
    return output.Fail(failure.what());
  } catch (const WorkerFailure& failure) {
    return output.Fail(RankText(*options) + ": " + failure.what());
  } catch (const std::exception& failure) {
    return output.Fail(RankText(*options) + " (" + backend + ") stopped on an unexpected error: " +
                       failure.what() + ": report it with the worker's stderr");
  }
}

int SweepAndReport(CollectiveBackend& backend, Operation operation, const SweepSpec& spec,
                   WorkerOutput& output) {
  SweepOutcome outcome = RunCollectiveSweep(backend, operation, spec, SteadySeconds,
                                            [&output](const SweepRow& row) { output.Row(row); });
  if (!outcome.error.empty()) return output.Fail(outcome.error);
  return output.Done();
}

}  // namespace clustercert::sweep
