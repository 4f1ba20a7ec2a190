#include "agent/service/pooled_call.h"

#include <utility>

namespace clustercert::agent {

void SubmitUnlessGaveUp(WorkerPool& pool, std::function<bool()> gave_up, std::function<void()> work,
                        std::function<void()> dropped) {
  pool.Submit([gave_up = std::move(gave_up), work = std::move(work), dropped = std::move(dropped)] {
    gave_up() ? dropped() : work();
  });
}

}  // namespace clustercert::agent
