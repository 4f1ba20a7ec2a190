#pragma once

// WorkerStore: gloo's rendezvous store over the worker's line protocol with
// the node-agent (sweep/worker_protocol.h). gloo publishes each rank's
// pair addresses with set() and reads its peers' with wait() + get(); the
// agent answers a `get` once the key exists anywhere in the job, since the
// controller relays keys between nodes. The channel has no deadline of its
// own: a rank that never publishes is ended by the agent's job timeout.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sweep/worker_failure.h"
#include "sweep/worker_protocol.h"

namespace clustercert::workers::gloo_worker {

// Thrown when the agent closed the worker's stdin while a key was awaited:
// the job is gone and the worker must exit.
class StoreClosed : public sweep::WorkerFailure {
 public:
  using sweep::WorkerFailure::WorkerFailure;
};

class WorkerStore : public ::gloo::rendezvous::Store {
 public:
  explicit WorkerStore(sweep::WorkerChannel& channel) : channel_(channel) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  // Values already fetched by wait(), so get() after wait() costs no second
  // round trip to the agent.
  std::vector<char> Fetch(const std::string& key);

  sweep::WorkerChannel& channel_;
  std::map<std::string, std::vector<char>> fetched_;
};

}  // namespace clustercert::workers::gloo_worker
