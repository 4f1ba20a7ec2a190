#include "workers/gloo/worker_store.h"

namespace clustercert::workers::gloo_worker {

void WorkerStore::set(const std::string& key, const std::vector<char>& data) {
  fetched_.erase(key);
  channel_.Set(key, data);
}

std::vector<char> WorkerStore::Fetch(const std::string& key) {
  auto found = fetched_.find(key);
  if (found != fetched_.end()) return found->second;
  std::optional<std::vector<char>> value = channel_.Get(key);
  if (!value) {
    throw StoreClosed("the node-agent closed the worker's stdin while rendezvous key '" + key +
                      "' was awaited: the job was cancelled or the agent died; see the agent's "
                      "log for why");
  }
  return fetched_.emplace(key, std::move(*value)).first->second;
}

std::vector<char> WorkerStore::get(const std::string& key) { return Fetch(key); }

void WorkerStore::wait(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) Fetch(key);
}

// The channel blocks until the agent answers; the agent's job deadline is
// what bounds a wait for a rank that never comes.
void WorkerStore::wait(const std::vector<std::string>& keys,
                       const std::chrono::milliseconds& timeout) {
  wait(keys);
}

}  // namespace clustercert::workers::gloo_worker
