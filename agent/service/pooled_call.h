#pragma once

#include <functional>

#include "common/worker_pool.h"

namespace clustercert::agent {

// Queues a call's work on the pool, unless its caller is gone by the time a
// worker takes it: then `dropped` runs instead of `work` (and answers the
// call). A caller that gave up (cancelled, or its deadline passed while the
// call waited behind others) would never read the answer, and running its
// work anyway made the calls queued after it wait: 400 GetInventory calls
// with 1 s deadlines kept the next PrepareEndpoint waiting 21 s.
//
// `gave_up` is asked on the worker, just before `work` would run.
void SubmitUnlessGaveUp(WorkerPool& pool, std::function<bool()> gave_up, std::function<void()> work,
                        std::function<void()> dropped);

}  // namespace clustercert::agent
