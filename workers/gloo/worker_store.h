#pragma once

// WorkerStore: gloo's rendezvous store over the worker's line protocol with
// the node-agent (collective/worker_protocol.h). gloo publishes each rank's
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

#include "collective/worker_failure.h"
#include "collective/worker_protocol.h"

namespace clustercert::workers::gloo_worker {

// Thrown when the agent closed the worker's stdin while a key was awaited:
// the job is gone and the worker must exit.
class StoreClosed : public collective::WorkerFailure {
 public:
  using collective::WorkerFailure::WorkerFailure;
};

class WorkerStore : public ::gloo::rendezvous::Store {
 public:
  explicit WorkerStore(collective::WorkerChannel& channel) : channel_(channel) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  // Values already fetched by wait(), so get() after wait() costs no second
  // round trip to the agent.
  std::vector<char> Fetch(const std::string& key);

  collective::WorkerChannel& channel_;
  std::map<std::string, std::vector<char>> fetched_;
};

}  // namespace clustercert::workers::gloo_worker
