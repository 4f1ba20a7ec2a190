#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace clustercert {

// A fixed set of threads running submitted tasks in order of arrival.
//
// gRPC callback handlers must never block a gRPC thread, so handlers hand
// their work (sysfs walks, verbs queries, later peer tests) to a pool and
// finish the reactor from it. The destructor drains queued tasks and joins.
class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(std::function<void()> task);

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace clustercert
