// collective-worker-gloo: one rank of a collective sweep (--operation) over gloo (tcp or
// ibverbs on host memory), launched by the node-agent with the command line
// of sweep/worker_options.h and speaking sweep/worker_protocol.h on
// stdin/stdout. With --print-table --ranks 1 it runs alone and prints
// nccl-tests' table instead. Exit 0 after `done`, 1 after `fail`.

#include <gloo/rendezvous/hash_store.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sweep/worker_main.h"
#include "workers/gloo/gloo_backend.h"
#include "workers/gloo/worker_store.h"

namespace clustercert::workers::gloo_worker {
namespace {

using sweep::WorkerOutput;

int RunWorker(const sweep::WorkerOptions& options, WorkerOutput& output,
              sweep::WorkerChannel& channel) {
  std::string invalid = sweep::ValidateSweepSpec(options.sweep);
  if (!invalid.empty()) return output.Fail(invalid);

  // Alone, gloo still rendezvous through a store: an in-process one will do.
  std::unique_ptr<::gloo::rendezvous::Store> store;
  if (options.print_table) {
    store = std::make_unique<::gloo::rendezvous::HashStore>();
  } else {
    store = std::make_unique<WorkerStore>(channel);
  }

  std::string error;
  std::unique_ptr<GlooCollectiveBackend> backend =
      GlooCollectiveBackend::Connect(options, *store, error);
  if (!backend) return output.Fail(error);
  output.Note("transport " + backend->transport_description());
  // What gloo actually opened: collectives.transport judges this one.
  output.Note(backend->DeviceNote());
  if (backend->MemoryCapBytes() < options.sweep.max_bytes) {
    output.Note("sweep capped at " + std::to_string(backend->MemoryCapBytes()) +
                " bytes: host buffers limited by " +
                (options.memory_cap_bytes > 0
                     ? "--memory-cap " + std::to_string(options.memory_cap_bytes)
                     : std::string("the 1 GiB default")) +
                " and MemAvailable " + std::to_string(ReadMemAvailableBytes()) + " bytes / 8");
  }

  return sweep::SweepAndReport(*backend, options.operation, options.sweep, output);
}

}  // namespace
}  // namespace clustercert::workers::gloo_worker

int main(int argc, char** argv) {
  clustercert::sweep::WorkerChannel channel(clustercert::sweep::ReserveStdoutForProtocol(), stdin);
  return clustercert::sweep::RunWorkerMain(argc, argv, "collective-worker-gloo", "gloo", channel,
                                           clustercert::workers::gloo_worker::RunWorker);
}
