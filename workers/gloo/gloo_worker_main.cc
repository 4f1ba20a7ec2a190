// collective-worker-gloo: one rank of an allreduce sweep over gloo (tcp or
// ibverbs on host memory), launched by the node-agent with the command line
// of collective/worker_options.h and speaking collective/worker_protocol.h on
// stdin/stdout. With --print-table --ranks 1 it runs alone and prints
// nccl-tests' table instead. Exit 0 after `done`, 1 after `fail`.

#include <gloo/rendezvous/hash_store.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "collective/allreduce_sweep.h"
#include "collective/sweep_row.h"
#include "collective/sweep_spec.h"
#include "collective/worker_options.h"
#include "collective/worker_output.h"
#include "collective/worker_protocol.h"
#include "workers/gloo/gloo_backend.h"
#include "workers/gloo/worker_store.h"

namespace clustercert::workers::gloo_worker {
namespace {

using collective::SteadySeconds;
using collective::WorkerOutput;

int RunWorker(const collective::WorkerOptions& options, WorkerOutput& output,
              collective::WorkerChannel& channel) {
  if (options.print_table && options.ranks != 1) {
    return output.Fail("--print-table runs one rank alone, but --ranks is " +
                       std::to_string(options.ranks) + ": drop --print-table or pass --ranks 1");
  }
  std::string invalid = collective::ValidateSweepSpec(options.sweep);
  if (!invalid.empty()) return output.Fail(invalid);

  // Alone, gloo still rendezvous through a store: an in-process one will do.
  std::unique_ptr<::gloo::rendezvous::Store> store;
  if (options.print_table) {
    store = std::make_unique<::gloo::rendezvous::HashStore>();
  } else {
    store = std::make_unique<WorkerStore>(channel);
  }

  std::string error;
  std::unique_ptr<GlooAllreduceBackend> backend =
      GlooAllreduceBackend::Connect(options, *store, error);
  if (!backend) return output.Fail(error);
  output.Note("transport " + backend->transport_description());
  if (backend->MemoryCapBytes() < options.sweep.max_bytes) {
    output.Note("sweep capped at " + std::to_string(backend->MemoryCapBytes()) +
                " bytes: host buffers limited by " +
                (options.memory_cap_bytes > 0
                     ? "--memory-cap " + std::to_string(options.memory_cap_bytes)
                     : std::string("the 1 GiB default")) +
                " and MemAvailable " + std::to_string(ReadMemAvailableBytes()) + " bytes / 8");
  }

  collective::SweepOutcome outcome = collective::RunAllreduceSweep(
      *backend, options.sweep, SteadySeconds,
      [&output](const collective::SweepRow& row) { output.Row(row); });
  if (!outcome.error.empty()) return output.Fail(outcome.error);
  return output.Done();
}

}  // namespace
}  // namespace clustercert::workers::gloo_worker

int main(int argc, char** argv) {
  using namespace clustercert;
  collective::WorkerChannel channel(stdout, stdin);
  std::optional<collective::WorkerOptions> options =
      collective::ParseWorkerCommandLine(argc, argv, "collective-worker-gloo", channel);
  if (!options) return collective::kWorkerExitFailed;
  collective::WorkerOutput output(channel, options->print_table, "collective-worker-gloo");
  const std::string who =
      "rank " + std::to_string(options->rank) + " of " + std::to_string(options->ranks);
  try {
    return workers::gloo_worker::RunWorker(*options, output, channel);
  } catch (const workers::gloo_worker::GlooFailure& failure) {
    return output.Fail(failure.what());  // already names the rank
  } catch (const workers::gloo_worker::StoreClosed& failure) {
    return output.Fail(who + ": " + failure.what());
  } catch (const std::exception& failure) {
    return output.Fail(who + " (gloo " + options->transport + ") stopped on an unexpected error: " +
                       failure.what() + ": report it with the worker's stderr");
  }
}
